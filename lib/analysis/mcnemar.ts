/**
 * Analysis stage, exact McNemar test (METHOD.md §9 significance): compares two methods on the
 * per-query majority outcome across stream orders with the exact binomial test on the discordant pairs.
 * @module
 */
import { checkPair, majority } from "./paired-outcomes.ts";

/** Discordant counts and the exact two-sided p-value. */
export interface McNemarResult {
  /** Queries whose majority outcome is correct for A and wrong for B. */
  onlyA: number;
  /** Queries whose majority outcome is wrong for A and correct for B. */
  onlyB: number;
  /** Two-sided p = min(1, 2 · P[X ≤ min(onlyA, onlyB)]), X ~ Binomial(onlyA + onlyB, ½); 1 if no discordant query. */
  pValue: number;
}

/**
 * Exact McNemar test on per-query majority outcomes (majority = correct under more than half of the seeds).
 * @example mcnemarExact(a, b) with 10 queries only A solves and 2 only B solves → p = 2·79/4096 ≈ 0.0386
 */
export function mcnemarExact(a: number[][], b: number[][]): McNemarResult {
  const shape = checkPair(a, b);
  let onlyA = 0;
  let onlyB = 0;
  for (let q = 0; q < shape.queries; q++) {
    const x = majority(a[q]);
    const y = majority(b[q]);
    if (x === 1 && y === 0) onlyA++;
    if (x === 0 && y === 1) onlyB++;
  }
  return { onlyA, onlyB, pValue: binomialTwoSided(Math.min(onlyA, onlyB), onlyA + onlyB) };
}

/**
 * min(1, 2 · Σ_{k=0..m} C(n, k) / 2^n), summed in log space so n in the thousands does not
 * underflow (2^−1534 is below the smallest double).
 */
export function binomialTwoSided(m: number, n: number): number {
  if (n === 0) return 1;
  const logs: number[] = [];
  let log = -n * Math.LN2; // ln P[X = 0]
  for (let k = 0; k <= m; k++) {
    if (k > 0) log += Math.log((n - k + 1) / k); // P[X = k] / P[X = k − 1] = (n − k + 1) / k
    logs.push(log);
  }
  const max = Math.max(...logs);
  const tail = Math.exp(max) * logs.reduce((s, l) => s + Math.exp(l - max), 0);
  return Math.min(1, 2 * tail);
}
