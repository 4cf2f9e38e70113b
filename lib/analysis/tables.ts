/**
 * Analysis stage, paper tables (METHOD.md §9): Table 1 (EX mean ± std per method × dataset),
 * Table 2 (Δ EX of one method vs every other with bootstrap CI and McNemar p) and Table 3 (repair
 * behaviour). Tables 4 and 5 live in table-ablation.ts and table-failures.ts and are re-exported here.
 * @module
 */
import { MeritError } from "../errors.ts";
import { meanStd } from "./aggregate.ts";
import { bootstrapPValue, mcnemarExact, pairedClusterBootstrap } from "./bootstrap.ts";
import { pairedPower } from "./power.ts";
import { fixed, grouped, meanPm, MISSING, pValue } from "./number-format.ts";
import { pairedMatrices, runsOf, type RunSummary } from "./run-summary.ts";
import { markBest, type Cell, type DataValue, type Table } from "./table.ts";
import { differenceFormat, displayName, seedNote, tableBootstrap, tableDatasets, tableMethods, type TableBootstrapOptions, type TableSelection } from "./table-selection.ts";

export { ablationTable, type AblationTableOptions } from "./table-ablation.ts";
export { failureTable, confusionTable, type FailureTableOptions } from "./table-failures.ts";
export { displayName, tableDatasets, tableMethods, type TableSelection } from "./table-selection.ts";

/**
 * Table 1: final EX (%) mean ± sample std over seeds; best bold, second underlined. The kit's layout
 * has methods × datasets; the paper's (`sel.paperLayout`) has one block of method rows per dataset.
 */
export function exTable(runs: readonly RunSummary[], sel: TableSelection = {}): Table {
  if (sel.paperLayout) return exTableBlocks(runs, sel);
  const datasets = tableDatasets(runs, sel);
  const methods = tableMethods(runs, sel);
  const rows: Cell[][] = methods.map((m) => [{ text: displayName(m, sel) }]);
  const data: Record<string, DataValue>[] = [];
  datasets.forEach((dataset, j) => {
    const means: (number | null)[] = [];
    methods.forEach((method, i) => {
      const selected = runsOf(runs, dataset, method);
      if (selected.length === 0) {
        rows[i].push({ text: MISSING });
        means.push(null);
        return;
      }
      const ex = meanStd(selected.map((r) => r.metrics.final_accuracy * 100));
      rows[i].push({ text: meanPm(ex, 2) });
      means.push(ex.mean);
      data.push({ method, dataset, ex_mean: ex.mean, ex_std: ex.std, seeds: ex.n });
    });
    markBest(rows, j + 1, means, 2);
  });
  return {
    id: "table1",
    title: "Execution accuracy (EX, %) per method and dataset",
    columns: ["Method", ...datasets.map((d) => displayName(d, sel))],
    align: ["l", ...datasets.map(() => "r" as const)],
    rows,
    notes: [`Mean ± sample standard deviation (n − 1) over ${seedNote(runs)}; best in bold, second underlined.`],
    data,
    ...(sel.ruleBefore !== undefined && methods.includes(sel.ruleBefore) ? { rulesBefore: [methods.indexOf(sel.ruleBefore)] } : {}),
  };
}

/** Table 1 in the paper's layout: Dataset | Method | EX (%), one block per dataset, marks within each block. */
function exTableBlocks(runs: readonly RunSummary[], sel: TableSelection): Table {
  const rows: Cell[][] = [];
  const data: Record<string, DataValue>[] = [];
  const rulesBefore: number[] = [];
  for (const dataset of tableDatasets(runs, sel)) {
    const block: Cell[][] = [];
    const means: (number | null)[] = [];
    // the marks rank the paper's methods (above the rule); the methods below it are shown, not ranked
    let belowRule = false;
    for (const method of tableMethods(runs, sel)) {
      const selected = runsOf(runs, dataset, method);
      if (selected.length === 0) continue;
      if (method === sel.ruleBefore) rulesBefore.push(rows.length + block.length);
      if (method === sel.ruleBefore) belowRule = true;
      const ex = meanStd(selected.map((r) => r.metrics.final_accuracy * 100));
      block.push([{ text: displayName(dataset, sel) }, { text: displayName(method, sel) }, { text: meanPm(ex, 2) }]);
      means.push(belowRule ? null : ex.mean);
      data.push({ method, dataset, ex_mean: ex.mean, ex_std: ex.std, seeds: ex.n });
    }
    markBest(block, 2, means, 2);
    rows.push(...block);
  }
  return {
    id: "table1",
    title: "Execution accuracy (EX, %) per dataset and method",
    columns: ["Dataset", "Method", "EX (%)"],
    align: ["l", "l", "r"],
    rows,
    notes: [`Mean ± sample standard deviation (n − 1) over ${seedNote(runs)}; per dataset, best in bold, second underlined${rulesBefore.length > 0 ? " among the paper's methods (above the rule; the methods below it are not ranked)" : ""}.`],
    data,
    ...(rulesBefore.length > 0 ? { rulesBefore } : {}),
  };
}

/** Options of Table 2. */
export interface ComparisonTableOptions extends TableSelection, TableBootstrapOptions {
  /** The method compared with every other one (Δ = reference − other). */
  reference: string;
  /** The methods compared with the reference, in row order; default: every other method of the selection. */
  others?: string[];
}

/** Table 2: Δ EX (pp) of `reference` vs every other method, paired query-cluster bootstrap CI, bootstrap and McNemar p. */
export function comparisonTable(runs: readonly RunSummary[], opts: ComparisonTableOptions): Table {
  const { resamples, seed, level, method } = tableBootstrap(opts);
  const others = (opts.others ?? tableMethods(runs, opts)).filter((m) => m !== opts.reference);
  if (!runs.some((r) => r.method === opts.reference)) {
    throw new MeritError(`Table 2: no runs of the reference method ${JSON.stringify(opts.reference)}; known methods: ${tableMethods(runs, {}).join(", ")}`);
  }
  const levelText = `${fixed(level * 100, 0)}% CI`;
  const format = differenceFormat(opts);
  const rows: Cell[][] = [];
  const data: Record<string, DataValue>[] = [];
  for (const dataset of tableDatasets(runs, opts)) {
    for (const other of others) {
      if (runsOf(runs, dataset, other).length === 0 || runsOf(runs, dataset, opts.reference).length === 0) continue;
      const m = pairedMatrices(runs, dataset, opts.reference, other);
      const boot = pairedClusterBootstrap(m.a, m.b, { resamples, seed, level, method });
      const pBoot = bootstrapPValue(m.a, m.b, { resamples, seed });
      const mc = mcnemarExact(m.a, m.b);
      const power = pairedPower(m.a, m.b, { resamples, seed });
      rows.push([
        { text: displayName(dataset, opts) },
        { text: `${displayName(opts.reference, opts)} vs ${displayName(other, opts)}` },
        { text: format.delta(boot.delta, 2) },
        { text: format.interval(boot.lo, boot.hi, 2) },
        { text: pValue(pBoot) },
        { text: fixed(power.mde, 2) },
        { text: pValue(mc.pValue) },
        { text: power.ordersNeeded === null ? MISSING : String(power.ordersNeeded) },
        { text: String(m.queryIds.length) },
        { text: m.seeds.join(" ") },
        { text: String(resamples) },
        { text: String(seed) },
        { text: method },
      ]);
      data.push({
        dataset, reference: opts.reference, other, delta: boot.delta, lo: boot.lo, hi: boot.hi, level,
        p_bootstrap: pBoot, p_mcnemar: mc.pValue, only_reference: mc.onlyA, only_other: mc.onlyB,
        queries: m.queryIds.length, seeds: m.seeds.join(" "), resamples, seed, interval: method,
        se: power.se, mde: power.mde, mde_factor: power.factor, var_between: power.varBetween, var_within: power.varWithin, orders_needed: power.ordersNeeded,
      });
    }
  }
  return {
    id: "table2",
    title: `Difference in EX (pp) of ${displayName(opts.reference, opts)} against each method`,
    columns: ["Dataset", "Comparison", "Δ EX (pp)", levelText, "p (bootstrap)", "MDE (pp)", "p (McNemar)", "Orders for MDE ≤ |Δ|", "Queries", "Seeds", "B", "Seed", "Interval"],
    align: ["l", "l", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r", "l"],
    rows,
    notes: [
      `Paired query-cluster bootstrap: each resample draws queries with replacement, each keeping its outcomes under every stream seed for both methods; B = ${resamples}, seed ${seed}, ${method} ${levelText.replace(" CI", "")} interval.`,
      "Bootstrap p: two-sided, from the same resamples. MDE: the Δ this design (queries × stream orders, observed discordance) detects with 80% power at α = 0.05, 2.80 × the bootstrap standard error.",
      ...ordersNote(data, opts),
      "The CSV adds the McNemar p (exact binomial test on per-query majority outcomes), the stream orders needed for MDE ≤ |Δ|, queries, seeds, B, seed and interval type.",
      "Calibration by simulation at the paper's scale (coverage of the interval, the tests' rejection of a true null, power at the MDE): METHOD.md §9.1.",
    ],
    data,
    csvOnly: [6, 7, 8, 9, 10, 11, 12],
  };
}

/** The Table 2 note on how many stream orders would separate MERIT from Dynamic RAG (METHOD.md §9, beyond the paper). */
function ordersNote(data: readonly Record<string, DataValue>[], sel: TableSelection): string[] {
  return data
    .filter((r) => r.other === "dynamic_rag")
    .map((r) => {
      const who = `${displayName(String(r.reference), sel)} vs ${displayName("dynamic_rag", sel)} on ${displayName(String(r.dataset), sel)}`;
      const d = differenceFormat(sel).delta(r.delta as number, 2);
      return r.orders_needed === null
        ? `${who}: at the observed Δ ${d} pp no number of stream orders reaches MDE ≤ |Δ| (Δ = 0, one seed, or the between-query variance alone is too large: only more queries help).`
        : `${who}: ${r.orders_needed} stream orders would give MDE ≤ |Δ| = ${fixed(Math.abs(r.delta as number), 2)} pp (the design has ${String(r.seeds).split(" ").length}).`;
    });
}

/**
 * Table 3's columns in the paper's marking: [cell index, decimals, lower is better]. Rep. higher is
 * better; Steps, Osc., Tok. and Calls lower (fewer generations, revisits, tokens and calls).
 */
const TABLE3_MARKS: [key: string, column: number, decimals: number, lowerIsBetter: boolean][] = [
  ["repaired", 2, 1, false], ["steps", 3, 3, true], ["oscillation_pct", 4, 2, true], ["tokens_millions", 5, 3, true], ["llm_calls", 6, 0, true],
];

/**
 * Table 3: repair behaviour per dataset × method, each value the mean over seeds (paper layout: best
 * bold, second underlined per dataset). `k`: the runs' K, named in the Steps note (null: the runs'
 * own K differ, a study's arms).
 */
export function repairTable(runs: readonly RunSummary[], sel: TableSelection = {}, k: number | null = 7): Table {
  const rows: Cell[][] = [];
  const data: Record<string, DataValue>[] = [];
  const rulesBefore: number[] = [];
  for (const dataset of tableDatasets(runs, sel)) {
    const blockStart = rows.length;
    // as Table 1: the marks rank the methods above the rule only
    let ranked = 0;
    let belowRule = false;
    for (const method of tableMethods(runs, sel)) {
      const selected = runsOf(runs, dataset, method);
      if (selected.length === 0) continue;
      if (method === sel.ruleBefore) rulesBefore.push(rows.length);
      if (method === sel.ruleBefore) belowRule = true;
      if (!belowRule) ranked++;
      const mean = (f: (r: RunSummary) => number) => meanStd(selected.map(f)).mean;
      const rep = mean((r) => r.metrics.repaired_count);
      const steps = mean((r) => r.metrics.steps);
      const osc = mean((r) => r.metrics.oscillation_rate * 100);
      const tokens = mean((r) => r.metrics.accounting.total_tokens / 1e6);
      const calls = mean((r) => r.metrics.accounting.llm_calls);
      rows.push([
        { text: displayName(dataset, sel) }, { text: displayName(method, sel) },
        { text: fixed(rep, 1) }, { text: fixed(steps, 3) }, { text: fixed(osc, 2) }, { text: fixed(tokens, 3) }, { text: grouped(calls, 0) },
      ]);
      data.push({ dataset, method, repaired: rep, steps, oscillation_pct: osc, tokens_millions: tokens, llm_calls: calls, seeds: selected.length });
    }
    if (sel.paperLayout) {
      const block = data.slice(blockStart);
      for (const [key, column, decimals, lower] of TABLE3_MARKS) markBest(rows.slice(blockStart), column, block.map((r, i) => (i < ranked ? (r[key] as number) : null)), decimals, lower);
    }
  }
  return {
    id: "table3",
    title: "Repair behaviour",
    columns: ["Dataset", "Method", "Rep.", "Steps", "Osc. (%)", "Tok. (M)", "Calls"],
    align: ["l", "l", "r", "r", "r", "r", "r"],
    rows,
    notes: [
      `Means over ${seedNote(runs)}. Rep.: initially failed queries repaired; Steps: repair generations per initial failure (unrepaired count ${k === null ? "the run's own K" : `K = ${k}`});`,
      "Osc.: trajectories revisiting an earlier attempt, over all queries; Tok.: prompt + output tokens (millions); Calls: LLM calls incl. the initial one.",
      ...(sel.paperLayout ? [`Per dataset, best in bold, second underlined: the most repairs, the fewest steps, oscillations, tokens and calls${rulesBefore.length > 0 ? ", among the paper's methods (above the rule; the methods below it are not ranked)" : ""}.`] : []),
    ],
    data,
    ...(rulesBefore.length > 0 ? { rulesBefore } : {}),
  };
}
