/**
 * Analysis stage, run summaries (METHOD.md §8, §9): one record per run (dataset × method × stream
 * seed) holding its metrics and per-query final correctness, and the aligned 0/1 matrices a[q][s]
 * that the bootstrap and McNemar test compare.
 * @module
 */
import { MeritError } from "../errors.ts";
import type { ErrorType, Trajectory } from "../repair/trajectory.ts";
import { runMetrics, type RunMetrics, type RunMetricsOptions } from "../experiment/run-metrics.ts";

/** One query's outcome within a run. */
export interface QueryOutcome {
  query_id: string;
  source_index: number;
  /** Initial attempt's SQL and type (null when initially correct), for the shared-initial-cache check. */
  initial_sql: string;
  /** METHOD.md §3's type, or the method's classify hook's label. */
  initial_error_type: ErrorType | string | null;
  initial_correct: boolean;
  final_correct: boolean;
  /** Repair generations of the episode (0 when initially correct). */
  repair_steps: number;
  /** Position of the episode in the run's stream, 0-based (the learning curves' x; absent in hand-made summaries). */
  stream_position?: number;
}

/** Everything the tables and figures need from one run. */
export interface RunSummary {
  dataset: string;
  method: string;
  stream_seed: number;
  /** K the run was summarised with (summarizeRun's maxRepairSteps); absent on hand-made summaries. */
  max_repair_steps?: number;
  metrics: RunMetrics;
  /** Per-query outcomes in ascending source_index order. */
  queries: QueryOutcome[];
  /** Under a feedback regime other than the oracle: what the agent was told against the oracle (absent under the oracle). */
  feedback?: FeedbackSummary;
  /**
   * For a method that judges its own episodes (trajectory `judged_success`): its judge's verdicts
   * against the oracle's verdict of the same final attempt — tp judged success and correct, fp judged
   * success but wrong, fn judged failure but correct, tn both wrong (absent for every other method).
   */
  judge?: FeedbackCounts;
  /** Calls and tokens of each call kind over the run (the report's cost table). */
  /** Per call kind: calls, tokens, and (only when some were) calls cut at their kind's output limit (trajectory `truncated_outputs`) and calls whose prompt was cut to max_input_tokens (`cut_calls`). */
  costs?: { by_kind: Record<string, { calls: number; prompt_tokens: number; output_tokens: number; truncated?: number; cut_calls?: number }> };
}

/** Attempts by (told correct?, oracle-correct?): tp told correct and correct, fp told correct but wrong, fn told wrong but correct, tn both wrong. */
export interface FeedbackCounts {
  tp: number;
  fp: number;
  fn: number;
  tn: number;
}

/** A run's feedback against the oracle, over all attempts and by quarter of the stream (positions in four equal blocks). */
export interface FeedbackSummary {
  regime: string;
  total: FeedbackCounts;
  quarters: [FeedbackCounts, FeedbackCounts, FeedbackCounts, FeedbackCounts];
}

/** The feedback summary of a run's trajectories; null when they hold no feedback record (the oracle's regime). */
export function feedbackSummary(trajectories: readonly Trajectory[]): FeedbackSummary | null {
  const withFeedback = trajectories.filter((t) => t.feedback !== undefined);
  if (withFeedback.length === 0) return null;
  const zero = (): FeedbackCounts => ({ tp: 0, fp: 0, fn: 0, tn: 0 });
  const total = zero();
  const quarters: FeedbackSummary["quarters"] = [zero(), zero(), zero(), zero()];
  for (const t of withFeedback) {
    const q = quarters[Math.min(3, Math.floor((4 * t.stream_position) / trajectories.length))];
    t.feedback!.accepted.forEach((told, i) => {
      const key = told ? (t.feedback!.oracle_correct[i] ? "tp" : "fp") : t.feedback!.oracle_correct[i] ? "fn" : "tn";
      total[key] += 1;
      q[key] += 1;
    });
  }
  return { regime: withFeedback[0].feedback_regime, total, quarters };
}

/** A judging method's verdicts against the oracle over a run's trajectories; null when none records one (`judged_success`). */
export function judgeCounts(trajectories: readonly Trajectory[]): FeedbackCounts | null {
  const judged = trajectories.filter((t) => t.judged_success !== undefined);
  if (judged.length === 0) return null;
  const c: FeedbackCounts = { tp: 0, fp: 0, fn: 0, tn: 0 };
  for (const t of judged) c[t.judged_success ? (t.final_correct ? "tp" : "fp") : t.final_correct ? "fn" : "tn"] += 1;
  return c;
}

/** Summarise one run's trajectories (see runMetrics for the checks). */
export function summarizeRun(trajectories: readonly Trajectory[], opts: RunMetricsOptions = {}): RunSummary {
  const metrics = runMetrics(trajectories, opts);
  const first = trajectories[0];
  const queries = trajectories
    .map((t) => ({
      query_id: t.query_id,
      source_index: t.source_index,
      initial_sql: t.attempts[0],
      initial_error_type: t.error_types[0],
      initial_correct: t.initial_correct,
      final_correct: t.final_correct,
      repair_steps: t.repair_steps,
      stream_position: t.stream_position,
    }))
    .sort((x, y) => x.source_index - y.source_index);
  const feedback = feedbackSummary(trajectories);
  const judge = judgeCounts(trajectories);
  const byKind: Record<string, { calls: number; prompt_tokens: number; output_tokens: number; truncated?: number; cut_calls?: number }> = {};
  for (const t of trajectories) {
    t.call_kinds.forEach((k, i) => {
      const c = (byKind[k] ??= { calls: 0, prompt_tokens: 0, output_tokens: 0 });
      c.calls += 1;
      c.prompt_tokens += t.prompt_tokens[i];
      c.output_tokens += t.output_tokens[i];
      // calls whose prompt was cut to max_input_tokens (issue 39 item 21); absent when none
      if (t.truncated_prompt_tokens[i] > 0) c.cut_calls = (c.cut_calls ?? 0) + 1;
    });
    for (const i of t.truncated_outputs ?? []) byKind[t.call_kinds[i]].truncated = (byKind[t.call_kinds[i]].truncated ?? 0) + 1;
  }
  const k = opts.maxRepairSteps === undefined ? {} : { max_repair_steps: opts.maxRepairSteps };
  return { dataset: first.dataset, method: first.method, stream_seed: first.stream_seed, ...k, metrics, queries, ...(feedback ? { feedback } : {}), ...(judge ? { judge } : {}), costs: { by_kind: byKind } };
}

/** Runs of one (dataset, method), in ascending seed order; throws if a seed appears twice. */
export function runsOf(runs: readonly RunSummary[], dataset: string, method: string): RunSummary[] {
  const selected = runs.filter((r) => r.dataset === dataset && r.method === method).sort((x, y) => x.stream_seed - y.stream_seed);
  for (let i = 1; i < selected.length; i++) {
    if (selected[i].stream_seed === selected[i - 1].stream_seed) {
      throw new MeritError(`runs: (${dataset}, ${method}) has two runs with stream seed ${selected[i].stream_seed}; pass each run directory once`);
    }
  }
  return selected;
}

/** Aligned correctness matrices of two methods on one dataset. */
export interface PairedMatrices {
  /** Query ids in ascending source_index order (row order of a and b). */
  queryIds: string[];
  /** Stream seeds in ascending order (column order). */
  seeds: number[];
  a: number[][];
  b: number[][];
}

/**
 * a[q][s], b[q][s] = final correctness of query q under seed s for methods A and B. Both methods must
 * have runs for the same seeds over the same queries; a mismatch throws MeritError naming it.
 */
export function pairedMatrices(runs: readonly RunSummary[], dataset: string, methodA: string, methodB: string): PairedMatrices {
  const runsA = runsOf(runs, dataset, methodA);
  const runsB = runsOf(runs, dataset, methodB);
  if (runsA.length === 0 || runsB.length === 0) {
    throw new MeritError(`paired matrices: no ${runsA.length === 0 ? methodA : methodB} runs on ${dataset}; run it or drop it from the comparison`);
  }
  const seeds = runsA.map((r) => r.stream_seed);
  const seedsB = runsB.map((r) => r.stream_seed);
  if (seeds.join() !== seedsB.join()) {
    throw new MeritError(`paired matrices: on ${dataset}, ${methodA} has seeds [${seeds}] but ${methodB} has seeds [${seedsB}]; compare runs over the same stream orders`);
  }
  const reference = runsA[0].queries.map((q) => q.query_id);
  const referenceSet = new Set(reference);
  const where = `${methodA} seed ${seeds[0]}`;
  for (const run of [...runsA, ...runsB]) {
    const ids = run.queries.map((q) => q.query_id);
    const idSet = new Set(ids);
    const lacking = reference.find((id) => !idSet.has(id));
    const extra = ids.find((id) => !referenceSet.has(id));
    const here = `run (${run.method}, seed ${run.stream_seed})`;
    if (lacking !== undefined) throw new MeritError(`paired matrices: on ${dataset}, query ${lacking} of ${where} is missing from ${here}; both methods must cover the same queries`);
    if (extra !== undefined) throw new MeritError(`paired matrices: on ${dataset}, query ${extra} of ${here} is missing from ${where}; both methods must cover the same queries`);
    if (ids.some((id, i) => id !== reference[i])) throw new MeritError(`paired matrices: on ${dataset}, ${here} gives its queries other source indices than ${where}; the runs used different dataset files`);
  }
  const column = (run: RunSummary) => run.queries.map((q) => (q.final_correct ? 1 : 0));
  const colsA = runsA.map(column);
  const colsB = runsB.map(column);
  return {
    queryIds: reference,
    seeds,
    a: reference.map((_, q) => colsA.map((col) => col[q])),
    b: reference.map((_, q) => colsB.map((col) => col[q])),
  };
}
