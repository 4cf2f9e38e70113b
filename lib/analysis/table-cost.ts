/**
 * Analysis stage, the cost by call kind (issue 29 §4): beside Table 3's total tokens, the tokens and
 * calls of every call kind a method made — the paper's `initial_cache`, `repair`, `reflection`, and
 * the kinds its hooks or its feedback regime declare (`distill`, `judge`, `curate`, …) — with its
 * embedding calls, per query, mean over seeds. Shown when some run made a call of a kind beyond the
 * paper's (a memory method that distils, a judge), so the paper's reports are unchanged; Table 3's
 * total already includes every kind. Embedding tokens and wall times are not counted.
 * @module
 */
import { BUILTIN_CALL_KINDS } from "../methods/hooks.ts";
import { fixed } from "./number-format.ts";
import type { RunSummary } from "./run-summary.ts";
import type { Cell, DataValue, Table } from "./table.ts";
import { displayName, tableDatasets, tableMethods, type TableSelection } from "./table-selection.ts";

/** The cost table, or null when every run made only the paper's call kinds. */
export function costTable(runs: readonly RunSummary[], sel: TableSelection = {}): Table | null {
  const kinds = [...new Set(runs.flatMap((r) => Object.keys(r.costs?.by_kind ?? {})))];
  const extra = kinds.filter((k) => !BUILTIN_CALL_KINDS.includes(k)).sort();
  if (extra.length === 0) return null;
  const order = [...BUILTIN_CALL_KINDS.filter((k) => kinds.includes(k)), ...extra];
  const rows: Cell[][] = [];
  const data: Record<string, DataValue>[] = [];
  for (const dataset of tableDatasets(runs, sel)) {
    for (const method of tableMethods(runs, sel)) {
      const of = runs.filter((r) => r.dataset === dataset && r.method === method && r.costs !== undefined);
      if (of.length === 0) continue;
      const perQuery = (f: (r: RunSummary) => number) => of.reduce((s, r) => s + f(r) / r.metrics.total, 0) / of.length;
      const tokens = (k: string) => perQuery((r) => (r.costs!.by_kind[k]?.prompt_tokens ?? 0) + (r.costs!.by_kind[k]?.output_tokens ?? 0));
      const calls = (k: string) => perQuery((r) => r.costs!.by_kind[k]?.calls ?? 0);
      const total = perQuery((r) => r.metrics.accounting.total_tokens);
      const embeddings = perQuery((r) => r.metrics.accounting.embedding_calls);
      rows.push([{ text: displayName(dataset, sel) }, { text: displayName(method, sel) }, ...order.map((k) => ({ text: fixed(tokens(k), 1) })), { text: fixed(total, 1) }, { text: fixed(embeddings, 2) }, ...order.map((k) => ({ text: fixed(calls(k), 2) }))]);
      data.push({ dataset, method, seeds: of.length, total_tokens_per_query: total, embedding_calls_per_query: embeddings, ...Object.fromEntries(order.flatMap((k) => [[`${k}_tokens_per_query`, tokens(k)], [`${k}_calls_per_query`, calls(k)]])) });
    }
  }
  const first = 2 + order.length + 2;
  return {
    id: "cost-by-kind",
    title: "Tokens per query by call kind (mean over seeds), total and embedding calls",
    columns: ["Dataset", "Method", ...order.map((k) => `${k} tokens`), "Total tokens", "Embedding calls", ...order.map((k) => `${k} calls`)],
    align: ["l", "l", ...order.map(() => "r" as const), "r", "r", ...order.map(() => "r" as const)],
    rows,
    notes: [
      `Prompt + output tokens per query of each call kind: the paper's (initial_cache, repair, reflection) and those declared by methods' hooks or a feedback regime (${extra.join(", ")}); Total = Table 3's, every kind included. Embedding calls: texts embedded per query (queries and stored memory). The CSV adds calls per query of each kind. Embedding tokens and wall times are not counted.`,
    ],
    data,
    csvOnly: order.map((_, i) => first + i),
  };
}
