/**
 * Analysis stage, paired query-cluster bootstrap (METHOD.md §9, Table 2): the difference in EX
 * between two methods in percentage points with a percentile or BCa interval, resampling queries
 * (each drawn query brings its outcomes under every stream order for both methods).
 *
 * Randomness: CPython-exact `PyRandom(seed)` (lib/random.ts). Resample r draws its n
 * query indices with n consecutive `randbelow(n)` calls, so the draws equal Python's
 * `rng = random.Random(seed); [[rng.randrange(n) for _ in range(n)] for _ in range(B)]`.
 * The index stream depends only on (n, B, seed): it is drawn once, in bulk (`PyRandom.fillRandbelow`,
 * whole MT19937 blocks in one branchless loop, the same values as one `randbelow(n)` call per
 * draw), and reused across pairs (see `cachedDraws`). A first call in a fresh process (B = 10,000 ×
 * 1,034 queries) takes 1.3× numpy 2.4.6's time on the same resampling, 1.9× numpy 1.24.2's
 * (bench/bootstrap-first-call.ts).
 * @module
 */
import { MeritError } from "../errors.ts";
import { PyRandom } from "../random.ts";
import { normalCdf, normalQuantile } from "./normal.ts";
import { checkPair, perQueryDifferences, type PairShape } from "./paired-outcomes.ts";

export { mcnemarExact, type McNemarResult } from "./mcnemar.ts";

/**
 * The largest B the kit accepts (`merit report --resamples`, the library): ten times the default of
 * 10,000. The paired bootstrap draws B × queries indices, so a mistyped 1000000000 would compute for
 * hours with no progress line; more resamples than this change an interval's bounds by less than
 * the table's rounding.
 */
export const MAX_RESAMPLES = 100_000;

/** Options of the bootstrap; defaults are the kit's (METHOD.md §9: the paper gives none). */
export interface BootstrapOptions {
  /** Number of resamples B. @default 10000 */
  resamples?: number;
  /** Seed of the resampling generator (non-negative integer; 0 is a seed like any other). @default 0 */
  seed?: number;
  /** Two-sided confidence level in (0, 1). @default 0.95 */
  level?: number;
  /** Interval type: percentile, or bias-corrected and accelerated (jackknife over queries). @default "percentile" */
  method?: "percentile" | "bca";
}

/** Δ = EX(a) − EX(b) and its interval, all in percentage points. */
export interface BootstrapResult {
  /** Point estimate on the original sample, pp. */
  delta: number;
  /** Lower interval bound, pp. */
  lo: number;
  /** Upper interval bound, pp. */
  hi: number;
  /** B actually used. */
  resamples: number;
  /** Seed actually used. */
  seed: number;
}

/**
 * Paired query-cluster bootstrap of Δ = mean over (query, seed) cells of a − b, × 100.
 * @param a a[q][s] ∈ {0, 1}: correctness of query q under stream order s for method A
 * @param b the same for method B, aligned on q and s
 * @example pairedClusterBootstrap([[1, 1, 1], [0, 1, 0]], [[1, 0, 1], [0, 0, 0]]) // delta = 2/6 × 100 ≈ 33.33
 */
export function pairedClusterBootstrap(a: number[][], b: number[][], opts: BootstrapOptions = {}): BootstrapResult {
  const { resamples, seed, level, method } = checkOptions(opts);
  const shape = checkPair(a, b);
  const diff = perQueryDifferences(a, b, shape);
  const delta = pointDelta(diff, shape);
  const sorted = resampleDeltas(diff, shape, resamples, seed).sort();
  const alpha = 1 - level;
  if (sorted[0] === sorted[resamples - 1]) return { delta, lo: sorted[0], hi: sorted[0], resamples, seed };
  if (method === "percentile") {
    return { delta, lo: quantile(sorted, alpha / 2), hi: quantile(sorted, 1 - alpha / 2), resamples, seed };
  }
  const acceleration = jackknifeAcceleration(diff, shape);
  const [pLo, pHi] = bcaLevels(sorted, delta, acceleration, alpha);
  if (!(pLo >= 0 && pHi <= 1 && pLo <= pHi)) {
    throw new MeritError(`bootstrap: the BCa interval is undefined here (acceleration ${acceleration} on ${shape.queries} queries gives levels ${pLo}, ${pHi}); use method "percentile"`);
  }
  return { delta, lo: quantile(sorted, pLo), hi: quantile(sorted, pHi), resamples, seed };
}

/**
 * Two-sided bootstrap p-value for H0: Δ = 0, from the same resamples as the interval (same seed ⇒
 * same draws): p = min(1, 2·(min(#{Δ* ≤ 0}, #{Δ* ≥ 0}) + 1) / (B + 1)). The +1 keeps p > 0
 * (Davison & Hinkley 1997, §4.4); p < 1 − level agrees with a percentile interval excluding 0.
 */
export function bootstrapPValue(a: number[][], b: number[][], opts: Omit<BootstrapOptions, "level" | "method"> = {}): number {
  const { resamples, seed } = checkOptions(opts);
  const shape = checkPair(a, b);
  const deltas = resampleDeltas(perQueryDifferences(a, b, shape), shape, resamples, seed);
  let atMostZero = 0;
  let atLeastZero = 0;
  for (let r = 0; r < resamples; r++) {
    if (deltas[r] <= 0) atMostZero++;
    if (deltas[r] >= 0) atLeastZero++;
  }
  return Math.min(1, (2 * (Math.min(atMostZero, atLeastZero) + 1)) / (resamples + 1));
}

/**
 * The B resampled Δ values (pp, in draw order) of the same draws as the interval and p-value (same
 * seed ⇒ same resamples); power.ts takes their standard deviation as the bootstrap standard error.
 */
export function bootstrapDeltas(a: number[][], b: number[][], opts: Omit<BootstrapOptions, "level" | "method"> = {}): Float64Array {
  const { resamples, seed } = checkOptions(opts);
  const shape = checkPair(a, b);
  return resampleDeltas(perQueryDifferences(a, b, shape), shape, resamples, seed);
}

/** Δ on the original sample: (Σ_q diff[q]) · 100 / (n · s); the sum is an exact integer. */
function pointDelta(diff: Float64Array, shape: PairShape): number {
  let total = 0;
  for (let q = 0; q < diff.length; q++) total += diff[q];
  return (total * 100) / (shape.queries * shape.seeds);
}

/** B resampled Δ values (unsorted, in draw order). The only allocation is the result array. */
function resampleDeltas(diff: Float64Array, shape: PairShape, resamples: number, seed: number): Float64Array {
  const n = shape.queries;
  const cells = n * shape.seeds;
  const out = new Float64Array(resamples);
  const indices = cachedDraws(n, resamples, seed);
  if (indices !== undefined) {
    // Four running sums: each partial sum is an exact integer in a double (|sum| ≤ n·s < 2^53), so
    // the order of the additions cannot change the total.
    const tail = n & 3;
    for (let r = 0, k = 0; r < resamples; r++) {
      let t0 = 0;
      let t1 = 0;
      let t2 = 0;
      let t3 = 0;
      const end = k + n - tail;
      for (; k < end; k += 4) {
        t0 += diff[indices[k]];
        t1 += diff[indices[k + 1]];
        t2 += diff[indices[k + 2]];
        t3 += diff[indices[k + 3]];
      }
      for (let i = 0; i < tail; i++) t0 += diff[indices[k++]];
      out[r] = ((t0 + t1 + (t2 + t3)) * 100) / cells;
    }
    return out;
  }
  // Too many draws to keep: draw each resample's n indices in bulk into one reused buffer (the same
  // consecutive randbelow(n) stream as the memo's, so the same Δ* values).
  const rng = new PyRandom(seed);
  const drawn = new Uint32Array(n);
  for (let r = 0; r < resamples; r++) {
    rng.fillRandbelow(n, drawn);
    let total = 0;
    for (let i = 0; i < n; i++) total += diff[drawn[i]];
    out[r] = (total * 100) / cells;
  }
  return out;
}

/**
 * Memo of the last index stream. The draws depend only on (n, B, seed), never on the outcomes, so a
 * Table 2 comparing one method with ten others draws them once (drawing is ~60% of a first call).
 * Output is identical with or without the memo; streams above MAX_MEMO_DRAWS indices are not kept.
 */
let memo: { n: number; resamples: number; seed: number; indices: Uint16Array | Uint32Array } | undefined;
const MAX_MEMO_DRAWS = 1 << 25; // 33.5M indices: 64 MiB as Uint16 (BIRD: 1,534 × 10,000 = 15.3M)

function cachedDraws(n: number, resamples: number, seed: number): Uint16Array | Uint32Array | undefined {
  if (memo !== undefined && memo.n === n && memo.resamples === resamples && memo.seed === seed) return memo.indices;
  if (n * resamples > MAX_MEMO_DRAWS) return undefined;
  const indices = n <= 0x10000 ? new Uint16Array(n * resamples) : new Uint32Array(n * resamples);
  new PyRandom(seed).fillRandbelow(n, indices);
  memo = { n, resamples, seed, indices };
  return indices;
}

/** Linear-interpolation quantile of sorted values at probability p (NumPy's default, Hyndman–Fan type 7); Table 2's intervals and the learning curves' bands. */
export function quantile(sorted: Float64Array, p: number): number {
  const h = (sorted.length - 1) * Math.min(1, Math.max(0, p));
  const below = Math.floor(h);
  const above = Math.min(below + 1, sorted.length - 1);
  return sorted[below] + (h - below) * (sorted[above] - sorted[below]);
}

/**
 * Acceleration â of the BCa interval from the leave-one-query-out jackknife (Efron 1987), exported for tests:
 * θ_(i) = Δ without query i, â = Σ(θ̄ − θ_(i))³ / (6 · (Σ(θ̄ − θ_(i))²)^{3/2}); 0 if all θ_(i) agree.
 */
export function jackknifeAcceleration(diff: Float64Array, shape: PairShape): number {
  const n = shape.queries;
  if (n < 2) return 0;
  let total = 0;
  for (let q = 0; q < n; q++) total += diff[q];
  const cells = (n - 1) * shape.seeds;
  let mean = 0;
  for (let q = 0; q < n; q++) mean += ((total - diff[q]) * 100) / cells;
  mean /= n;
  let num = 0;
  let den = 0;
  for (let q = 0; q < n; q++) {
    const d = mean - ((total - diff[q]) * 100) / cells;
    num += d * d * d;
    den += d * d;
  }
  return den === 0 ? 0 : num / (6 * Math.pow(den, 1.5));
}

/**
 * BCa quantile levels. Bias correction ẑ0 = Φ⁻¹(p0) with p0 = (#{Δ* < Δ} + ½·#{Δ* = Δ}) / B (ties
 * split in half, since Δ* is discrete here), clamped to [½/B, 1 − ½/B] so ẑ0 stays finite.
 */
function bcaLevels(sorted: Float64Array, delta: number, acceleration: number, alpha: number): [number, number] {
  let below = 0;
  let equal = 0;
  for (const v of sorted) {
    if (v < delta) below++;
    else if (v === delta) equal++;
  }
  const B = sorted.length;
  const p0 = Math.min(1 - 0.5 / B, Math.max(0.5 / B, (below + 0.5 * equal) / B));
  const z0 = normalQuantile(p0);
  const level = (z: number) => normalCdf(z0 + (z0 + z) / (1 - acceleration * (z0 + z)));
  return [level(normalQuantile(alpha / 2)), level(normalQuantile(1 - alpha / 2))];
}

function checkOptions(opts: BootstrapOptions): Required<BootstrapOptions> {
  const resamples = opts.resamples ?? 10_000;
  const seed = opts.seed ?? 0;
  const level = opts.level ?? 0.95;
  const method = opts.method ?? "percentile";
  if (!Number.isSafeInteger(resamples) || resamples < 1 || resamples > MAX_RESAMPLES) throw new MeritError(`bootstrap: resamples must be an integer in 1..${MAX_RESAMPLES}, got ${resamples}; the kit's default is 10000`);
  if (!Number.isSafeInteger(seed) || seed < 0) throw new MeritError(`bootstrap: seed must be a non-negative integer, got ${seed}; the kit's default is 0`);
  if (!(level > 0 && level < 1)) throw new MeritError(`bootstrap: level must be in (0, 1), got ${level}; use 0.95 for a 95% interval`);
  if (method !== "percentile" && method !== "bca") throw new MeritError(`bootstrap: method must be "percentile" or "bca", got ${JSON.stringify(method)}`);
  return { resamples, seed, level, method };
}
