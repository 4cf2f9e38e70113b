/**
 * Analysis stage, paired outcome matrices (METHOD.md §9): checks that two methods' 0/1 correctness
 * matrices a[q][s], b[q][s] are aligned (same queries, same stream orders) and reduces them to the
 * per-query numbers the bootstrap and McNemar test read.
 * @module
 */
import { MeritError } from "../errors.ts";

/** Shape of an aligned pair: n queries × s stream orders. */
export interface PairShape {
  queries: number;
  seeds: number;
}

/**
 * Validate a pair of 0/1 matrices. Throws MeritError naming the mismatch: different query counts,
 * a ragged row, a row whose seed count differs from the first row's, or a value other than 0/1.
 */
export function checkPair(a: readonly (readonly number[])[], b: readonly (readonly number[])[]): PairShape {
  if (!Array.isArray(a) || !Array.isArray(b)) throw new MeritError("paired outcomes: a and b must be arrays of per-query rows a[q][s]");
  if (a.length !== b.length) {
    throw new MeritError(`paired outcomes: a has ${a.length} queries but b has ${b.length}; align both methods on the same queries (same dataset, same query ids)`);
  }
  if (a.length === 0) throw new MeritError("paired outcomes: no queries; pass at least one aligned query row");
  const seeds = a[0]?.length ?? 0;
  if (seeds === 0) throw new MeritError("paired outcomes: a[0] has no stream orders; each row holds one 0/1 value per seed");
  for (const [name, m] of [["a", a], ["b", b]] as const) {
    for (let q = 0; q < m.length; q++) {
      const row = m[q];
      if (!Array.isArray(row) || row.length !== seeds) {
        throw new MeritError(`paired outcomes: ${name}[${q}] has ${Array.isArray(row) ? row.length : "no"} stream orders but a[0] has ${seeds}; every query needs an outcome under every seed for both methods`);
      }
      for (let s = 0; s < seeds; s++) {
        if (row[s] !== 0 && row[s] !== 1) throw new MeritError(`paired outcomes: ${name}[${q}][${s}] is ${String(row[s])}; correctness values must be 0 or 1`);
      }
    }
  }
  return { queries: a.length, seeds };
}

/** Per-query sums over seeds of a − b (integers in [−s, s]), as a Float64Array of length n. */
export function perQueryDifferences(a: readonly (readonly number[])[], b: readonly (readonly number[])[], shape: PairShape): Float64Array {
  const diff = new Float64Array(shape.queries);
  for (let q = 0; q < shape.queries; q++) {
    let d = 0;
    for (let s = 0; s < shape.seeds; s++) d += a[q][s] - b[q][s];
    diff[q] = d;
  }
  return diff;
}

/** Majority outcome of one query across seeds: 1 iff strictly more than half of the seeds are correct. */
export function majority(row: readonly number[]): 0 | 1 {
  let correct = 0;
  for (const v of row) correct += v;
  return 2 * correct > row.length ? 1 : 0;
}
