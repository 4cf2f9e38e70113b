/**
 * Analysis stage, Table 4 (METHOD.md §9): ablations of the full method, EX mean ± std per dataset
 * and Δ EX vs the full method with a paired query-cluster bootstrap interval.
 * @module
 */
import { MeritError } from "../errors.ts";
import { meanStd } from "./aggregate.ts";
import { bootstrapPValue, pairedClusterBootstrap } from "./bootstrap.ts";
import { holmAdjust } from "./holm.ts";
import { fixed, meanPm, MISSING, pValue } from "./number-format.ts";
import { pairedMatrices, runsOf, type RunSummary } from "./run-summary.ts";
import { markBest, type Cell, type DataValue, type Table } from "./table.ts";
import { differenceFormat, displayName, seedNote, tableBootstrap, tableDatasets, type TableBootstrapOptions, type TableSelection } from "./table-selection.ts";

/** Options of Table 4. */
export interface AblationTableOptions extends Omit<TableSelection, "methods">, TableBootstrapOptions {
  /** The full method (e.g. `merit`). */
  full: string;
  /** Ablation methods in row order (e.g. `no_type_filter`, `no_bm25`, …). */
  ablations: string[];
}

/**
 * Table 4: one row per method (full first), per dataset EX, Δ = ablation − full (pp), its interval,
 * the bootstrap p and the Holm-adjusted p over the dataset's ablation family (beyond the paper).
 */
export function ablationTable(runs: readonly RunSummary[], opts: AblationTableOptions): Table {
  const { resamples, seed, level, method } = tableBootstrap(opts);
  const datasets = tableDatasets(runs, opts);
  const methods = [opts.full, ...opts.ablations];
  if (opts.ablations.includes(opts.full)) throw new MeritError(`Table 4: the full method ${opts.full} is also listed as an ablation; list it once, as full`);
  const rows: Cell[][] = methods.map((m) => [{ text: displayName(m, opts) }]);
  const data: Record<string, DataValue>[] = [];
  const format = differenceFormat(opts);
  datasets.forEach((dataset, j) => {
    const fullRuns = runsOf(runs, dataset, opts.full);
    const means: (number | null)[] = methods.map(() => null);
    const family: { row: number; record: Record<string, DataValue>; p: number }[] = [];
    methods.forEach((m, i) => {
      const selected = runsOf(runs, dataset, m);
      if (selected.length === 0) {
        rows[i].push({ text: MISSING }, { text: MISSING }, { text: MISSING }, { text: MISSING }, { text: MISSING });
        return;
      }
      const ex = meanStd(selected.map((r) => r.metrics.final_accuracy * 100));
      means[i] = ex.mean;
      const record: Record<string, DataValue> = { method: m, dataset, ex_mean: ex.mean, ex_std: ex.std, seeds: ex.n, delta: null, lo: null, hi: null, p_bootstrap: null, p_holm: null };
      rows[i].push({ text: meanPm(ex, 2) });
      if (m === opts.full || fullRuns.length === 0) {
        rows[i].push({ text: MISSING }, { text: MISSING }, { text: MISSING }, { text: MISSING });
      } else {
        const pm = pairedMatrices(runs, dataset, m, opts.full);
        const boot = pairedClusterBootstrap(pm.a, pm.b, { resamples, seed, level, method });
        const p = bootstrapPValue(pm.a, pm.b, { resamples, seed });
        rows[i].push({ text: format.delta(boot.delta, 2) }, { text: format.interval(boot.lo, boot.hi, 2) }, { text: pValue(p) }, { text: MISSING });
        Object.assign(record, { delta: boot.delta, lo: boot.lo, hi: boot.hi, p_bootstrap: p });
        family.push({ row: i, record, p });
      }
      data.push(record);
    });
    // Holm over this dataset's family: every ablation compared with the full method
    const adjusted = holmAdjust(family.map((f) => f.p));
    family.forEach((f, k) => {
      f.record.p_holm = adjusted[k];
      const cells = rows[f.row];
      cells[cells.length - 1] = { text: pValue(adjusted[k]) };
    });
    // the paper marks the best and second-best EX of each dataset (full method included)
    if (opts.paperLayout) markBest(rows, 1 + 5 * j, means, 2);
  });
  const ci = `${fixed(level * 100, 0)}% CI`;
  return {
    id: "table4",
    title: `Ablations of ${displayName(opts.full, opts)}: EX (%) and difference to the full method (pp)`,
    columns: ["Method", ...datasets.flatMap((d) => [`${displayName(d, opts)} EX`, `${displayName(d, opts)} Δ`, `${displayName(d, opts)} ${ci}`, `${displayName(d, opts)} p`, `${displayName(d, opts)} p (Holm)`])],
    align: ["l", ...datasets.flatMap(() => ["r", "r", "r", "r", "r"] as const)],
    rows,
    notes: [
      `EX: mean ± sample std over ${seedNote(runs)}. Δ = ablation − full; paired query-cluster bootstrap, B = ${resamples}, seed ${seed}, ${method} interval.`,
      "p: two-sided bootstrap p from the same resamples; p (Holm): Holm's step-down adjustment over the ablations of the same dataset (one family per dataset).",
      ...(opts.paperLayout ? ["Per dataset, the best EX in bold, the second underlined."] : []),
    ],
    data,
  };
}
