/**
 * Experiment runs, the episode stream (METHOD.md §7, §11.4): CPython-exact shuffle of ALL dataset
 * indices with `random.Random(seed)`, then examples that cannot be scored (no database, failing gold)
 * are dropped and positions renumbered 0..m−1. An optional `--limit N` keeps a FIXED subset of
 * queries, chosen on the seed-0 stream by the config's `subset` rule, which every seed then visits in
 * its own order, so runs of different seeds and methods cover the same queries and can be paired in
 * the bootstrap. Rules (`subset.rule`, lib/experiment/config.ts):
 * - `first` (the default): the first N queries of the seed-0 stream;
 * - `initially_failed`: the first N − C queries of the seed-0 stream whose initial prediction failed,
 *   plus its first C initially correct ones (C = `subset.initially_correct`, at most N), so that a
 *   small slice still gives repair and memory episodes to look at (the demo, configs/demo.json).
 *   Fewer than N queries when the stream holds fewer of either kind.
 * Without a limit every rule keeps the whole stream.
 * @module
 */
import type { Dataset, Example } from "../data/types.ts";
import { structuredOrder, type OrderKind } from "./stream-order.ts";
import type { InitialCache, InitialRecord } from "./initial-cache.ts";
import { MeritError } from "../errors.ts";
import type { SubsetRule } from "./config.ts";

export interface StreamItem {
  position: number;
  example: Example;
  initial: InitialRecord;
}

/**
 * The run's stream: dataset examples in the seed's order of kind `order` (config `order`,
 * stream-order.ts) with their initial-cache records. The `limit` subset is always chosen on the
 * seed-0 RANDOM stream, so runs of every order kind cover the same queries.
 */
export function buildStream(dataset: Dataset, cache: InitialCache, seed: number, limit?: number, rule: SubsetRule = FIRST, order: OrderKind = "random"): StreamItem[] {
  const full = availableStream(dataset, cache, seed, order);
  if (limit === undefined) return full;
  const subset = new Set(selectSubset(seed === 0 && order === "random" ? full : availableStream(dataset, cache, 0, "random"), limit, rule).map((item) => item.example.id));
  return full.filter((item) => subset.has(item.example.id)).map((item, position) => ({ ...item, position }));
}

const FIRST: SubsetRule = { rule: "first", initially_correct: 0 };

/** The `limit` queries the rule keeps from the seed-0 stream (in that stream's order). */
export function selectSubset(seed0: readonly StreamItem[], limit: number, rule: SubsetRule = FIRST): StreamItem[] {
  if (rule.rule === "first") return seed0.slice(0, limit);
  const correct = Math.min(rule.initially_correct, limit);
  const keep = new Set([
    ...seed0.filter((item) => item.initial.oracle_correct === false).slice(0, limit - correct),
    ...seed0.filter((item) => item.initial.oracle_correct === true).slice(0, correct),
  ]);
  return seed0.filter((item) => keep.has(item));
}

/**
 * Refuses in one line a dataset none of whose databases is there (its data not downloaded): every
 * query would be dropped from the stream, and a run of the empty stream fail far from the cause.
 */
export function checkDatabasesThere(dataset: Dataset): void {
  if (dataset.examples.length === 0 || dataset.databases.size > 0) return;
  throw new MeritError(`dataset ${dataset.name} (${dataset.dir}): none of its ${dataset.examples.length} queries can be scored, as none of their databases is there; download them (\`make data-${dataset.name === "bird" ? "bird" : "spider"}\`, or \`merit data download\`) and run the command again`);
}

function availableStream(dataset: Dataset, cache: InitialCache, seed: number, order: OrderKind): StreamItem[] {
  const byId = new Map(cache.records.map((r) => [r.query_id, r]));
  const items: StreamItem[] = [];
  for (const index of structuredOrder(dataset.examples, seed, order)) {
    const example = dataset.examples[index];
    const initial = byId.get(example.id);
    if (!initial) throw new MeritError(`initial cache has no record for query ${example.id}; rebuild it with \`merit initial\``);
    if (initial.execution_status === "NO_DATABASE" || initial.execution_status === "GOLD_ERROR") continue;
    if (!dataset.databases.has(example.dbId)) continue;
    items.push({ position: items.length, example, initial });
  }
  if (items.length === 0) checkDatabasesThere(dataset);
  return items;
}
