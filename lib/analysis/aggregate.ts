/**
 * Analysis stage, aggregation over stream orders (METHOD.md §9): mean ± sample standard deviation
 * (n − 1) of a run-level quantity across the seeds of one (dataset, method).
 * @module
 */
import { MeritError } from "../errors.ts";
import { ACCOUNTING_FIELDS, type Accounting } from "../repair/trajectory.ts";
import type { RunMetrics } from "../experiment/run-metrics.ts";

/** Mean and sample standard deviation of n values; `std` is null when n < 2 (undefined for one value). */
export interface MeanStd {
  mean: number;
  std: number | null;
  n: number;
}

/**
 * Mean ± sample std (denominator n − 1).
 * @example meanStd([1, 2, 3]) → {mean: 2, std: 1, n: 3}
 */
export function meanStd(values: readonly number[]): MeanStd {
  if (values.length === 0) throw new MeritError("meanStd: no values to aggregate; every (dataset, method) needs at least one run");
  for (const v of values) if (!Number.isFinite(v)) throw new MeritError(`meanStd: value ${v} is not a finite number; check the run metrics`);
  const n = values.length;
  const mean = values.reduce((s, x) => s + x, 0) / n;
  if (n < 2) return { mean, std: null, n };
  const ss = values.reduce((s, x) => s + (x - mean) ** 2, 0);
  return { mean, std: Math.sqrt(ss / (n - 1)), n };
}

/** Scalar run metrics aggregated across seeds (every accounting field included). */
export type AggregatedMetrics = Record<
  "total" | "success_at_1" | "final_accuracy" | "repaired_count" | "failed_count" | "steps" | "oscillation_rate" | "convergence_variance" | Exclude<keyof Accounting, "embedding_tokens">,
  MeanStd
> & { embedding_tokens?: MeanStd };

/** Mean ± sample std across the seeds of one (dataset, method) of every scalar metric (rates stay fractions). */
export function aggregateMetrics(runs: readonly RunMetrics[]): AggregatedMetrics {
  const scalar = ["total", "success_at_1", "final_accuracy", "repaired_count", "failed_count", "steps", "oscillation_rate", "convergence_variance"] as const;
  const out = {} as AggregatedMetrics;
  for (const key of scalar) out[key] = meanStd(runs.map((m) => m[key]));
  // an optional count (embedding_tokens) only when every run has it
  for (const key of ACCOUNTING_FIELDS) if (runs.every((m) => m.accounting[key] !== undefined)) out[key] = meanStd(runs.map((m) => m.accounting[key] as number));
  return out;
}
