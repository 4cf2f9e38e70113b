/**
 * Analysis stage, power of a paired comparison (METHOD.md §9, beyond the paper): the minimum
 * detectable effect (MDE) of Table 2's design — n queries × S stream orders with the observed
 * discordance — and how many stream orders would separate two methods at the observed Δ.
 *
 * MDE = (z_{1−α/2} + z_{power}) · SE, with SE the standard deviation of the paired query-cluster
 * bootstrap's resampled Δ (the same draws as the interval: bootstrap.ts `bootstrapDeltas`); at
 * α = 0.05 and 80% power the factor is 1.960 + 0.842 = 2.802 (normal approximation).
 *
 * More stream orders: the per-query difference d_qs = a_qs − b_qs (pp) has per-query means d̄_q with
 * Var(d̄_q) = σ_b² + σ_w²/S, where σ_w² is the pooled variance of d_qs across seeds within a query
 * (sample variance, S − 1) and σ_b² = max(0, Var(d̄_q) − σ_w²/S) the between-query part. With S'
 * orders SE(S')² = SE² · (σ_b² + σ_w²/S') / (σ_b² + σ_w²/S); the orders needed are the least S' with
 * MDE(S') ≤ |Δ|, or null when even infinitely many orders leave MDE > |Δ| (σ_b² alone is too large:
 * only more queries help) or when Δ = 0.
 * @module
 */
import { bootstrapDeltas } from "./bootstrap.ts";
import { normalQuantile } from "./normal.ts";
import { checkPair } from "./paired-outcomes.ts";

/** Options of {@link pairedPower}. */
export interface PowerOptions {
  /** Bootstrap resamples (the table's B). @default 10000 */
  resamples?: number;
  /** Bootstrap seed (the table's). @default 0 */
  seed?: number;
  /** Two-sided significance level. @default 0.05 */
  alpha?: number;
  /** Power. @default 0.8 */
  power?: number;
}

/** The power figures of one comparison (pp unless noted). */
export interface PowerResult {
  /** Observed Δ = EX(a) − EX(b). */
  delta: number;
  /** Bootstrap standard error of Δ. */
  se: number;
  /** z_{1−α/2} + z_{power}. */
  factor: number;
  /** Minimum detectable effect with the observed design. */
  mde: number;
  /** Stream orders of the design (S). */
  seeds: number;
  queries: number;
  /** Between-query variance σ_b² of d̄_q (pp²). */
  varBetween: number;
  /** Within-query (across-seed) variance σ_w² of d_qs (pp²); 0 with a single seed. */
  varWithin: number;
  /** Least S' with MDE(S') ≤ |Δ|; null when no number of stream orders gets there (or Δ = 0, or S = 1). */
  ordersNeeded: number | null;
}

/** Power of the paired comparison of a[q][s] with b[q][s] (see the module comment). */
export function pairedPower(a: number[][], b: number[][], opts: PowerOptions = {}): PowerResult {
  const shape = checkPair(a, b);
  const alpha = opts.alpha ?? 0.05;
  const power = opts.power ?? 0.8;
  const factor = normalQuantile(1 - alpha / 2) + normalQuantile(power);
  const deltas = bootstrapDeltas(a, b, { resamples: opts.resamples, seed: opts.seed });
  const se = sampleSd(deltas);
  const S = shape.seeds;
  const n = shape.queries;
  const means = new Float64Array(n);
  let within = 0;
  let total = 0;
  for (let q = 0; q < n; q++) {
    let sum = 0;
    for (let s = 0; s < S; s++) sum += 100 * (a[q][s] - b[q][s]);
    const mean = sum / S;
    means[q] = mean;
    total += sum;
    if (S > 1) {
      let ss = 0;
      for (let s = 0; s < S; s++) ss += (100 * (a[q][s] - b[q][s]) - mean) ** 2;
      within += ss / (S - 1);
    }
  }
  const delta = total / (n * S);
  const varWithin = S > 1 ? within / n : 0;
  const varMeans = sampleVariance(means);
  const varBetween = Math.max(0, varMeans - varWithin / S);
  return { delta, se, factor, mde: factor * se, seeds: S, queries: n, varBetween, varWithin, ordersNeeded: ordersNeeded({ delta, se, factor, seeds: S, varBetween, varWithin }) };
}

/** MDE with `orders` stream orders instead of the observed S (the scaling of the module comment). */
export function mdeAt(r: Pick<PowerResult, "se" | "factor" | "seeds" | "varBetween" | "varWithin">, orders: number): number {
  const now = r.varBetween + r.varWithin / r.seeds;
  if (now === 0) return 0;
  return r.factor * r.se * Math.sqrt((r.varBetween + r.varWithin / orders) / now);
}

function ordersNeeded(r: Pick<PowerResult, "delta" | "se" | "factor" | "seeds" | "varBetween" | "varWithin">): number | null {
  const target = Math.abs(r.delta);
  if (target === 0 || r.seeds < 2) return null;
  if (mdeAt(r, r.seeds) <= target) {
    // already detectable: the fewest orders that still are
    for (let s = 1; s <= r.seeds; s++) if (mdeAt(r, s) <= target) return s;
  }
  if (r.varWithin === 0 || mdeAt(r, Number.POSITIVE_INFINITY) >= target) return null;
  // MDE(S')² ≤ Δ² ⇔ σ_w²/S' ≤ Δ²·now/(factor·SE)² − σ_b²
  const now = r.varBetween + r.varWithin / r.seeds;
  const room = (target * target * now) / (r.factor * r.factor * r.se * r.se) - r.varBetween;
  let s = Math.max(1, Math.ceil(r.varWithin / room));
  while (s > 1 && mdeAt(r, s - 1) <= target) s--;
  while (mdeAt(r, s) > target) s++;
  return s;
}

function sampleVariance(xs: ArrayLike<number>): number {
  const n = xs.length;
  if (n < 2) return 0;
  let mean = 0;
  for (let i = 0; i < n; i++) mean += xs[i];
  mean /= n;
  let ss = 0;
  for (let i = 0; i < n; i++) ss += (xs[i] - mean) ** 2;
  return ss / (n - 1);
}

function sampleSd(xs: ArrayLike<number>): number {
  return Math.sqrt(sampleVariance(xs));
}
