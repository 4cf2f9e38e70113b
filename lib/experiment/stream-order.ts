/**
 * Stream orders (METHOD.md §7, §11.4): the order in which a run visits a dataset's examples is
 * CPython's `random.Random(seed).shuffle(list(range(n)))` over ALL dataset indices; examples whose
 * database is unavailable are then dropped, keeping the relative order of the rest.
 * @module
 */
import { PyRandom } from "../random.ts";

/**
 * The stream order of a dataset of `n` examples: a permutation of the source indices 0..n−1.
 * Position p of the stream visits dataset index `order[p]`.
 * @example streamOrder(1034, 0) // equals random.Random(0).shuffle(list(range(1034))) in CPython
 */
export function streamOrder(n: number, seed: number | bigint): number[] {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`streamOrder: n must be a non-negative integer, got ${n}`);
  const order = Array.from({ length: n }, (_, i) => i);
  new PyRandom(seed).shuffle(order);
  return order;
}

/**
 * The runnable stream (METHOD.md §11.4): `order` without the indices whose example is unavailable
 * (e.g. Spider's `wta_1` questions), relative order kept. Positions are renumbered 0..m−1, i.e.
 * position p of the result visits dataset index `result[p]`.
 */
export function availableStream(order: readonly number[], isAvailable: (index: number) => boolean): number[] {
  return order.filter((index) => isAvailable(index));
}
