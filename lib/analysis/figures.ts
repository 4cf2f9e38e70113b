/**
 * Analysis stage, paper figures (METHOD.md §9): Vega-Lite v5 specifications built from run
 * summaries — EX per method with error bars, a forest plot of Δ with intervals, cumulative
 * repaired queries by repair step, and tokens vs EX. Pure data → spec; rendering is figure-render.ts.
 * @module
 */
import type { TopLevelSpec } from "vega-lite";
import { meanStd } from "./aggregate.ts";
import { MAX_REPAIR_STEPS } from "../experiment/run-metrics.ts";
import { runsOf, type RunSummary } from "./run-summary.ts";
import { tokensPerQuery } from "./table-peers.ts";
import type { Table } from "./table.ts";
import { displayName, tableDatasets, tableMethods, type TableSelection } from "./table-selection.ts";

/** Shared look: white background, DejaVu Sans (present wherever the kit renders PNGs), readable sizes. */
export const CONFIG = {
  background: "white",
  font: "DejaVu Sans",
  axis: { labelFontSize: 11, titleFontSize: 12 },
  legend: { labelFontSize: 11, titleFontSize: 12, labelLimit: 280 },
  title: { fontSize: 14 },
  // Vega's tableau10, then ten more distinct hues: a figure with more than ten methods (the peers with
  // MERIT and the control) gives each its own colour instead of wrapping to the first ones
  range: {
    category: [
      "#4c78a8", "#f58518", "#e45756", "#72b7b2", "#54a24b", "#eeca3b", "#b279a2", "#ff9da6", "#9d755d", "#bab0ac",
      "#1b9e77", "#7570b3", "#e7298a", "#66a61e", "#17becf", "#393b79", "#8c6d31", "#d62728", "#636363", "#843c39",
    ] as string[],
  },
} as const;

/** Distinct values in first-seen order (facet order = table order; Vega-Lite would sort them alphabetically). */
export function firstSeen(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/** Figure: EX (%) per method, one bar per dataset, error bars = ± sample std over seeds. */
export function exFigure(runs: readonly RunSummary[], sel: TableSelection = {}): TopLevelSpec {
  const values = tableDatasets(runs, sel).flatMap((dataset) =>
    tableMethods(runs, sel).flatMap((method) => {
      const selected = runsOf(runs, dataset, method);
      if (selected.length === 0) return [];
      const ex = meanStd(selected.map((r) => r.metrics.final_accuracy * 100));
      const sd = ex.std ?? 0;
      // bars are clamped to the possible EX range [0, 100] so a wide std does not leave the axis
      return [{ method: displayName(method, sel), dataset: displayName(dataset, sel), ex: ex.mean, lo: Math.max(0, ex.mean - sd), hi: Math.min(100, ex.mean + sd) }];
    }),
  );
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v5.json",
    title: "EX per method (mean ± std over seeds)",
    config: CONFIG,
    width: { step: 28 },
    height: 260,
    data: { values },
    encoding: {
      x: { field: "method", type: "nominal", title: "Method", sort: null, axis: { labelAngle: -30 } },
      xOffset: { field: "dataset", type: "nominal", sort: null },
      color: { field: "dataset", type: "nominal", title: "Dataset", sort: null },
    },
    layer: [
      { mark: "bar", encoding: { y: { field: "ex", type: "quantitative", title: "EX (%)", scale: { domain: [0, 100] } } } },
      { mark: { type: "errorbar", ticks: true }, encoding: { y: { field: "lo", type: "quantitative", title: "EX (%)" }, y2: { field: "hi" }, color: { value: "black" } } },
    ],
  };
}

/** Figure: forest plot of Δ (pp) with intervals, from the data records of Table 2 or Table 4. */
export function forestFigure(comparison: Table, sel: TableSelection = {}): TopLevelSpec {
  const values = comparison.data
    .filter((r) => typeof r.delta === "number" && typeof r.lo === "number" && typeof r.hi === "number")
    .map((r) => ({
      comparison: `${displayName(String(r.reference ?? r.method), sel)} vs ${displayName(String(r.other ?? "full"), sel)}`,
      dataset: displayName(String(r.dataset), sel),
      delta: r.delta,
      lo: r.lo,
      hi: r.hi,
    }));
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v5.json",
    title: "Difference in EX with confidence intervals",
    config: CONFIG,
    data: { values },
    facet: { row: { field: "dataset", type: "nominal", title: null, sort: firstSeen(values.map((v) => v.dataset)) } },
    spec: {
      width: 360,
      layer: [
        { mark: { type: "rule", strokeDash: [4, 3], color: "gray" }, encoding: { x: { datum: 0, type: "quantitative" } } },
        { mark: "rule", encoding: { y: { field: "comparison", type: "nominal", title: null, sort: null, axis: { labelLimit: 320 } }, x: { field: "lo", type: "quantitative", title: "Δ EX (pp)" }, x2: { field: "hi" } } },
        { mark: { type: "point", filled: true, size: 60 }, encoding: { y: { field: "comparison", type: "nominal", sort: null }, x: { field: "delta", type: "quantitative" } } },
      ],
    },
  };
}

/**
 * Figure: cumulative repaired queries by repair step (mean over seeds): at step s, the initially
 * failed queries that end correct after at most s repair generations, s = 0..K.
 */
export function cumulativeRepairFigure(runs: readonly RunSummary[], sel: TableSelection = {}, maxRepairSteps = MAX_REPAIR_STEPS): TopLevelSpec {
  const values = cumulativeRepairs(runs, sel, maxRepairSteps);
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v5.json",
    title: "Cumulative repaired queries by repair step",
    config: CONFIG,
    data: { values },
    facet: { column: { field: "dataset", type: "nominal", title: null, sort: firstSeen(values.map((v) => v.dataset)) } },
    resolve: { scale: { y: "independent" } },
    spec: {
      width: 240,
      height: 200,
      mark: { type: "line", point: true },
      encoding: {
        x: { field: "step", type: "quantitative", title: "Repair step", axis: { tickMinStep: 1 }, scale: { domain: [0, maxRepairSteps] } },
        // At least [0, 1], so a run with no repairs still shows a readable axis.
        y: { field: "repaired", type: "quantitative", title: "Repaired queries", scale: { domainMin: 0, domainMax: Math.max(1, ...values.map((v) => v.repaired)) } },
        color: { field: "method", type: "nominal", title: "Method", sort: null },
      },
    },
  };
}

/** The data of cumulativeRepairFigure: one record per (dataset, method, step). */
export function cumulativeRepairs(runs: readonly RunSummary[], sel: TableSelection, maxRepairSteps: number): { dataset: string; method: string; step: number; repaired: number }[] {
  return tableDatasets(runs, sel).flatMap((dataset) =>
    tableMethods(runs, sel).flatMap((method) => {
      const selected = runsOf(runs, dataset, method);
      if (selected.length === 0) return [];
      return Array.from({ length: maxRepairSteps + 1 }, (_, step) => ({
        dataset: displayName(dataset, sel),
        method: displayName(method, sel),
        step,
        repaired: meanStd(selected.map((r) => r.queries.filter((q) => !q.initial_correct && q.final_correct && q.repair_steps <= step).length)).mean,
      }));
    }),
  );
}

/** Figure: total tokens (millions) vs EX (%), one point per (dataset, method), means over seeds. */
export function tokensVsExFigure(runs: readonly RunSummary[], sel: TableSelection = {}): TopLevelSpec {
  const values = tableDatasets(runs, sel).flatMap((dataset) =>
    tableMethods(runs, sel).flatMap((method) => {
      const selected = runsOf(runs, dataset, method);
      if (selected.length === 0) return [];
      return [{
        dataset: displayName(dataset, sel),
        method: displayName(method, sel),
        tokens: meanStd(selected.map((r) => r.metrics.accounting.total_tokens / 1e6)).mean,
        ex: meanStd(selected.map((r) => r.metrics.final_accuracy * 100)).mean,
        labelAbove: "",
        labelBelow: "",
      }];
    }),
  );
  // Methods at the same point would print their names on top of each other: label each distinct
  // point once, with every method it stands for.
  const groups = new Map<string, typeof values>();
  for (const v of values) {
    const key = `${v.dataset}|${v.tokens.toPrecision(6)}|${v.ex.toPrecision(6)}`;
    groups.set(key, [...(groups.get(key) ?? []), v]);
  }
  // Neighbouring points alternate above / below, in token order, so close labels do not collide.
  [...groups.values()]
    .sort((a, b) => a[0].tokens - b[0].tokens)
    .forEach((group, i) => {
      group[0][i % 2 === 0 ? "labelAbove" : "labelBelow"] = group.map((v) => v.method).join(", ");
    });
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v5.json",
    title: "Token cost vs execution accuracy",
    config: CONFIG,
    width: 360,
    height: 260,
    data: { values },
    encoding: {
      x: { field: "tokens", type: "quantitative", title: "Total tokens (millions)" },
      y: { field: "ex", type: "quantitative", title: "EX (%)", scale: { zero: false } },
    },
    layer: [
      { mark: { type: "point", filled: true, size: 70 }, encoding: { color: { field: "method", type: "nominal", title: "Method", sort: null }, shape: { field: "dataset", type: "nominal", title: "Dataset", sort: null } } },
      { mark: { type: "text", align: "left", dx: 7, dy: -9, fontSize: 10 }, encoding: { text: { field: "labelAbove" } } },
      { mark: { type: "text", align: "left", dx: 7, dy: 11, fontSize: 10 }, encoding: { text: { field: "labelBelow" } } },
    ],
  };
}

/** One point of the budget-matched view: a (dataset, method) at its mean tokens per query and EX. */
export interface ParetoPoint {
  dataset: string;
  method: string;
  /** Prompt + output tokens of every call kind per query, mean over seeds. */
  tokens: number;
  /** EX (%), mean over seeds. */
  ex: number;
  /** No other method of the dataset has at most its tokens and at least its EX, one of them strictly better. */
  front: boolean;
}

/**
 * The points of {@link paretoFigure}, raw names (tables' order): per dataset, every method of
 * `methods` (default: the selection's) with runs, and whether it is on the Pareto front of EX against
 * tokens per query (higher EX, fewer tokens). Methods at the same point are both on the front or neither.
 */
export function paretoPoints(runs: readonly RunSummary[], sel: TableSelection = {}): ParetoPoint[] {
  return tableDatasets(runs, sel).flatMap((dataset) => {
    const points = tableMethods(runs, sel).flatMap((method) => {
      const selected = runsOf(runs, dataset, method);
      if (selected.length === 0) return [];
      return [{
        dataset,
        method,
        tokens: meanStd(selected.map(tokensPerQuery)).mean,
        ex: meanStd(selected.map((r) => r.metrics.final_accuracy * 100)).mean,
        front: false,
      }];
    });
    for (const p of points) p.front = !points.some((q) => q.tokens <= p.tokens && q.ex >= p.ex && (q.tokens < p.tokens || q.ex > p.ex));
    return points;
  });
}

/**
 * Figure, the budget-matched view (issue "The peers on the same stream" §3): EX (%) against total
 * tokens per query (every call kind: repair, reflection and the peers' own judge, distill, curate, …
 * calls, plus the embedding tokens where counted: tokensPerQuery), one point per method, one panel per dataset; the non-dominated methods (paretoPoints) are
 * filled and joined by the front's step line, the dominated ones hollow. A method below the line
 * spends more tokens than another that is at least as accurate.
 */
export function paretoFigure(runs: readonly RunSummary[], sel: TableSelection = {}): TopLevelSpec {
  const values = paretoPoints(runs, sel).map((p) => ({ ...p, dataset: displayName(p.dataset, sel), method: displayName(p.method, sel), status: p.front ? "Pareto front" : "dominated" }));
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v5.json",
    title: "Budget-matched view: EX vs tokens per query (Pareto front filled on the dashed line, dominated hollow)",
    config: CONFIG,
    data: { values },
    facet: { column: { field: "dataset", type: "nominal", title: null, sort: firstSeen(values.map((v) => v.dataset)) } },
    resolve: { scale: { x: "independent", y: "independent" } },
    spec: {
      width: 480,
      height: 260,
      encoding: {
        x: { field: "tokens", type: "quantitative", title: "Tokens per query (all call kinds + embedding)", scale: { zero: false } },
        y: { field: "ex", type: "quantitative", title: "EX (%)", scale: { zero: false } },
      },
      layer: [
        { transform: [{ filter: "datum.front" }], mark: { type: "line", interpolate: "step-after", color: "gray", strokeDash: [4, 3] }, encoding: { order: { field: "tokens", type: "quantitative" } } },
        { mark: { type: "point", size: 70, strokeWidth: 2 }, encoding: { color: { field: "method", type: "nominal", title: "Method", sort: null }, shape: { field: "status", type: "nominal", title: null, sort: ["Pareto front", "dominated"], legend: null }, fill: { condition: { test: "datum.front", field: "method", type: "nominal", sort: null }, value: "white" } } },
        // labels slanted up to the right: points close in tokens (often at one EX) keep their labels apart
        { mark: { type: "text", align: "left", baseline: "middle", angle: -35, dx: 6, dy: -6, fontSize: 9 }, encoding: { text: { field: "method" } } },
      ],
    },
  };
}
