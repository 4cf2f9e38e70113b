/**
 * Stream orders (METHOD.md §7, §11.4): the order in which a run visits a dataset's examples is
 * CPython's `random.Random(seed).shuffle(list(range(n)))` over ALL dataset indices; examples whose
 * database is unavailable are then dropped, keeping the relative order of the rest. Structured
 * orders (config `order`, {@link structuredOrder}) rearrange that shuffle by database or difficulty,
 * the shuffle breaking every tie, so each seed is its own order within the structure.
 * @module
 */
import { MeritError } from "../errors.ts";
import { PyRandom } from "../random.ts";

/** The order kinds of config `order` (METHOD.md §7); `random` is the paper's shuffle. */
export const ORDER_KINDS = ["random", "by_database", "easy_to_hard", "hard_to_easy", "drift"] as const;
export type OrderKind = (typeof ORDER_KINDS)[number];

/** Difficulty levels, easiest first: Spider `hardness` (easy, medium, hard, extra) and BIRD `difficulty` (simple, moderate, challenging). */
export const DIFFICULTY_RANK: Readonly<Record<string, number>> = { easy: 0, simple: 0, medium: 1, moderate: 1, hard: 2, challenging: 2, extra: 3 };

/** Blocks of databases in the `drift` order. */
export const DRIFT_BLOCKS = 4;

/** What a structured order reads of an example. */
export interface OrderedExample {
  dbId: string;
  difficulty: string;
}

/**
 * The stream order of kind `kind`: a permutation of 0..n−1 (n = examples.length). With s the seed's
 * shuffle ({@link streamOrder}) and rank(i) the position of index i in s:
 * - `random`: s itself;
 * - `by_database`: the databases one after another, in the order of their first query in s, each
 *   database's queries in s order (clustered);
 * - `easy_to_hard` / `hard_to_easy`: by difficulty level (DIFFICULTY_RANK; a level it does not
 *   know, e.g. "unknown", after all known levels in both), ties in s order; refused when no example has
 *   a known level;
 * - `drift`: the databases, in the order of their first query in s, cut into DRIFT_BLOCKS consecutive
 *   blocks of about n / DRIFT_BLOCKS queries (a database goes to block ⌊DRIFT_BLOCKS · q / n⌋, q = queries
 *   of the databases before it), the blocks one after another, each block's queries interleaved in s
 *   order — the databases seen drift from block to block.
 */
export function structuredOrder(examples: readonly OrderedExample[], seed: number | bigint, kind: OrderKind = "random"): number[] {
  const shuffled = streamOrder(examples.length, seed);
  if (kind === "random") return shuffled;
  const rank = new Int32Array(examples.length);
  shuffled.forEach((index, position) => (rank[index] = position));
  const dbOrder = new Map<string, number>();
  for (const index of shuffled) if (!dbOrder.has(examples[index].dbId)) dbOrder.set(examples[index].dbId, dbOrder.size);
  const byKey = (key: (index: number) => number) => [...shuffled].sort((a, b) => key(a) - key(b) || rank[a] - rank[b]);
  switch (kind) {
    case "by_database":
      return byKey((i) => dbOrder.get(examples[i].dbId)!);
    case "easy_to_hard":
    case "hard_to_easy": {
      const levels = Math.max(...Object.values(DIFFICULTY_RANK)) + 1;
      if (!examples.some((e) => e.difficulty in DIFFICULTY_RANK)) {
        throw new MeritError(`stream order ${kind}: no example has a known difficulty (${Object.keys(DIFFICULTY_RANK).join(", ")}); use order random, by_database or drift`);
      }
      const level = (i: number) => DIFFICULTY_RANK[examples[i].difficulty] ?? -1;
      return byKey((i) => (level(i) < 0 ? levels : kind === "easy_to_hard" ? level(i) : levels - 1 - level(i)));
    }
    case "drift": {
      const count = new Map<string, number>();
      for (const e of examples) count.set(e.dbId, (count.get(e.dbId) ?? 0) + 1);
      const block = new Map<string, number>();
      let before = 0;
      for (const db of dbOrder.keys()) {
        block.set(db, Math.floor((DRIFT_BLOCKS * before) / examples.length));
        before += count.get(db)!;
      }
      return byKey((i) => block.get(examples[i].dbId)!);
    }
  }
}

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
