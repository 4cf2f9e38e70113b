/**
 * Analysis stage, tables as DataFrames (METHOD.md §9): the raw records of a built table, or one row
 * per run in the reference export's column order, as danfojs-node DataFrames for notebooks.
 * @module
 */
import { DataFrame } from "danfojs-node";
import type { RunSummary } from "./run-summary.ts";
import type { Table } from "./table.ts";

/** The table's raw `data` records as a DataFrame (columns in first-seen key order). */
export function tableFrame(table: Table): DataFrame {
  const columns = [...new Set(table.data.flatMap((r) => Object.keys(r)))];
  const rows = table.data.map((r) => columns.map((c) => r[c] ?? null));
  return new DataFrame(rows, { columns });
}

/** Columns of the reference `results.csv` (one row per run, METHOD.md §9 "Reference export behaviour"). */
export const RUN_COLUMNS = [
  "dataset", "method", "stream_seed", "n", "success_at_1", "final_accuracy", "repaired_count", "failed_count",
  "steps", "oscillation_rate", "total_tokens", "llm_calls", "db_executions", "embedding_calls", "retrieval_calls",
] as const;

/** One row per run, sorted by (dataset, method, stream_seed), as the reference export orders them. */
export function runsFrame(runs: readonly RunSummary[]): DataFrame {
  const sorted = [...runs].sort((x, y) =>
    x.dataset !== y.dataset ? (x.dataset < y.dataset ? -1 : 1) : x.method !== y.method ? (x.method < y.method ? -1 : 1) : x.stream_seed - y.stream_seed,
  );
  const rows = sorted.map((r) => {
    const m = r.metrics;
    const a = m.accounting;
    return [r.dataset, r.method, r.stream_seed, m.total, m.success_at_1, m.final_accuracy, m.repaired_count, m.failed_count,
      m.steps, m.oscillation_rate, a.total_tokens, a.llm_calls, a.db_executions, a.embedding_calls, a.retrieval_calls];
  });
  return new DataFrame(rows, { columns: [...RUN_COLUMNS] });
}
