/**
 * Sharding a grid across machines (`merit grid --shard i/n`): the grid's streams, in the order the
 * command line lists them (methods × seeds), are dealt round-robin to n shards, so shard i runs
 * streams i, i+n, i+2n, … Every stream writes the same run directory it would in a one-process
 * grid (each stream's outputs depend only on its own method, seed, config and the call cache), so
 * the union of the shards' run directories is the one-machine grid, and `merit cache merge` unites
 * their call caches (content-addressed rows, so a merge never conflicts).
 * @module
 */
import { UsageError } from "../errors.ts";

/** Shard `index` (0-based) of `count`. */
export interface Shard {
  index: number;
  count: number;
}

/** Parses `i/n` (0 ≤ i < n, as a Slurm array's `$SLURM_ARRAY_TASK_ID` with `--array=0-(n-1)`). */
export function parseShard(text: string): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  if (!m) throw new UsageError(`--shard must look like i/n (0-based shard i of n, e.g. 0/2 and 1/2), got "${text}"`);
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1 || count > 10_000) throw new UsageError(`--shard ${text}: the shard count n must be between 1 and 10000`);
  if (index >= count) throw new UsageError(`--shard ${text}: the shard index is 0-based, so it must be below ${count} (use 0/${count} … ${count - 1}/${count})`);
  return { index, count };
}

/** The streams of one shard, in their original order. */
export function selectShard<T>(streams: readonly T[], shard: Shard): T[] {
  return streams.filter((_, i) => i % shard.count === shard.index);
}
