/**
 * Analysis stage, shorter runs read off one long run (issue 37 §2; METHOD.md §13.8, "Token-matched
 * Iterative"): for a memoryless method whose episode depends on nothing but its own attempts (the
 * paper's Iterative and Reflexion-style; greedy decoding, so one prompt gets one answer), the episode
 * of a run at K′ ≤ K is the first part of the episode at K: attempt k of the K run is attempt k of the
 * K′ run, and the K′ episode stops at the first accepted attempt or after K′ repairs. So one run at
 * K = 15 gives the per-query outcome and the LLM tokens of every run at K′ = 0..15 (prefixEpisode),
 * Iterative's EX-vs-tokens curve (prefixCurve), and each other method's comparison with Iterative at
 * the K′ whose LLM tokens per query equal its own (tokenMatch, tokenMatchedComparison: linear
 * interpolation between the two integer K′ around it, with the paired query-cluster bootstrap).
 * @module
 */
import { MeritError } from "../errors.ts";
import { readRunJson, readTrajectories } from "../experiment/run-dir.ts";
import type { Trajectory } from "../repair/trajectory.ts";
import { meanStd } from "./aggregate.ts";
import { bootstrapPValue, pairedClusterBootstrap, type BootstrapOptions } from "./bootstrap.ts";
import { runsOf, type RunSummary } from "./run-summary.ts";
import { llmTokensPerQuery } from "./table-peers.ts";

/** The arm name `make reproduce PEERS=1` and `merit demo --peers` give the long Iterative run; `merit report` finds it by this name. */
export const LONG_ITERATIVE_ARM = "iterative_long";

/** K of the long Iterative run of `make reproduce PEERS=1` (issue 37 §2). */
export const LONG_ITERATIVE_K = 15;

/**
 * Interpolation weights are rounded to this many parts (the bootstrap sees the mix as that many
 * copies of each stream order: exact integer sums, the same query draws as every other comparison).
 */
export const WEIGHT_PARTS = 100;

/** A method as its manifest records it (`method_parts`), what {@link assertPrefixMethod} reads (this kit's hooks, or an earlier kit's parts). */
export interface PrefixMethodRecord {
  repairs?: boolean;
  hooks?: { memory?: unknown; classify?: unknown; step?: { name: string }; calls?: Record<string, unknown> };
  /** An earlier kit's parts: a memory (planner, ranker, writer) and steps. */
  planner?: unknown;
  steps?: readonly { name: string }[];
}

/**
 * Refuses (one line) a method whose shorter runs are not prefixes of its long run: one with a memory
 * (MERIT's or a note memory: what a later episode retrieves depends on what earlier episodes of the
 * same run did, which depends on K) or with hooks of its own (a classifier, declared calls; a step
 * hook is not called after the last allowed attempt, so the K run calls it where the K′ run does not).
 * Reflexion's `reflect` step is accepted: a reflection follows every failed attempt whatever K
 * (episode.ts, `afterLast`), so its calls up to attempt K′ are those of the K′ run — except at
 * K′ = 0, where no reflection is made (prefixEpisode).
 */
export function assertPrefixMethod(method: string, record: PrefixMethodRecord | undefined, where: string): void {
  const fix = "give the long run to a memoryless method (iterative, or reflexion), e.g. `merit grid --methods iterative --arm iterative_long --max-repair-steps 15`";
  if (record === undefined) throw new MeritError(`${where}: the manifest of ${method} records no method_parts, so whether its shorter runs are prefixes of it cannot be checked; re-run it with this kit, or ${fix}`);
  const hooks = record.hooks;
  const step = hooks?.step?.name ?? (record.steps ?? []).find((s) => s.name !== "reflect")?.name;
  const ownCalls = Object.keys(hooks?.calls ?? {}).filter((k) => !(hooks?.step?.name === "reflect" && k === "reflection"));
  const why =
    record.planner !== undefined || hooks?.memory !== undefined ? "keeps a memory across episodes"
    : hooks?.classify !== undefined || ownCalls.length > 0 ? "has hooks (a classifier or calls that K changes)"
    : record.repairs === false ? "makes no repairs"
    : step !== undefined && step !== "reflect" ? `has the step ${step}, not known to keep shorter runs as prefixes`
    : null;
  if (why !== null) throw new MeritError(`${where}: ${method} ${why}, so a run at a smaller K is not a prefix of its long run; ${fix}`);
}

/** One query under one stream order at every K′ = 0..K: the oracle's verdict of its final attempt and its LLM tokens. */
export interface PrefixEpisode {
  /** correct[K′]: the final attempt of the K′ episode is correct (the oracle's verdict). */
  correct: boolean[];
  /** tokens[K′]: prompt + output tokens of the K′ episode's LLM calls (every kind). */
  tokens: number[];
}

/**
 * The episode of `t` (a run at K) cut at every K′ = 0..K. Attempt i's verdict is the oracle's (the
 * trajectory's `feedback.oracle_correct`, or its status under the oracle). The K′ episode's calls are
 * the K episode's calls before its (K′+1)-th repair (all of them when it has no more): its repairs up
 * to K′, each followed by its reflection where the method reflects and the attempt failed, and any
 * feedback call of those attempts; at K′ = 0 without the reflections (a run at K = 0 does not reflect).
 */
export function prefixEpisode(t: Trajectory, k: number): PrefixEpisode {
  if (t.repair_steps > k) throw new MeritError(`prefix runs: query ${t.query_id} of (${t.method}, seed ${t.stream_seed}) has ${t.repair_steps} repairs but the run's K is ${k}; pass the run's own K`);
  const oracle = (i: number) => (t.feedback !== undefined ? t.feedback.oracle_correct[i] : t.statuses[i] === "CORRECT");
  const callTokens = t.call_kinds.map((_, i) => t.prompt_tokens[i] + t.output_tokens[i]);
  const repairAt = t.call_kinds.flatMap((kind, i) => (kind === "repair" ? [i] : []));
  if (repairAt.length !== t.repair_steps) throw new MeritError(`prefix runs: query ${t.query_id} of (${t.method}, seed ${t.stream_seed}) records ${t.repair_steps} repair steps but ${repairAt.length} repair calls; the trajectory is not one of a memoryless repair loop`);
  const correct: boolean[] = [];
  const tokens: number[] = [];
  for (let kp = 0; kp <= k; kp++) {
    correct.push(oracle(Math.min(kp, t.repair_steps)));
    const end = kp < repairAt.length ? repairAt[kp] : t.call_kinds.length;
    let sum = 0;
    for (let i = 0; i < end; i++) if (!(kp === 0 && t.call_kinds[i] === "reflection")) sum += callTokens[i];
    tokens.push(sum);
  }
  return { correct, tokens };
}

/** One stream order of the long run at every K′: per query (ascending source_index) its outcome, and the LLM tokens over the run. */
export interface PrefixRun {
  seed: number;
  queryIds: string[];
  /** correct[K′][q] ∈ {0, 1}. */
  correct: number[][];
  /** LLM tokens per query at each K′ (the run's total over its queries). */
  tokensPerQuery: number[];
}

/** The long run's curve on one dataset: every stream order at every K′, and the means over them. */
export interface PrefixCurve {
  dataset: string;
  method: string;
  k: number;
  runs: PrefixRun[];
  /** EX (%) at each K′, mean over stream orders. */
  ex: number[];
  /** LLM tokens per query at each K′, mean over stream orders. */
  tokensPerQuery: number[];
}

/** The curve of the long runs `runs` (one per stream order, one dataset and method, all at `k`). */
export function prefixCurve(runs: readonly { trajectories: readonly Trajectory[]; k: number }[]): PrefixCurve {
  if (runs.length === 0) throw new MeritError("prefix runs: no long run given");
  const first = runs[0].trajectories[0];
  const k = runs[0].k;
  const seen = new Set<number>();
  const out: PrefixRun[] = runs.map((run) => {
    const t0 = run.trajectories[0];
    if (t0 === undefined) throw new MeritError("prefix runs: a long run has no trajectories; finish it before reporting");
    if (t0.dataset !== first.dataset || t0.method !== first.method || run.k !== k) throw new MeritError(`prefix runs: one curve takes the runs of one dataset, method and K; got (${t0.dataset}, ${t0.method}, K ${run.k}) beside (${first.dataset}, ${first.method}, K ${k})`);
    if (seen.has(t0.stream_seed)) throw new MeritError(`prefix runs: (${t0.dataset}, ${t0.method}) has two runs with stream seed ${t0.stream_seed}; pass each run directory once`);
    seen.add(t0.stream_seed);
    const sorted = [...run.trajectories].sort((x, y) => x.source_index - y.source_index);
    const episodes = sorted.map((t) => prefixEpisode(t, k));
    const n = sorted.length;
    return {
      seed: t0.stream_seed,
      queryIds: sorted.map((t) => t.query_id),
      correct: Array.from({ length: k + 1 }, (_, kp) => episodes.map((e) => (e.correct[kp] ? 1 : 0))),
      tokensPerQuery: Array.from({ length: k + 1 }, (_, kp) => episodes.reduce((s, e) => s + e.tokens[kp], 0) / n),
    };
  });
  out.sort((x, y) => x.seed - y.seed);
  const ex = Array.from({ length: k + 1 }, (_, kp) => meanStd(out.map((r) => (100 * r.correct[kp].reduce((s, v) => s + v, 0)) / r.correct[kp].length)).mean);
  const tokensPerQuery = Array.from({ length: k + 1 }, (_, kp) => meanStd(out.map((r) => r.tokensPerQuery[kp])).mean);
  return { dataset: first.dataset, method: first.method, k, runs: out, ex, tokensPerQuery };
}

/**
 * The curves of `method`'s runs among `runs` (run directories with their dataset, method, seed and
 * K), one per dataset in first-seen order: each run's manifest must show a memoryless method
 * ({@link assertPrefixMethod}; `where` names the flag or caller in the one-line refusal).
 */
export function readPrefixCurves(runs: readonly { dir: string; dataset: string; method: string; max_repair_steps: number }[], method: string, where: string): PrefixCurve[] {
  const mine = runs.filter((r) => r.method === method);
  if (mine.length === 0) throw new MeritError(`${where}: no run of method ${JSON.stringify(method)}; run it (e.g. \`merit grid --methods iterative --arm ${LONG_ITERATIVE_ARM} --max-repair-steps ${LONG_ITERATIVE_K}\`) or name another`);
  const datasets = [...new Set(mine.map((r) => r.dataset))];
  return datasets.map((dataset) =>
    prefixCurve(
      mine
        .filter((r) => r.dataset === dataset)
        .map((r) => {
          const manifest = readRunJson(r.dir, "manifest", { fix: "pass directories written by `merit run`" }) as { method_parts?: PrefixMethodRecord };
          assertPrefixMethod(method, manifest.method_parts, `${where} (${r.dir})`);
          return { trajectories: readTrajectories(r.dir), k: r.max_repair_steps };
        }),
    ),
  );
}

/** Where a token budget falls on the curve: between K′ = lower and lower + 1 at weight w (K′* = lower + w); or outside it. */
export type TokenMatch = { within: true; lower: number; weight: number; kStar: number } | { within: false; side: "below" | "above" };

/**
 * The K′ at which the curve's LLM tokens per query equal `target`, by linear interpolation between
 * the two integer K′ around it: the smallest `lower` with tokens[lower] ≤ target ≤ tokens[lower + 1],
 * weight w = (target − tokens[lower]) / (tokens[lower + 1] − tokens[lower]) (0 on a flat stretch),
 * rounded to 1/WEIGHT_PARTS. Tokens never fall as K′ grows (a longer episode holds the shorter one).
 * A target below K′ = 0's tokens or above K's is outside: the long run cannot match it.
 */
export function tokenMatch(tokensPerQuery: readonly number[], target: number): TokenMatch {
  if (tokensPerQuery.length === 0) throw new MeritError("token match: an empty curve");
  if (!Number.isFinite(target)) throw new MeritError(`token match: the target ${target} is not a number of tokens`);
  const last = tokensPerQuery.length - 1;
  for (let i = 0; i < last; i++) {
    if (tokensPerQuery[i + 1] < tokensPerQuery[i]) throw new MeritError(`token match: the curve's tokens fall from K′ = ${i} to ${i + 1} (${tokensPerQuery[i]} → ${tokensPerQuery[i + 1]}); a prefix curve never does`);
  }
  if (target < tokensPerQuery[0]) return { within: false, side: "below" };
  if (target > tokensPerQuery[last]) return { within: false, side: "above" };
  if (last === 0 || target === tokensPerQuery[0]) return { within: true, lower: 0, weight: 0, kStar: 0 };
  for (let i = 0; i < last; i++) {
    const lo = tokensPerQuery[i];
    const hi = tokensPerQuery[i + 1];
    if (target <= hi) {
      const raw = hi === lo ? 0 : (target - lo) / (hi - lo);
      const weight = Math.round(raw * WEIGHT_PARTS) / WEIGHT_PARTS;
      // a weight that rounds to 1 is the next integer K′ itself
      return weight === 1 ? { within: true, lower: i + 1, weight: 0, kStar: i + 1 } : { within: true, lower: i, weight, kStar: i + weight };
    }
  }
  return { within: true, lower: last, weight: 0, kStar: last };
}

/** A method compared with the long run at its token-matched K′. */
export interface TokenMatchedComparison {
  dataset: string;
  method: string;
  /** The method's LLM tokens per query (mean over its stream orders). */
  tokensPerQuery: number;
  match: TokenMatch;
  /** EX (%) of the long run's method at K′* (the interpolation of the curve); null outside. */
  exMatched: number | null;
  /** Δ = EX(method) − EX(Iterative at K′*) in pp, its interval and bootstrap p; null outside. */
  delta: number | null;
  lo: number | null;
  hi: number | null;
  p: number | null;
  queries: number;
}

/**
 * `method`'s runs on the curve's dataset against the long run at the token-matched K′*: Δ = EX(method)
 * − EX(long method at K′*), per query and stream order the long run's outcome at `lower` and at
 * `lower + 1` mixed with the weight (each stream order's column repeated WEIGHT_PARTS times, `weight ×
 * WEIGHT_PARTS` of them at `lower + 1`: Δ is exactly the interpolation of the two paired Δ and the
 * bootstrap draws the same query clusters as every other comparison). The method's runs must cover
 * the long run's stream orders and queries (one line otherwise).
 */
export function tokenMatchedComparison(runs: readonly RunSummary[], curve: PrefixCurve, method: string, opts: BootstrapOptions = {}): TokenMatchedComparison {
  const selected = runsOf(runs, curve.dataset, method);
  if (selected.length === 0) throw new MeritError(`token-matched comparison: no ${method} runs on ${curve.dataset}`);
  const seeds = selected.map((r) => r.stream_seed);
  const longSeeds = curve.runs.map((r) => r.seed);
  if (seeds.join() !== longSeeds.join()) throw new MeritError(`token-matched comparison: on ${curve.dataset}, ${method} has stream orders [${seeds}] but the long ${curve.method} run has [${longSeeds}]; run the long arm over the same orders`);
  const queryIds = curve.runs[0].queryIds;
  for (const r of selected) {
    const ids = r.queries.map((q) => q.query_id);
    if (ids.join("\u0000") !== queryIds.join("\u0000")) throw new MeritError(`token-matched comparison: on ${curve.dataset}, (${method}, seed ${r.stream_seed}) covers other queries than the long ${curve.method} run; both must run the same stream`);
  }
  for (const r of curve.runs) if (r.queryIds.join("\u0000") !== queryIds.join("\u0000")) throw new MeritError(`token-matched comparison: on ${curve.dataset}, the long ${curve.method} runs cover different queries across stream orders`);
  const tokensPerQuery = meanStd(selected.map(llmTokensPerQuery)).mean;
  const match = tokenMatch(curve.tokensPerQuery, tokensPerQuery);
  const base = { dataset: curve.dataset, method, tokensPerQuery, match, queries: queryIds.length };
  if (!match.within) return { ...base, exMatched: null, delta: null, lo: null, hi: null, p: null };
  const upper = Math.min(match.lower + 1, curve.k);
  const atUpper = Math.round(match.weight * WEIGHT_PARTS);
  const a = queryIds.map((_, q) => selected.flatMap((r) => Array<number>(WEIGHT_PARTS).fill(r.queries[q].final_correct ? 1 : 0)));
  const b = queryIds.map((_, q) => curve.runs.flatMap((r) => [...Array<number>(WEIGHT_PARTS - atUpper).fill(r.correct[match.lower][q]), ...Array<number>(atUpper).fill(r.correct[upper][q])]));
  const boot = pairedClusterBootstrap(a, b, opts);
  const p = bootstrapPValue(a, b, { resamples: opts.resamples, seed: opts.seed });
  const w = atUpper / WEIGHT_PARTS;
  const exMatched = (1 - w) * curve.ex[match.lower] + w * curve.ex[upper];
  return { ...base, exMatched, delta: boot.delta, lo: boot.lo, hi: boot.hi, p };
}
