/**
 * Experiment runs, the episode stream (METHOD.md §7, §11.4): CPython-exact shuffle of ALL dataset
 * indices with `random.Random(seed)`, then examples that cannot be scored (no database, failing gold)
 * are dropped and positions renumbered 0..m−1, then an optional `--limit` keeps the first N.
 * @module
 */
import type { Dataset, Example } from "../data/types.ts";
import { streamOrder } from "./stream-order.ts";
import type { InitialCache, InitialRecord } from "./initial-cache.ts";
import { MeritError } from "../errors.ts";

export interface StreamItem {
  position: number;
  example: Example;
  initial: InitialRecord;
}

/** The run's stream: dataset examples in shuffled order with their initial-cache records. */
export function buildStream(dataset: Dataset, cache: InitialCache, seed: number, limit?: number): StreamItem[] {
  const byId = new Map(cache.records.map((r) => [r.query_id, r]));
  const order = streamOrder(dataset.examples.length, seed);
  const items: StreamItem[] = [];
  for (const index of order) {
    const example = dataset.examples[index];
    const initial = byId.get(example.id);
    if (!initial) throw new MeritError(`initial cache has no record for query ${example.id}; rebuild it with \`merit initial\``);
    if (initial.execution_status === "NO_DATABASE" || initial.execution_status === "GOLD_ERROR") continue;
    if (!dataset.databases.has(example.dbId)) continue;
    items.push({ position: items.length, example, initial });
    if (limit !== undefined && items.length >= limit) break;
  }
  return items;
}
