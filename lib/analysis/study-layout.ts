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
import { holmAdjust } from "./holm.ts";
import { pValue } from "./number-format.ts";
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
 * `comparisonTable` per pair, so every cell, note and record is the usual one), under one title,
 * with the Holm-adjusted bootstrap p over the study's comparisons on each dataset (Holm 1979; the
 * family is every pair of the study, so a study of many arms does not read its smallest p alone).
 */
export function pairsComparisonTable(runs: readonly RunSummary[], pairs: readonly [string, string][], opts: Omit<ComparisonTableOptions, "reference" | "others">): Table {
  const parts = pairs.map(([a, b]) => comparisonTable(runs, { ...opts, reference: a, others: [b] }));
  const first = parts[0];
  if (first === undefined) throw new MeritError("Table 2: no comparison pairs given");
  const notes = [...new Set(parts.flatMap((t) => t.notes))];
  const shown = pairs.map(([a, b]) => `${displayName(a, opts)} vs ${displayName(b, opts)}`).join(", ");
  const rows = parts.flatMap((t) => t.rows);
  const data = parts.flatMap((t) => t.data).map((d) => ({ ...d }));
  // Holm within each dataset's family of comparisons; the column follows p (bootstrap).
  const holm = new Array<number>(data.length);
  for (const dataset of new Set(data.map((d) => d.dataset))) {
    const idx = data.map((d, i) => (d.dataset === dataset ? i : -1)).filter((i) => i >= 0);
    holmAdjust(idx.map((i) => data[i].p_bootstrap as number)).forEach((p, j) => (holm[idx[j]] = p));
  }
  const P_BOOT = first.columns.indexOf("p (bootstrap)");
  data.forEach((d, i) => (d.p_holm = holm[i]));
  const withHolm = rows.map((r, i) => [...r.slice(0, P_BOOT + 1), { text: pValue(holm[i]) }, ...r.slice(P_BOOT + 1)]);
  return {
    ...first,
    title: `Difference in EX (pp) of each comparison (${shown}; Δ = first − second)`,
    columns: [...first.columns.slice(0, P_BOOT + 1), "p (Holm)", ...first.columns.slice(P_BOOT + 1)],
    align: [...first.align.slice(0, P_BOOT + 1), "r", ...first.align.slice(P_BOOT + 1)],
    rows: withHolm,
    data,
    notes: [...notes, `p (Holm): the bootstrap p adjusted by Holm's step-down method over the ${pairs.length} comparison(s) of the study on each dataset.`],
    csvOnly: (first.csvOnly ?? []).map((c) => (c > P_BOOT ? c + 1 : c)),
  };
}
