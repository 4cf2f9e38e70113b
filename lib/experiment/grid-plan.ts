/**
 * Experiment runs, the grid's plan (`merit grid --plan`; issue 22 §1): before any model loads, how
 * many LLM calls the grid will compute, how many the call cache will answer, and upper bounds on the
 * prompt and generated tokens of the computed ones. No model, no embedder and no native LLM runtime
 * are loaded; the oracle re-scores the initial SQL (and replayed attempts) as a run would; nothing is
 * written (the call cache is opened read-only).
 *
 * How calls are counted, from the episode loop itself (lib/repair/episode.ts, run through
 * `runEpisode` with a backend that answers only from the call cache):
 * - An episode whose initial attempt is terminal under the feedback regime makes no call; a method
 *   that does not repair (`zeroshot`) makes none. Otherwise, with K = max_repair_steps, an episode
 *   makes at most K repair calls, and a reflecting method (`reflexion`) a reflection before the first
 *   repair and after every failed one: at most 2K + 1 calls (none when K = 0).
 * - A memoryless method's prompts are built from the query, the schema, the attempts so far and its
 *   own reflections only — never from the stream seed or position — so its episode of one query is
 *   the same calls in every stream order. So is a memory method's episode while its memory is
 *   necessarily empty (no earlier episode of the stream can have stored an entry: every episode
 *   before it was initially correct, or was replayed from the cache and stored nothing; the
 *   transductive pre-pass seeds entries before the stream): the retrieval returns nothing and the
 *   repair prompt equals the memoryless one byte for byte (prompts.ts `repairPrompt`).
 * - Such an episode is replayed from the call cache as far as the cache holds its calls (those are
 *   "answered by the cache"); the first call the cache does not hold and everything after it will be
 *   computed, and every episode reaching the same first uncomputed call (same cache key: same backend
 *   identity and prompt) shares them — counted once, under the first stream of the grid that reaches
 *   it, and as "repeats" (answered by the cache in the run) under the others.
 * - Any other memory episode (its memory may hold entries) is counted in full as computed, as its
 *   own: its prompts hold the retrieved entries, which cannot be known without the embedder and the
 *   model.
 * - A method's hooks (lib/methods/hooks.ts): the calls of their declared kinds, at most `most` of
 *   each per episode, are counted in full as computed for every episode their scope (`per`) allows
 *   (the call cache is not consulted for them) — `computed` as if no repair succeeds, `computedAtMost`
 *   whatever happens; a method with a memory hook counts every repair episode in full (its
 *   memory may hold notes from the second episode on); a classify hook's labels are part of the
 *   replayed prompts. With no repair succeeding and every declared call made, `computed` is exact.
 *   A `step` hook's texts change the repair prompts of every repair episode, so its repair episodes
 *   are counted in full as computed too (exact when the hook returns a text after every failure).
 *   So are a `propose` hook's (its SQL, not the greedy repair's, is what later prompts show); its
 *   sampled kinds are declared calls like any other (`most: { per_repair: n }`: n·K per episode).
 * - Under a feedback regime whose verdict of an attempt may differ between stream orders (its
 *   `perStream`: `noisy_oracle`'s draws hash the seed), each order's episodes are replayed with its own
 *   verdicts: the noise may reject an initially correct query in one order (which then repairs it)
 *   and accept it in another. A noise-accepted attempt ends the episode, so every order's prompts are a
 *   prefix of the all-rejected chain and the cache keys still group them.
 * - Under a feedback regime that calls the model (`llm_judge`), whether an attempt ends the episode
 *   is the judge's answer: every episode is counted in full as computed — K repairs (2K + 1 with
 *   reflections), the hooks' declared calls and a judge call per attempt (K + 1).
 * Two counts come out. `computed` assumes that no repair succeeds in an episode the cache does not
 * already answer (every such episode runs to K; an unrepaired episode stores a negative where the
 * writer keeps negatives, and nothing where it keeps positives only, so `dynamic_rag`'s and
 * `positive_only`'s memory stays empty). It is then exact when no memory episode whose memory may
 * hold entries repeats a call of another episode — true of a grid with one memory method that keeps
 * negatives (its orders' memories differ; an entry is retrieved whenever the memory is not empty, the
 * type filter falling back to the legal pool, METHOD.md §5.5), and of the demo grid. Memory methods
 * that differ only in how they filter or rank (the ablations) see the same memory on one stream
 * order, and while their retrievals agree — the one entry at the second initially failed query;
 * `merit` and `no_type_filter` until a type holds min_typed_pool entries — their prompts are the
 * same bytes (a prompt shows an entry's content and content-hash id, not the method or the stream),
 * so the run computes fewer. `computedAtMost` is an upper bound whatever the repairs do: an episode
 * whose outcome is not known may have stored an entry, so the memory episodes after it count in
 * full. The token bounds are those of `computedAtMost` calls.
 * @module
 */
import { existsSync } from "node:fs";
import { missingDatabases } from "../data/index.ts";
import type { Dataset, Example } from "../data/types.ts";
import { sha256File } from "../file-hash.ts";
import { contentHash } from "../hash.ts";
import { callKey, openCacheDatabase, rowHash } from "../llm/call-cache.ts";
import { llamaIdentity } from "../llm/llama-identity.ts";
import type { BackendIdentity, ChatBackend, GenerateRequest, GenerateResult } from "../llm/types.ts";
import { finalizeEpisode } from "../memory/finalize.ts";
import { callMost, episodeCallBound, extraOutputBound, getMethod, hookCallBound, isKitHook, isMethodName, methodDefinition, noteMemoryOf, underSettings, type MethodHooks, type MethodSpec, type StepHook } from "../methods/index.ts";
import { Oracle, protocolIdOf, type Verdict } from "../oracle/oracle.ts";
import { runEpisode, type EpisodeResult } from "../repair/episode.ts";
import { getFeedback } from "../methods/feedback.ts";
import { executorOf, type ExperimentConfig } from "./config.ts";
import { loadConfigDataset, type ConfigDatasetOptions } from "./database-set.ts";
import type { Stream } from "./grid.ts";
import { readInitialCache, type InitialCache } from "./initial-cache.ts";
import { episodeSpecOf, type RunSpec } from "./run.ts";
import { buildStream } from "./stream.ts";
import { transductivePrepassEntries } from "./transductive.ts";

export { episodeCallBound };

/**
 * Methods no table of the paper reads (Tables 1–5, lib/analysis/paper-layout.ts and
 * data/paper-numbers.json): the non-causal control and `zeroshot` (no repair call; the initial EX is
 * the shared initial cache's). `make reproduce` runs them only with CONTROLS=1.
 */
export const CONTROL_METHODS: readonly string[] = ["zeroshot", "transductive_batch"];

/**
 * The peer memory methods (METHOD.md §13, lib/methods/peers/: every registered method that declares a
 * citation), which `make reproduce PEERS=1` adds to the grid (Makefile PEER_METHODS) for the peers
 * table and the budget-matched figure of `merit report` (lib/analysis/table-peers.ts).
 */
export const PEER_METHODS: readonly string[] = ["reasoning_bank", "reasoning_bank_oracle", "dynamic_cheatsheet", "dynamic_cheatsheet_rs", "awm", "expel_online", "exprag", "exprecent", "error_fix_memory"];

/** Who reads a method's runs (the plan's role column). */
export type MethodRole = "paper" | "control" | "peer" | "study";

/** The role of `method`: one of the paper's (REPRODUCE_METHODS), a control, a peer (declares a citation), else a study's own. */
function methodRole(method: MethodSpec): MethodRole {
  if (CONTROL_METHODS.includes(method.canonicalName)) return "control";
  if (REPRODUCE_METHODS.includes(method.canonicalName)) return "paper";
  if (isMethodName(method.canonicalName) && methodDefinition(method.canonicalName).citation !== undefined) return "peer";
  return "study";
}

/** The role column's words. */
const ROLE_TEXT: Record<MethodRole, string> = { paper: "paper", control: "control (no paper table reads it)", peer: "peer (METHOD.md §13)", study: "study (beyond the paper)" };

/** One method's share of the plan, summed over its streams. */
export interface MethodPlan {
  method: string;
  streams: number;
  /** Its calls do not depend on the stream order (a memoryless method: no MERIT-style memory and no memory hook). */
  orderIndependent: boolean;
  /** What reads its runs: the paper's tables, none (CONTROL_METHODS), the peers table (a method declaring a citation), or only a study's own report. */
  role: MethodRole;
  /** Episodes over its streams, and those whose initial attempt is not terminal. */
  episodes: number;
  repairEpisodes: number;
  /**
   * The calls the run computes for these streams if no repair succeeds outside what the call cache
   * already answers (calls shared with an earlier stream of the grid are counted under that stream).
   */
  computed: number;
  /** Calls the call cache already holds (replayed), in that case. */
  cached: number;
  /** Calls equal to calls of an earlier stream of the grid (the cache answers them in the run), in that case. */
  repeats: number;
  /** The most calls the run computes for these streams, whatever the repairs do. */
  computedAtMost: number;
}

/** The plan of a grid. */
export interface GridPlan {
  streams: number;
  methods: MethodPlan[];
  /** Computed calls if no repair succeeds outside the cache's replays (then exact; MethodPlan.computed). */
  computed: number;
  /** Computed calls at most, whatever the repairs do. */
  computedAtMost: number;
  cached: number;
  repeats: number;
  /** Upper bounds on the tokens of at most `computedAtMost` calls: max_input_tokens per call, and each call's output limit (its kind's declared maxOutputTokens, else max_output_tokens). */
  promptTokensBound: number;
  outputTokensBound: number;
  maxInputTokens: number;
  maxOutputTokens: number;
  maxRepairSteps: number;
  /** Why the call cache was not consulted (every planned call then counts as not cached), or null. */
  cacheNotConsulted: string | null;
}

/** A read-only view of the call cache: the stored result of a request, or null. */
export type CacheLookup = (request: GenerateRequest) => GenerateResult | null;

/** What the plan reads; the CLI's loader (`planGrid`) builds it, tests may pass their own. */
export interface PlanInputs {
  config: ExperimentConfig;
  streams: readonly Stream[];
  limit: number | null;
  dataset: Dataset;
  initialCache: InitialCache;
  score(example: Example, sql: string): Promise<Verdict>;
  /** null: the cache is not consulted (nothing counts as cached). */
  lookup: CacheLookup | null;
  /** The cache keys' backend identity (null with `lookup` null: keys fall back to the request alone). */
  identity: BackendIdentity | null;
  cacheNotConsulted?: string | null;
}

/** Thrown by the replay backend at the first call the cache does not hold. */
class NotCached extends Error {
  readonly request: GenerateRequest;
  constructor(request: GenerateRequest) {
    super("not in the call cache");
    this.request = request;
  }
}

/** How a memoryless (or empty-memory) episode replays from the call cache. */
type Replay =
  | { kind: "terminal" }
  | { kind: "replayed"; hits: number; result: EpisodeResult }
  | { kind: "stopped"; hits: number; key: string };

/** Plans the calls of `streams` (pure apart from the oracle and the cache reads it is given). */
export async function computePlan(input: PlanInputs): Promise<GridPlan> {
  const { config, dataset, initialCache } = input;
  const k = config.max_repair_steps;
  const replays = new Map<string, Promise<Replay>>();
  // The first uncomputed call of every group already counted, in each scenario (module comment).
  const seen = { fail: new Set<string>(), bound: new Set<string>() };
  const plans = new Map<string, MethodPlan>();
  // Generated tokens of the computedAtMost calls, each at its kind's declared output limit (METHOD.md §12.4).
  const cfgOut = config.decoding.max_output_tokens;
  let outputTokensAtMost = 0;
  const regime = getFeedback(config.feedback_regime);
  const judging = regime.call ?? null;

  const keyOf = (request: GenerateRequest) => (input.identity ? callKey(input.identity, request) : contentHash({ request: { prompt: request.prompt, maxOutputTokens: request.maxOutputTokens, ...(request.sampling ? { sampling: { temperature: request.sampling.temperature, seed: request.sampling.seed } } : {}) } }));

  for (const s of input.streams) {
    const method = underSettings(getMethod(s.method), config.retrieval);
    const plan = plans.get(s.method) ?? { method: s.method, streams: 0, orderIndependent: method.memory === null && method.hooks.memory === undefined, role: methodRole(method), episodes: 0, repairEpisodes: 0, computed: 0, cached: 0, repeats: 0, computedAtMost: 0 };
    plans.set(s.method, plan);
    plan.streams += 1;
    const spec: RunSpec = { config, method: s.method, seed: s.seed, limit: input.limit };
    const stream = buildStream(dataset, initialCache, s.seed, input.limit ?? undefined, config.subset, config.order);
    plan.episodes += stream.length;
    if (!method.repairs) continue;
    if (judging) {
      // A regime that calls the model decides termination itself: every episode counted in full —
      // its repairs, its hooks' declared calls and a judge call per attempt — as computed.
      const full = stream.length * (episodeCallBound(method, k) + hookCallBound(method, k) + judging.perAttempt * (k + 1));
      outputTokensAtMost += stream.length * (episodeCallBound(method, k) * cfgOut + extraOutputBound(method.hooks, k, cfgOut) + judging.perAttempt * (k + 1) * (judging.maxOutputTokens ?? cfgOut));
      plan.repairEpisodes += stream.length;
      plan.computed += full;
      plan.computedAtMost += full;
      continue;
    }
    const bound = kitBound(method, k);
    const own = { hooks: ownHooks(method) };
    const writes = method.memory?.writes ?? null;
    // A method's hooks: their declared calls in every episode their scope (`per`) allows — a write
    // hook runs after each one, initially correct or not — counted in full as computed: in an
    // initially accepted episode the kinds allowed there; in a repair episode, if no repair succeeds
    // the kinds allowed in a failed one, at most every kind. A memory hook's memory may hold notes
    // from the first episode on, so its repair episodes are counted in full too.
    const extra = {
      accepted: hookCallBound(own, k, { initiallyAccepted: true, finallyAccepted: true }),
      failed: hookCallBound(own, k, { initiallyAccepted: false, finallyAccepted: false }),
      any: hookCallBound(own, k),
    };
    // A note memory may show notes from the first episode on, a step hook's texts change every
    // repair prompt after the first failure, and a propose hook's SQL (not the greedy repair's) is
    // what later prompts show: no such method's repairs are the memoryless twin's prompts (so never
    // the cache's answers or repeats of another method's calls): counted in full. (The kit's own
    // step, Reflexion's reflect(), is replayed with the twin: its prompts are the kit's.)
    const hookPrompts = noteMemoryOf(method) !== undefined || (method.hooks.step !== undefined && kitStep(method) === undefined) || method.hooks.propose !== undefined;
    // Whether the memory is necessarily empty at the next episode (memoryless methods: always), in
    // each scenario: `fail` (no repair the cache does not answer succeeds) and `bound` (whatever happens).
    const prepass = method.memory?.transductivePrepass === true && transductivePrepassEntries(dataset, stream, s.seed, s.method, method.memory.writes).length > 0;
    const empty = { fail: !prepass && !hookPrompts, bound: !prepass && !hookPrompts };
    // The memoryless twin: same prompts while the retrieval returns nothing (with the method's own
    // classifier, whose labels the prompts show; without its memory hook and extra calls).
    const step = kitStep(method);
    const twin: MethodSpec = { ...method, memory: null, hooks: { ...(method.hooks.classify ? { classify: method.hooks.classify } : {}), ...(step ? { step, calls: step.calls } : {}) } };
    const classifier = method.hooks.classify ? `${registrationKey(method)}` : "";
    for (const item of stream) {
      // A regime whose verdicts differ between orders (noisy_oracle's draws) is replayed per order:
      // an initially correct query its noise rejects in one order is repaired there only.
      const memo = `${step?.name ?? ""}\0${classifier}\0${item.example.id}${regime.perStream ? `\0${s.seed}` : ""}`;
      let replay = replays.get(memo);
      if (replay === undefined) {
        replay = replayEpisode(episodeSpecOf(spec, twin, dataset, item), input, keyOf);
        replays.set(memo, replay);
      }
      const r = await replay;
      if (r.kind === "terminal") {
        plan.computed += extra.accepted;
        plan.computedAtMost += extra.accepted;
        outputTokensAtMost += extraOutputBound(own.hooks, k, cfgOut, { initiallyAccepted: true, finallyAccepted: true });
        continue;
      }
      plan.computed += extra.failed;
      plan.computedAtMost += extra.any;
      outputTokensAtMost += extraOutputBound(own.hooks, k, cfgOut);
      plan.repairEpisodes += 1;
      for (const scenario of ["fail", "bound"] as const) {
        const add = (field: "computed" | "cached" | "repeats", n: number) => {
          if (scenario === "bound") {
            if (field === "computed") {
              plan.computedAtMost += n;
              outputTokensAtMost += n * cfgOut; // reflections and repairs: the run's max_output_tokens
            }
          } else plan[field] += n;
        };
        if (!empty[scenario]) {
          add("computed", bound); // its memory may hold entries: every call counted, its own
          continue;
        }
        add("cached", r.hits);
        if (r.kind === "replayed") {
          // Answered by the cache to the end: what it stored is known.
          if (writes && finalizeEpisode(r.result.finished, writes) !== null) empty[scenario] = false;
          continue;
        }
        const left = bound - r.hits;
        if (seen[scenario].has(r.key)) add("repeats", left);
        else {
          seen[scenario].add(r.key);
          add("computed", left);
        }
        // Its outcome is not known: in `fail` it is not repaired, so it stores a negative where the
        // writer keeps negatives; in `bound` it may store an entry.
        if (writes && (scenario === "bound" || writes.writesNegative)) empty[scenario] = false;
      }
    }
  }
  const methods = [...plans.values()];
  const sum = (f: (m: MethodPlan) => number) => methods.reduce((n, m) => n + f(m), 0);
  const computedAtMost = sum((m) => m.computedAtMost);
  return {
    streams: input.streams.length,
    methods,
    computed: sum((m) => m.computed),
    computedAtMost,
    cached: sum((m) => m.cached),
    repeats: sum((m) => m.repeats),
    promptTokensBound: computedAtMost * config.decoding.max_input_tokens,
    outputTokensBound: outputTokensAtMost,
    maxInputTokens: config.decoding.max_input_tokens,
    maxOutputTokens: config.decoding.max_output_tokens,
    maxRepairSteps: k,
    cacheNotConsulted: input.cacheNotConsulted ?? (input.lookup ? null : "no call cache given"),
  };
}

/** The method's step when it is the kit's own (Reflexion's `reflect()`), whose calls the plan replays like repairs; undefined otherwise. */
function kitStep(method: Pick<MethodSpec, "hooks">): StepHook | undefined {
  const step = method.hooks.step;
  return step !== undefined && isKitHook(step) ? step : undefined;
}

/** The method's hooks with the kit step's call kinds left out (the hooks' own declared calls, counted apart from the replayed ones). */
function ownHooks(method: Pick<MethodSpec, "hooks">): MethodHooks {
  const kinds = new Set(Object.keys(kitStep(method)?.calls ?? {}));
  return { ...method.hooks, calls: Object.fromEntries(Object.entries(method.hooks.calls ?? {}).filter(([kind]) => !kinds.has(kind))) };
}

/**
 * The most calls of one episode whose initial attempt is not terminal that the plan replays: K
 * repairs, and the kit step's calls (Reflexion: K + 1 reflections, 2K + 1 in all); none for a
 * method that does not repair or when K = 0.
 */
export function kitBound(method: Pick<MethodSpec, "repairs" | "hooks">, k: number): number {
  const repairs = episodeCallBound(method, k);
  if (repairs === 0) return 0;
  return repairs + Object.values(kitStep(method)?.calls ?? {}).reduce((n, d) => n + callMost(d, k), 0);
}

/** What tells two methods' classify hooks apart in the replay memo: the method that registered it. */
function registrationKey(method: MethodSpec): string {
  return `${method.canonicalName}\0${method.hooks.classify?.name ?? ""}`;
}

/** Runs one memoryless episode with a backend that answers only from the cache. */
async function replayEpisode(spec: ReturnType<typeof episodeSpecOf>, input: PlanInputs, keyOf: (r: GenerateRequest) => string): Promise<Replay> {
  let hits = 0;
  const backend: ChatBackend = {
    identity: input.identity ?? { kind: "plan", model: "", modelHash: "", params: {} },
    async generate(request) {
      const found = input.lookup?.(request) ?? null;
      if (found === null) throw new NotCached(request);
      hits += 1;
      return found;
    },
    async close() {},
  };
  try {
    const result = await runEpisode(spec, { backend, score: input.score });
    return result.calls.length === 1 ? { kind: "terminal" } : { kind: "replayed", hits, result };
  } catch (error) {
    if (error instanceof NotCached) return { kind: "stopped", hits, key: keyOf(error.request) };
    throw error;
  }
}

/** Loads what a plan reads — the config's dataset and databases, the initial cache, the oracle, the call cache read-only — and plans `streams`. */
export async function planGrid(config: ExperimentConfig, streams: readonly Stream[], opts: { limit?: number | null; data?: ConfigDatasetOptions; log?: (line: string) => void; consultCache?: boolean } = {}): Promise<GridPlan> {
  const log = opts.log ?? (() => undefined);
  const { dataset, warnings } = await loadConfigDataset(config, opts.data ?? {});
  for (const line of warnings) log(line);
  const missing = missingDatabases(dataset);
  if (missing.length > 0) log(`warning: no database for ${missing.map((m) => `${m.dbId} (${m.examples})`).join(", ")}; those queries are dropped from the stream`);
  const initialCache = readInitialCache(config.initial_cache, dataset, protocolIdOf(config.dataset, config.protocol));
  const { lookup, identity, reason, close } = opts.consultCache === false ? { lookup: null, identity: null, reason: "not asked to", close: () => undefined } : await openLookup(config);
  const oracle = new Oracle({ dataset: config.dataset, databases: dataset.databases, protocol: config.protocol, timeoutMs: config.sql_timeout_s * 1000, jobs: 2, engine: executorOf(config) });
  try {
    return await computePlan({ config, streams, limit: opts.limit ?? null, dataset, initialCache, score: (example, sql) => oracle.score(example, sql), lookup, identity, cacheNotConsulted: reason });
  } finally {
    await oracle.close();
    close();
  }
}

/**
 * The call cache, read-only, keyed as the run keys it: the llama backend's identity is built from
 * the config and the GGUF's SHA-256 (no model is loaded). An OpenAI-compatible backend's identity
 * needs the server's tokenizer or engine settings, so its cache is not consulted.
 */
async function openLookup(config: ExperimentConfig): Promise<{ lookup: CacheLookup | null; identity: BackendIdentity | null; reason: string | null; close: () => void }> {
  const none = (reason: string) => ({ lookup: null, identity: null, reason, close: () => undefined });
  const m = config.model;
  const d = config.decoding;
  if (m.backend === "simulated") return none("the simulated engine answers every call itself from (seed, prompt), at no cost");
  if (m.backend !== "llama") return none("the call cache is consulted only for the llama backend (an OpenAI-compatible backend's cache keys need its server settings)");
  if (!existsSync(config.call_cache)) return none(`${config.call_cache} does not exist yet (an empty cache)`);
  if (!existsSync(m.path)) return none(`model.path ${m.path} does not exist, and the cache's keys hold its SHA-256`);
  const identity = llamaIdentity({ modelPath: m.path, modelHash: await sha256File(m.path), maxInputTokens: d.max_input_tokens, truncate: d.truncate, repetitionPenalty: d.repetition_penalty, seed: d.seed, customTemplate: false, mode: m.mode });
  const db = openCacheDatabase(config.call_cache, { readonly: true });
  const select = db.prepare<[string], { text: string; prompt_tokens: number; output_tokens: number; truncated_prompt_tokens: number; row_hash: string }>("SELECT text, prompt_tokens, output_tokens, truncated_prompt_tokens, row_hash FROM calls WHERE key = ?");
  const lookup: CacheLookup = (request) => {
    const key = callKey(identity, request);
    const row = select.get(key);
    // A damaged row is not an answer: the run refuses it, the plan counts the call as computed.
    if (!row || rowHash({ key, text: row.text, promptTokens: row.prompt_tokens, outputTokens: row.output_tokens, truncatedPromptTokens: row.truncated_prompt_tokens }) !== row.row_hash) return null;
    return { text: row.text, promptTokens: row.prompt_tokens, outputTokens: row.output_tokens, truncatedPromptTokens: row.truncated_prompt_tokens, cached: true };
  };
  return { lookup, identity, reason: null, close: () => db.close() };
}

/** The plan as lines for stdout. */
export function gridPlanLines(plan: GridPlan): string[] {
  const int = (n: number) => n.toLocaleString("en-US");
  const lines = [`plan: ${plan.streams} stream${plan.streams === 1 ? "" : "s"}, K = ${plan.maxRepairSteps} (nothing loaded, nothing written)`];
  lines.push("| method | streams | order-independent | episodes | need repair | computed if no repair succeeds | already in the call cache | repeats of other streams' calls | computed at most | role |");
  lines.push("|---|---|---|---|---|---|---|---|---|---|");
  for (const m of plan.methods) {
    lines.push(`| ${m.method} | ${m.streams} | ${m.orderIndependent ? "yes" : "no"} | ${int(m.episodes)} | ${int(m.repairEpisodes)} | ${int(m.computed)} | ${int(m.cached)} | ${int(m.repeats)} | ${int(m.computedAtMost)} | ${ROLE_TEXT[m.role]} |`);
  }
  lines.push(`computed calls: ${int(plan.computed)} if no repair succeeds outside the cache's replays, at most ${int(plan.computedAtMost)} whatever the repairs do (the first is exact unless memory methods of one stream order retrieve alike: merit grid --help)`);
  lines.push(`answered by the call cache: ${int(plan.cached)} already in it${plan.cacheNotConsulted ? ` (not consulted: ${plan.cacheNotConsulted})` : ""}, ${int(plan.repeats)} repeats within the grid`);
  lines.push(`tokens of at most ${int(plan.computedAtMost)} computed calls: at most ${int(plan.promptTokensBound)} prompt (${int(plan.maxInputTokens)} max_input_tokens per call) and ${int(plan.outputTokensBound)} generated (${int(plan.maxOutputTokens)} max_output_tokens per call, a declared call kind's own limit for its calls)`);
  const controls = plan.methods.filter((m) => m.role === "control").map((m) => m.method);
  if (controls.length > 0) lines.push(`controls (no table of the paper reads them): ${controls.join(", ")}`);
  return lines;
}

/**
 * The methods `make reproduce` runs for Tables 1–5 (Makefile PAPER_METHODS; CONTROL_METHODS join
 * them with CONTROLS=1).
 */
export const REPRODUCE_METHODS: readonly string[] = ["iterative", "reflexion", "dynamic_rag", "merit", "merit_typerel", "positive_only", "no_type_filter", "no_dense_rerank", "no_bm25", "random_same_type", "cross_database_only"];

/** One method's calls in `closedFormPlan`. */
export interface ClosedFormMethod {
  method: string;
  /** Computed calls at most, whatever the repairs do (GridPlan.computedAtMost). */
  computedAtMost: number;
  /** Computed calls if no repair succeeds (GridPlan.computed; an upper bound with several memory methods that keep negatives). */
  computed: number;
  /** Calls with every stream counted in full (no call shared across streams). */
  everyStream: number;
}

/** `closedFormPlan`'s counts, summed over the methods. */
export interface ClosedFormPlan {
  methods: ClosedFormMethod[];
  computedAtMost: number;
  computed: number;
  everyStream: number;
}

/**
 * The grid plan's counts from the number of initially failed queries alone, the same rules as
 * `computePlan` (module comment) with an empty call cache, for a grid whose inputs are not at hand
 * (the paper grid: README "The full grid on one GPU"). Per method, in the order given, over
 * `orders` stream orders, with B = kitBound(method, K) calls per repaired episode:
 * - a memoryless method: its F episodes are the same calls in every order, B·F once; 0 when an
 *   earlier method of the list with the same kit step (Reflexion's reflect, or none) already counted them;
 * - a memory method seeded by the transductive pre-pass: B·F per order, every episode its own;
 * - any other memory method: its memory is necessarily empty at each order's first initially failed
 *   query, whose episode is the memoryless twin's (0 when such a twin came earlier in the list, else
 *   B, an upper bound); the other F − 1 per order are its own: B·(F − 1). In `computed` (no repair
 *   succeeds) a writer that keeps positives only never stores, so all its episodes are the twin's.
 * `computePlan` on real inputs gives these numbers when every stream order has F failures (its
 * test checks the two agree on the bundled data).
 */
export function closedFormPlan(opts: { methods: readonly string[]; failed: number; k: number; orders: number }): ClosedFormPlan {
  const { failed, k, orders } = opts;
  if (!Number.isInteger(failed) || failed < 0 || !Number.isInteger(k) || k < 0 || !Number.isInteger(orders) || orders < 1) throw new RangeError(`closedFormPlan: failed, k must be integers ≥ 0 and orders ≥ 1 (got ${failed}, ${k}, ${orders})`);
  const twins = new Set<string>(); // kit steps ("" for none) whose memoryless episodes are already counted
  const methods: ClosedFormMethod[] = [];
  for (const name of opts.methods) {
    const m = getMethod(name);
    const b = kitBound(m, k);
    const everyStream = orders * failed * b;
    if (b === 0 || failed === 0) {
      methods.push({ method: name, computedAtMost: 0, computed: 0, everyStream });
      continue;
    }
    const stepKey = kitStep(m)?.name ?? "";
    const twin = twins.has(stepKey);
    if (m.memory === null) {
      const n = twin ? 0 : failed * b;
      twins.add(stepKey);
      methods.push({ method: name, computedAtMost: n, computed: n, everyStream });
    } else if (m.memory.transductivePrepass) {
      methods.push({ method: name, computedAtMost: everyStream, computed: everyStream, everyStream });
    } else {
      const first = twin ? 0 : b;
      const atMost = orders * (first + (failed - 1) * b);
      const computed = m.memory.writes.writesNegative ? atMost : twin ? 0 : failed * b;
      methods.push({ method: name, computedAtMost: atMost, computed, everyStream });
    }
  }
  const sum = (f: (m: ClosedFormMethod) => number) => methods.reduce((n, m) => n + f(m), 0);
  return { methods, computedAtMost: sum((m) => m.computedAtMost), computed: sum((m) => m.computed), everyStream: sum((m) => m.everyStream) };
}

/**
 * The paper's numbers the paper-grid estimate starts from (arXiv 2608.05906; METHOD.md §9): initial
 * failures per dataset (Table 3: Spider 1,034 − 609, BIRD), tokens per call of one MERIT run (Table
 * 3's cost columns: Spider 5.27 M tokens / 3,419 calls, BIRD 17.6 M / 7,325; initial calls included,
 * shorter than repairs, so low), and generated tokens per call (the paper's cost table: 50 M
 * generated over the 13-method grid, 378,120 calls when every stream is counted).
 */
export const PAPER_GRID = {
  k: 7,
  orders: 3,
  datasets: [
    { dataset: "spider", failed: 425, tokensPerCall: 5.27e6 / 3419 },
    { dataset: "bird", failed: 945, tokensPerCall: 17.6e6 / 7325 },
  ],
  generatedPerCall: 50e6 / 378_120,
  maxInputTokens: 4096,
  maxOutputTokens: 512,
} as const;

/** The paper grid's calls and tokens (README "The full grid on one GPU"). */
export interface PaperGridEstimate {
  datasets: Array<{ dataset: string; failed: number; plan: ClosedFormPlan; controls: ClosedFormPlan }>;
  /** Computed calls at most of `make reproduce` (REPRODUCE_METHODS, both datasets). */
  calls: number;
  /** Estimated tokens: calls × the paper's tokens per call, split into prompt and generated. */
  promptTokens: number;
  generatedTokens: number;
  /** Bounds: calls × max_input_tokens, calls × max_output_tokens. */
  promptTokensBound: number;
  generatedTokensBound: number;
}

/** `closedFormPlan` of `make reproduce` (and of its controls) with the paper's failures, and the token estimate and bounds. */
export function paperGridEstimate(methods: readonly string[] = REPRODUCE_METHODS): PaperGridEstimate {
  const p = PAPER_GRID;
  const datasets = p.datasets.map((d) => ({
    dataset: d.dataset,
    failed: d.failed,
    plan: closedFormPlan({ methods, failed: d.failed, k: p.k, orders: p.orders }),
    controls: closedFormPlan({ methods: CONTROL_METHODS, failed: d.failed, k: p.k, orders: p.orders }),
  }));
  const calls = datasets.reduce((n, d) => n + d.plan.computedAtMost, 0);
  const tokens = datasets.reduce((n, d, i) => n + d.plan.computedAtMost * p.datasets[i].tokensPerCall, 0);
  const generatedTokens = calls * p.generatedPerCall;
  return { datasets, calls, promptTokens: tokens - generatedTokens, generatedTokens, promptTokensBound: calls * p.maxInputTokens, generatedTokensBound: calls * p.maxOutputTokens };
}
