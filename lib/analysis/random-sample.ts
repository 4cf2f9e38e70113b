/**
 * Analysis stage, case sampling for classifier validation (METHOD.md §8): CPython 3.11's
 * `random.Random(seed).sample(population, k)` on the kit's bit-exact PyRandom, so a Python script
 * with the same seed and population order picks the same cases in the same order.
 * @module
 */
import type { PyRandom } from "../random.ts";

/**
 * `Random.sample(population, k)` (CPython 3.11 Lib/random.py, without `counts`): k distinct elements
 * in selection order. For small populations a pool is partially shuffled (j = randbelow(n − i),
 * pool[j] is taken and replaced by pool[n − i − 1]); otherwise indices are drawn with
 * randbelow(n) and re-drawn while already selected. The switch point `setsize` is CPython's:
 * 21, plus 4^ceil(log4(3k)) when k > 5.
 */
export function pySample<T>(rng: PyRandom, population: readonly T[], k: number): T[] {
  const n = population.length;
  if (!Number.isInteger(k) || k < 0 || k > n) throw new RangeError(`sample: k must be an integer in [0, ${n}] (the population size), got ${k}`);
  const result: T[] = new Array<T>(k);
  let setsize = 21;
  if (k > 5) setsize += 4 ** Math.ceil(Math.log(k * 3) / Math.log(4));
  if (n <= setsize) {
    const pool = [...population];
    for (let i = 0; i < k; i++) {
      const j = rng.randbelow(n - i);
      result[i] = pool[j];
      pool[j] = pool[n - i - 1];
    }
  } else {
    const selected = new Set<number>();
    for (let i = 0; i < k; i++) {
      let j = rng.randbelow(n);
      while (selected.has(j)) j = rng.randbelow(n);
      selected.add(j);
      result[i] = population[j];
    }
  }
  return result;
}
