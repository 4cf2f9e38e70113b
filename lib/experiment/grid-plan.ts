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
import type { Dataset, Example } from "../data/types.ts";
import { contentHash } from "../hash.ts";
import { callKey } from "../llm/call-cache.ts";
import type { BackendIdentity, GenerateRequest, GenerateResult } from "../llm/types.ts";
import { finalizeEpisode } from "../memory/finalize.ts";
import { episodeCallBound, extraOutputBound, getMethod, hookCallBound, noteMemoryOf, underSettings, type MethodSpec } from "../methods/index.ts";
import type { Verdict } from "../oracle/oracle.ts";
import { getFeedback } from "../methods/feedback.ts";
import type { ExperimentConfig } from "./config.ts";
import type { Stream } from "./grid.ts";
import type { InitialCache } from "./initial-cache.ts";
import { episodeSpecOf, type RunSpec } from "./run.ts";
import { buildStream } from "./stream.ts";
import { transductivePrepassEntries } from "./transductive.ts";
import { methodRole, type MethodRole } from "./method-roles.ts";
import { kitBound, kitStep, ownHooks } from "./plan-bounds.ts";
import { registrationKey, replayEpisode, type Replay } from "./plan-replay.ts";

export { episodeCallBound };
export { CONTROL_METHODS, PEER_METHODS, REPRODUCE_METHODS } from "./method-roles.ts";
export { kitBound } from "./plan-bounds.ts";
export { closedFormPlan, PAPER_GRID, paperGridEstimate } from "./paper-grid.ts";
export { gridPlanLines, planGrid } from "./grid-plan-load.ts";

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

