/**
 * Experiment runs, the episode stream (METHOD.md §7, §11.4): CPython-exact shuffle of ALL dataset
 * indices with `random.Random(seed)`, then examples that cannot be scored (no database, failing gold)
 * are dropped and positions renumbered 0..m−1. An optional `--limit N` keeps a FIXED subset of
 * queries — the first N of the seed-0 stream — which every seed then visits in its own order, so runs
 * of different seeds and methods cover the same queries and can be paired in the bootstrap.
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
  const full = availableStream(dataset, cache, seed);
  if (limit === undefined) return full;
  const subset = new Set((seed === 0 ? full : availableStream(dataset, cache, 0)).slice(0, limit).map((item) => item.example.id));
  return full.filter((item) => subset.has(item.example.id)).map((item, position) => ({ ...item, position }));
}

function availableStream(dataset: Dataset, cache: InitialCache, seed: number): StreamItem[] {
  const byId = new Map(cache.records.map((r) => [r.query_id, r]));
  const items: StreamItem[] = [];
  for (const index of streamOrder(dataset.examples.length, seed)) {
    const example = dataset.examples[index];
    const initial = byId.get(example.id);
    if (!initial) throw new MeritError(`initial cache has no record for query ${example.id}; rebuild it with \`merit initial\``);
    if (initial.execution_status === "NO_DATABASE" || initial.execution_status === "GOLD_ERROR") continue;
    if (!dataset.databases.has(example.dbId)) continue;
    items.push({ position: items.length, example, initial });
  }
  return items;
}
