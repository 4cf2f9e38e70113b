/**
 * Analysis stage, a study's table layout (METHOD.md §9; `merit report --methods`, `--comparisons`,
 * as `merit study run` passes them): the methods Tables 1 and 3 (and the figures) show, in the
 * given order under the paper's display names, and Table 2 as explicit pairs (a, b), Δ = EX(a) − EX(b).
 * Without these flags the report keeps the paper's layout (paper-layout.ts).
 * @module
 */
import { MeritError } from "../errors.ts";
import { PAPER_LABELS } from "./paper-layout.ts";
import type { RunSummary } from "./run-summary.ts";
import type { Table } from "./table.ts";
import { comparisonTable, type ComparisonTableOptions } from "./tables.ts";
import { displayName, type TableSelection } from "./table-selection.ts";

/** `--methods a,b,c`: exactly these methods, in this order, with the paper's labels (overridden by `labels`). */
export function methodsSelection(methods: readonly string[], labels?: Record<string, string>): TableSelection {
  return { labels: { ...PAPER_LABELS, ...labels }, methods: [...methods] };
}

/** `a:b,c:d` → [[a, b], [c, d]]; one line naming the bad item otherwise. */
export function parseComparisonPairs(text: string, flag = "--comparisons"): [string, string][] {
  return text.split(",").map((item) => {
    const parts = item.split(":").map((p) => p.trim());
    if (parts.length !== 2 || parts[0] === "" || parts[1] === "" || parts[0] === parts[1]) {
      throw new MeritError(`${flag}: "${item}" is not a pair a:b of two different methods (Δ = EX(a) − EX(b)); e.g. ${flag} my_method:merit,my_method:iterative`);
    }
    return [parts[0], parts[1]];
  });
}

/**
 * Table 2 for explicit pairs: the rows of `comparisonTable` for each pair, in pair order (one
 * `comparisonTable` per pair, so every cell, note and record is the usual one), under one title.
 */
export function pairsComparisonTable(runs: readonly RunSummary[], pairs: readonly [string, string][], opts: Omit<ComparisonTableOptions, "reference" | "others">): Table {
  const parts = pairs.map(([a, b]) => comparisonTable(runs, { ...opts, reference: a, others: [b] }));
  const first = parts[0];
  if (first === undefined) throw new MeritError("Table 2: no comparison pairs given");
  const notes = [...new Set(parts.flatMap((t) => t.notes))];
  const shown = pairs.map(([a, b]) => `${displayName(a, opts)} vs ${displayName(b, opts)}`).join(", ");
  return { ...first, title: `Difference in EX (pp) of each comparison (${shown}; Δ = first − second)`, rows: parts.flatMap((t) => t.rows), data: parts.flatMap((t) => t.data), notes };
}
