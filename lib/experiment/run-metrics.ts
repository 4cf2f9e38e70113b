/**
 * Experiment runs, per-run metrics (METHOD.md §8, §9 Table 3): everything `metrics.json` holds,
 * derived only from the run's trajectories. It lives below the report layer because the run writer
 * (run.ts) computes it; lib/analysis re-exports it for the tables.
 * @module
 */
import { MeritError } from "../errors.ts";
import { ACCOUNTING_FIELDS, type Accounting, type ErrorType, type Trajectory } from "../repair/trajectory.ts";
import { isOscillating, normalizedEditDistance } from "../repair/attempt-sql.ts";

/** K, the maximum number of repair generations per query (METHOD.md §6.1). */
export const MAX_REPAIR_STEPS = 7;

/** Failure counts keyed by error type (METHOD.md §3's, or a classify hook's labels), keys in ascending order. */
export type FailureBreakdown = Partial<Record<ErrorType | string, number>>;

/** Metrics of one run (one dataset × method × stream seed). Rates are fractions in [0, 1]. */
export interface RunMetrics {
  /** Number of trajectories (queries) in the run. */
  total: number;
  initial_correct_count: number;
  final_correct_count: number;
  /** Initially failed queries that end correct. */
  repaired_count: number;
  /** total − final_correct_count. */
  failed_count: number;
  /** Initial EX = initial_correct_count / total. */
  success_at_1: number;
  /** EX = final_correct_count / total. */
  final_accuracy: number;
  /**
   * Steps (METHOD.md §9): mean repair generations per initial failure, where a repaired query
   * counts its repair_steps and an unrepaired one counts K. 0 when nothing failed initially.
   */
  steps: number;
  /** Oscillating trajectories / ALL trajectories (METHOD.md §8). */
  oscillation_rate: number;
  /** Population variance of repair_steps over final-correct trajectories; 0 if fewer than 2. */
  convergence_variance: number;
  /** Index s−1 holds the mean normalised edit distance of step s (1..K); null if no trajectory has it. */
  mean_edit_distance_by_step: (number | null)[];
  /** Initial failures by the initial attempt's type (null → Result Mismatch). */
  initial_failure_breakdown: FailureBreakdown;
  /** Final failures by the last attempt's type (null → Result Mismatch). */
  final_failure_breakdown: FailureBreakdown;
  /** Sums of every accounting field over the run's trajectories. */
  accounting: Accounting;
  /** LLM calls a server refused (trajectory `failed_generations`); present only when > 0 (issue 16 §2). */
  failed_generations?: number;
}

/** Options of {@link runMetrics}. */
export interface RunMetricsOptions {
  /** K; an unrepaired initial failure counts K in `steps`. @default 7 */
  maxRepairSteps?: number;
}

/**
 * Metrics of one run. Throws MeritError on an empty run, on trajectories from several
 * (dataset, method, stream_seed) runs, on a duplicate query id, or on more than K repair steps.
 */
export function runMetrics(trajectories: readonly Trajectory[], opts: RunMetricsOptions = {}): RunMetrics {
  const k = opts.maxRepairSteps ?? MAX_REPAIR_STEPS;
  checkOneRun(trajectories, k);
  const total = trajectories.length;
  const initialCorrect = trajectories.filter((t) => t.initial_correct).length;
  const finalCorrect = trajectories.filter((t) => t.final_correct).length;
  const initialFailures = trajectories.filter((t) => !t.initial_correct);
  const repaired = initialFailures.filter((t) => t.final_correct).length;
  const stepSum = initialFailures.reduce((s, t) => s + (t.final_correct ? t.repair_steps : k), 0);
  return {
    total,
    initial_correct_count: initialCorrect,
    final_correct_count: finalCorrect,
    repaired_count: repaired,
    failed_count: total - finalCorrect,
    success_at_1: initialCorrect / total,
    final_accuracy: finalCorrect / total,
    steps: initialFailures.length === 0 ? 0 : stepSum / initialFailures.length,
    oscillation_rate: trajectories.filter((t) => isOscillating(t.attempts)).length / total,
    convergence_variance: populationVariance(trajectories.filter((t) => t.final_correct).map((t) => t.repair_steps)),
    mean_edit_distance_by_step: meanEditDistanceByStep(trajectories, k),
    // The initial attempt's own type, whatever the feedback said of it (issue 39 item 1).
    initial_failure_breakdown: breakdown(initialFailures.map((t) => t.initial_failure_type ?? t.error_types[0])),
    final_failure_breakdown: breakdown(trajectories.filter((t) => !t.final_correct).map((t) => t.error_types[t.error_types.length - 1])),
    accounting: sumAccounting(trajectories),
    ...failedGenerations(trajectories),
  };
}

function failedGenerations(trajectories: readonly Trajectory[]): { failed_generations?: number } {
  const n = trajectories.reduce((s, t) => s + (t.failed_generations?.length ?? 0), 0);
  return n > 0 ? { failed_generations: n } : {};
}

/** Population variance (divide by n); 0 for fewer than 2 values (METHOD.md §8). */
export function populationVariance(values: readonly number[]): number {
  if (values.length < 2) return 0;
  const mean = values.reduce((s, x) => s + x, 0) / values.length;
  return values.reduce((s, x) => s + (x - mean) ** 2, 0) / values.length;
}

function meanEditDistanceByStep(trajectories: readonly Trajectory[], k: number): (number | null)[] {
  const sums = new Array<number>(k).fill(0);
  const counts = new Array<number>(k).fill(0);
  for (const t of trajectories) {
    for (let s = 1; s < t.attempts.length; s++) {
      sums[s - 1] += normalizedEditDistance(t.attempts[s - 1], t.attempts[s]);
      counts[s - 1] += 1;
    }
  }
  return sums.map((sum, i) => (counts[i] === 0 ? null : sum / counts[i]));
}

function breakdown(types: readonly (ErrorType | string | null)[]): FailureBreakdown {
  const counts = new Map<string, number>();
  for (const type of types) counts.set(type ?? "Result Mismatch", (counts.get(type ?? "Result Mismatch") ?? 0) + 1);
  const out: FailureBreakdown = {};
  for (const key of [...counts.keys()].sort()) out[key] = counts.get(key);
  return out;
}

/** Field-wise sum of the accounting records. */
export function sumAccounting(trajectories: readonly Trajectory[]): Accounting {
  const out = Object.fromEntries(ACCOUNTING_FIELDS.map((f) => [f, 0])) as Record<keyof Accounting, number>;
  for (const t of trajectories) for (const f of ACCOUNTING_FIELDS) out[f] += t.accounting[f] ?? Number.NaN;
  // an optional count (embedding_tokens) is summed only when every episode has it
  for (const f of ACCOUNTING_FIELDS) if (Number.isNaN(out[f])) delete (out as Partial<Record<keyof Accounting, number>>)[f];
  return out;
}

function checkOneRun(trajectories: readonly Trajectory[], k: number): void {
  if (trajectories.length === 0) throw new MeritError("runMetrics: the run has no trajectories; pass the lines of a non-empty trajectories.jsonl");
  const first = trajectories[0];
  const ids = new Set<string>();
  for (const t of trajectories) {
    if (t.dataset !== first.dataset || t.method !== first.method || t.stream_seed !== first.stream_seed) {
      throw new MeritError(
        `runMetrics: query ${t.query_id} belongs to run (${t.dataset}, ${t.method}, seed ${t.stream_seed}) but the first trajectory to (${first.dataset}, ${first.method}, seed ${first.stream_seed}); compute metrics one run at a time`,
      );
    }
    if (ids.has(t.query_id)) throw new MeritError(`runMetrics: query id ${t.query_id} appears twice in run (${first.dataset}, ${first.method}, seed ${first.stream_seed}); a run has one trajectory per query`);
    ids.add(t.query_id);
    if (t.repair_steps > k) throw new MeritError(`runMetrics: query ${t.query_id} has ${t.repair_steps} repair steps, more than K = ${k}; pass maxRepairSteps if the run used a larger K`);
  }
}
