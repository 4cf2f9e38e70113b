/**
 * Analysis stage, per-difficulty breakdown (METHOD.md §1.2, §9, beyond the paper): final EX (%)
 * mean ± std over seeds per method and difficulty level, for the datasets whose examples label it
 * (BIRD `difficulty`: simple / moderate / challenging; Spider `hardness` when present).
 * @module
 */
import { meanStd } from "./aggregate.ts";
import { meanPm, MISSING } from "./number-format.ts";
import { runsOf, type RunSummary } from "./run-summary.ts";
import type { Cell, DataValue, Table } from "./table.ts";
import { displayName, seedNote, tableDatasets, tableMethods, type TableSelection } from "./table-selection.ts";

const LEVEL_ORDER = ["simple", "moderate", "challenging", "easy", "medium", "hard", "extra"];

/**
 * The breakdown, or null when no dataset of `runs` labels difficulty (every level "unknown" or absent).
 * @param difficulty per dataset, the difficulty of each query id
 */
export function difficultyTable(runs: readonly RunSummary[], difficulty: ReadonlyMap<string, ReadonlyMap<string, string>>, sel: TableSelection = {}): Table | null {
  const methods = tableMethods(runs, sel);
  const columns: { dataset: string; level: string; ids: Set<string> }[] = [];
  for (const dataset of tableDatasets(runs, sel)) {
    const labels = difficulty.get(dataset);
    const first = runs.find((r) => r.dataset === dataset);
    if (!labels || !first) continue;
    const byLevel = new Map<string, Set<string>>();
    for (const q of first.queries) {
      const level = labels.get(q.query_id) ?? "unknown";
      if (!byLevel.has(level)) byLevel.set(level, new Set());
      byLevel.get(level)!.add(q.query_id);
    }
    if ([...byLevel.keys()].every((l) => l === "unknown")) continue;
    const rank = (l: string) => (LEVEL_ORDER.includes(l) ? LEVEL_ORDER.indexOf(l) : l === "unknown" ? LEVEL_ORDER.length + 1 : LEVEL_ORDER.length);
    for (const level of [...byLevel.keys()].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : 1))) columns.push({ dataset, level, ids: byLevel.get(level)! });
  }
  if (columns.length === 0) return null;
  const data: Record<string, DataValue>[] = [];
  const rows: Cell[][] = methods.map((method) => [
    { text: displayName(method, sel) },
    ...columns.map(({ dataset, level, ids }) => {
      const selected = runsOf(runs, dataset, method);
      if (selected.length === 0) return { text: MISSING };
      const ex = meanStd(selected.map((r) => {
        const qs = r.queries.filter((q) => ids.has(q.query_id));
        return qs.length === 0 ? 0 : (100 * qs.filter((q) => q.final_correct).length) / qs.length;
      }));
      data.push({ method, dataset, difficulty: level, queries: ids.size, ex_mean: ex.mean, ex_std: ex.std, seeds: ex.n });
      return { text: meanPm(ex, 2) };
    }),
  ]);
  return {
    id: "table1-difficulty",
    title: "Execution accuracy (EX, %) by difficulty level",
    columns: ["Method", ...columns.map((c) => `${displayName(c.dataset, sel)} ${c.level} (n = ${c.ids.size})`)],
    align: ["l", ...columns.map(() => "r" as const)],
    rows,
    notes: [`Mean ± sample std over ${seedNote(runs)}; levels as the dataset's examples file labels them (BIRD difficulty, Spider hardness).`],
    data,
    ...(sel.ruleBefore !== undefined && methods.includes(sel.ruleBefore) ? { rulesBefore: [methods.indexOf(sel.ruleBefore)] } : {}),
  };
}
