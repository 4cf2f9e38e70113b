/**
 * Retrieval stage (METHOD.md §5.4): min–max normalisation per pool, weighted fusion of the dense
 * and BM25 channels plus the optional type bonus, Python-exact rounding to 12 decimals, and the
 * five-key sort. Pure.
 *
 * Choices where METHOD.md is silent: `final` is computed from the unrounded normalised components
 * and then rounded; the sort uses the rounded (stored) values, so what the log shows is what was
 * compared.
 * @module
 */

/** Base channel weights (METHOD.md §5.4; config validation requires exactly these). */
export const BASE_WEIGHTS = { dense: 0.75, bm25: 0.25 } as const;
/** Bonus for a same-type entry in the type-reliability-aware variant when not hard-filtered. */
export const TYPE_BONUS = 0.1;
/** Absolute tolerance of the min–max degenerate case. */
export const MINMAX_TOLERANCE = 1e-12;
/** Decimals every stored score is rounded to. */
export const SCORE_DECIMALS = 12;

/**
 * CPython's `round(x, ndigits)` for floats: the exact binary value of `x` rounded to `ndigits`
 * decimals, ties to even, read back as the nearest double. `Number.prototype.toFixed` rounds the
 * exact value too but breaks ties upwards; an exact tie happens only when `x` has exactly
 * ndigits + 1 binary fractional digits (x·2^(ndigits+1) is an odd integer), and that case is
 * redone with BigInt arithmetic.
 * @example pyRound(0.0001220703125, 12) === 0.000122070312 // 2^-13: a tie, kept even
 */
export function pyRound(x: number, ndigits: number = SCORE_DECIMALS): number {
  if (!Number.isFinite(x) || x === 0 || Math.abs(x) >= 2 ** 52) return x;
  const p = ndigits + 1;
  const scaled = x * 2 ** p; // exact: a power-of-two scaling
  if (Number.isInteger(scaled) && !Number.isInteger(x * 2 ** ndigits)) {
    // x = N / 2^p = N·5^p / 10^p exactly; its last decimal digit is 5 (N odd) → a tie.
    const n = BigInt(scaled);
    const negative = n < 0n;
    const v = (negative ? -n : n) * 5n ** BigInt(p);
    let q = v / 10n;
    if (q % 2n === 1n) q += 1n;
    return Number(`${negative ? "-" : ""}${q}e-${ndigits}`);
  }
  return Number(x.toFixed(ndigits));
}

/**
 * Min–max normalisation over one pool (METHOD.md §5.4): (s − min)/(max − min); when
 * |max − min| ≤ 1e−12 every score becomes 1.0, or 0.0 when that common value is itself ≈ 0
 * (|max| ≤ 1e−12).
 */
export function minMaxNormalize(scores: readonly number[]): number[] {
  if (scores.length === 0) return [];
  let lo = Infinity;
  let hi = -Infinity;
  for (const s of scores) {
    if (s < lo) lo = s;
    if (s > hi) hi = s;
  }
  if (Math.abs(hi - lo) <= MINMAX_TOLERANCE) return scores.map(() => (Math.abs(hi) <= MINMAX_TOLERANCE ? 0 : 1));
  return scores.map((s) => (s - lo) / (hi - lo));
}

/** Which score channels a policy uses. */
export interface Channels {
  dense: boolean;
  bm25: boolean;
}

/** Channel weights: a disabled channel gets 0 and the enabled ones are renormalised to sum to 1. */
export function channelWeights(channels: Channels, base: { dense: number; bm25: number } = BASE_WEIGHTS): { dense: number; bm25: number } {
  const dense = channels.dense ? base.dense : 0;
  const bm25 = channels.bm25 ? base.bm25 : 0;
  const total = dense + bm25;
  if (total === 0) return { dense: 0, bm25: 0 };
  return { dense: dense / total, bm25: bm25 / total };
}

/** One candidate before ranking: raw channel scores over the same pool. */
export interface RankInput {
  entryId: string;
  /** Raw inner product with the query vector. */
  dense: number;
  /** Raw BM25 score over the pool. */
  bm25: number;
  /** 1 when the entry's error_type equals the current error type (used only with a bonus). */
  typeMatch: 0 | 1;
}

/** A ranked candidate: stored (rounded) components and final score, plus its index in the input. */
export interface RankedScore {
  /** Position of the candidate in the input array. */
  index: number;
  entryId: string;
  /** Normalised dense component, rounded to 12 decimals. */
  dense: number;
  /** Normalised BM25 component, rounded to 12 decimals. */
  bm25: number;
  /** 0 unless a type bonus applies and the types match. */
  typeMatch: 0 | 1;
  /** round(w_dense·dense + w_bm25·bm25 + bonus·type_match, 12). */
  final: number;
}

/** How to fuse: channel weights (already renormalised) and the type bonus (0 when off). */
export interface FusionWeights {
  dense: number;
  bm25: number;
  typeBonus: number;
}

/** Normalises, fuses and sorts a pool (METHOD.md §5.4); returns every candidate in rank order. */
export function rankCandidates(inputs: readonly RankInput[], weights: FusionWeights): RankedScore[] {
  const denseNorm = minMaxNormalize(inputs.map((c) => c.dense));
  const bm25Norm = minMaxNormalize(inputs.map((c) => c.bm25));
  const ranked = inputs.map((c, i): RankedScore => {
    const typeMatch: 0 | 1 = weights.typeBonus > 0 ? c.typeMatch : 0;
    const final = weights.dense * denseNorm[i] + weights.bm25 * bm25Norm[i] + weights.typeBonus * typeMatch;
    return { index: i, entryId: c.entryId, dense: pyRound(denseNorm[i]), bm25: pyRound(bm25Norm[i]), typeMatch, final: pyRound(final) };
  });
  return ranked.sort(compareRanked);
}

/** A pool given column-wise to `topRanked`: raw scores by position, the rest read on demand. */
export interface RankColumns {
  /** Raw inner products. */
  dense: ArrayLike<number>;
  /** Raw BM25 scores over the pool (same length as `dense`). */
  bm25: ArrayLike<number>;
  /** 1 when candidate `i`'s error_type equals the current one (read only when a bonus applies). */
  typeMatch(i: number): 0 | 1;
  /** Entry ID of candidate `i` (read only for candidates that can reach the top). */
  entryId(i: number): string;
}

/**
 * The first `k` of `rankCandidates` for the same pool, without rounding and sorting the whole pool.
 * Rounding to 12 decimals moves a value by at most 0.5e−12 (plus one ulp), so a candidate whose
 * unrounded final score is more than 2e−12 below the k-th largest unrounded final score rounds
 * strictly below at least k others and cannot be in the top k. Only the candidates within that
 * margin are rounded and sorted with the full five-key order.
 */
export function topRanked(pool: RankColumns, weights: FusionWeights, k: number): RankedScore[] {
  const n = pool.dense.length;
  if (k <= 0 || n === 0) return [];
  const denseNorm = minMaxNormalize(Array.from(pool.dense));
  const bm25Norm = minMaxNormalize(Array.from(pool.bm25));
  const finals = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const typeMatch = weights.typeBonus > 0 ? pool.typeMatch(i) : 0;
    finals[i] = weights.dense * denseNorm[i] + weights.bm25 * bm25Norm[i] + weights.typeBonus * typeMatch;
  }
  const threshold = kthLargest(finals, Math.min(k, n)) - TOP_K_MARGIN;
  const near: RankedScore[] = [];
  for (let i = 0; i < n; i++) {
    if (!(finals[i] >= threshold)) continue;
    const typeMatch = weights.typeBonus > 0 ? pool.typeMatch(i) : 0;
    near.push({ index: i, entryId: pool.entryId(i), dense: pyRound(denseNorm[i]), bm25: pyRound(bm25Norm[i]), typeMatch, final: pyRound(finals[i]) });
  }
  return near.sort(compareRanked).slice(0, k);
}

/** `RankColumns` over an array of `RankInput`s. */
export function rankColumnsOf(inputs: readonly RankInput[]): RankColumns {
  return {
    dense: inputs.map((c) => c.dense),
    bm25: inputs.map((c) => c.bm25),
    typeMatch: (i) => inputs[i].typeMatch,
    entryId: (i) => inputs[i].entryId,
  };
}

/** Margin of `topRanked`: four times the largest move rounding to 12 decimals can make. */
const TOP_K_MARGIN = 2e-12;

/** The k-th largest value (1-based k ≤ length) of finite `values`. */
function kthLargest(values: Float64Array, k: number): number {
  if (k <= 8) {
    const best: number[] = [];
    for (const v of values) {
      if (best.length === k && v <= best[k - 1]) continue;
      let j = best.length === k ? k - 1 : best.length;
      while (j > 0 && best[j - 1] < v) {
        best[j] = best[j - 1];
        j -= 1;
      }
      best[j] = v;
    }
    return best[k - 1];
  }
  return Float64Array.from(values).sort()[values.length - k];
}

/** Sort key: final desc, dense desc, BM25 desc, type_match desc, entry_id ascending. */
export function compareRanked(a: RankedScore, b: RankedScore): number {
  if (a.final !== b.final) return b.final - a.final;
  if (a.dense !== b.dense) return b.dense - a.dense;
  if (a.bm25 !== b.bm25) return b.bm25 - a.bm25;
  if (a.typeMatch !== b.typeMatch) return b.typeMatch - a.typeMatch;
  return a.entryId < b.entryId ? -1 : a.entryId > b.entryId ? 1 : 0;
}
