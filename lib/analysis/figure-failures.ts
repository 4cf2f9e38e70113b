/**
 * Analysis stage, failure-composition figure (METHOD.md §8 initial/final failure breakdowns, §9):
 * stacked bars of failures per coarse type, for the initial attempt and the final attempt of every
 * method (mean count over seeds). The initial bars show the shared cache's failures, the final bars
 * what each method left unrepaired. Every label present is shown: METHOD.md §3's types first in their
 * order, then any other label (a method's classify hook's, lib/methods/hooks.ts) sorted, as Table 5
 * lists them; a label is never dropped.
 * @module
 */
import type { TopLevelSpec } from "vega-lite";
import { ERROR_TYPES } from "../repair/trajectory.ts";
import { meanStd } from "./aggregate.ts";
import { CONFIG, firstSeen } from "./figures.ts";
import { runsOf, type RunSummary } from "./run-summary.ts";
import { displayName, tableDatasets, tableMethods, type TableSelection } from "./table-selection.ts";

/** One stacked segment: mean count of `type` failures at `phase` for (dataset, method). */
export interface FailureSegment {
  dataset: string;
  method: string;
  phase: "Initial" | "Final";
  type: string;
  /** Position of `type` in {@link failureTypes} order (stack and legend order). */
  order: number;
  count: number;
}

/**
 * The figure's failure labels (stack order and colour domain): METHOD.md §3's types in their order
 * (all of them, so a type keeps its colour across figures), then every other label in the runs'
 * initial and final breakdowns (a classify hook's) sorted.
 */
export function failureTypes(runs: readonly RunSummary[]): string[] {
  const known = ERROR_TYPES as readonly string[];
  const others = new Set(runs.flatMap((r) => [...Object.keys(r.metrics.initial_failure_breakdown), ...Object.keys(r.metrics.final_failure_breakdown)]).filter((t) => !known.includes(t)));
  return [...known, ...[...others].sort()];
}

/** Data of failureCompositionFigure: segments with a non-zero mean, in dataset, method, phase, type order. */
export function failureComposition(runs: readonly RunSummary[], sel: TableSelection = {}): FailureSegment[] {
  const types = failureTypes(runs);
  return tableDatasets(runs, sel).flatMap((dataset) =>
    tableMethods(runs, sel).flatMap((method) => {
      const selected = runsOf(runs, dataset, method);
      if (selected.length === 0) return [];
      return (["Initial", "Final"] as const).flatMap((phase) =>
        types.flatMap((type, order) => {
          const counts = selected.map((r) => (phase === "Initial" ? r.metrics.initial_failure_breakdown : r.metrics.final_failure_breakdown)[type] ?? 0);
          const count = meanStd(counts).mean;
          return count === 0 ? [] : [{ dataset: displayName(dataset, sel), method: displayName(method, sel), phase, type, order, count }];
        }),
      );
    }),
  );
}

/** Figure: stacked bars of failure counts by type; columns = initial / final, rows = datasets. */
export function failureCompositionFigure(runs: readonly RunSummary[], sel: TableSelection = {}): TopLevelSpec {
  const values = failureComposition(runs, sel);
  const types = failureTypes(runs);
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v5.json",
    title: "Failure composition by type (mean over seeds)",
    config: CONFIG,
    data: { values },
    facet: {
      row: { field: "dataset", type: "nominal", title: null, sort: firstSeen(values.map((v) => v.dataset)) },
      column: { field: "phase", type: "nominal", title: null, sort: ["Initial", "Final"] },
    },
    resolve: { scale: { y: "independent" } },
    spec: {
      width: { step: 30 },
      height: 220,
      mark: "bar",
      encoding: {
        x: { field: "method", type: "nominal", title: "Method", sort: null, axis: { labelAngle: -30 } },
        y: { field: "count", type: "quantitative", title: "Failed queries", stack: "zero" },
        color: { field: "type", type: "nominal", title: "Failure type", sort: types, scale: { domain: types } },
        order: { field: "order", type: "quantitative" },
        tooltip: [{ field: "type" }, { field: "count", format: ".1f" }],
      },
    },
  };
}
