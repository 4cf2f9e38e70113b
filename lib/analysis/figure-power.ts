/**
 * Analysis stage, power figure (METHOD.md §9, beyond the paper): the minimum detectable effect of
 * each Table 2 comparison as a function of the number of stream orders (power.ts `mdeAt`), with the
 * observed |Δ| as a point at the design's own number of orders: where a line falls below its
 * point, that many orders would detect the observed difference with 80% power at α = 0.05.
 * @module
 */
import type { TopLevelSpec } from "vega-lite";
import { CONFIG, firstSeen } from "./figures.ts";
import { mdeAt } from "./power.ts";
import type { Table } from "./table.ts";
import { displayName, type TableSelection } from "./table-selection.ts";

/** Largest number of stream orders drawn (at least 12, more when a comparison needs more, at most 60). */
function maxOrders(comparison: Table): number {
  const needed = comparison.data.map((r) => (typeof r.orders_needed === "number" ? r.orders_needed : 0));
  return Math.min(60, Math.max(12, ...needed));
}

/** Figure: MDE (pp) vs stream orders, one line per comparison, faceted by dataset; points = observed |Δ|. */
export function mdeFigure(comparison: Table, sel: TableSelection = {}): TopLevelSpec {
  const top = maxOrders(comparison);
  const lines: { dataset: string; comparison: string; orders: number; mde: number }[] = [];
  const points: { dataset: string; comparison: string; orders: number; delta: number }[] = [];
  for (const r of comparison.data) {
    if (typeof r.se !== "number" || typeof r.mde_factor !== "number") continue;
    const power = { se: r.se, factor: r.mde_factor, seeds: String(r.seeds).split(" ").length, varBetween: r.var_between as number, varWithin: r.var_within as number };
    const name = `${displayName(String(r.reference), sel)} vs ${displayName(String(r.other), sel)}`;
    const dataset = displayName(String(r.dataset), sel);
    for (let s = 1; s <= top; s++) lines.push({ dataset, comparison: name, orders: s, mde: mdeAt(power, s) });
    points.push({ dataset, comparison: name, orders: power.seeds, delta: Math.abs(r.delta as number) });
  }
  const color = { field: "comparison", type: "nominal" as const, title: "Comparison", sort: null, legend: { labelLimit: 320 } };
  const top_y = Math.max(1, ...lines.map((l) => l.mde), ...points.map((p) => p.delta));
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v5.json",
    title: "Minimum detectable effect (80% power, α = 0.05) vs stream orders",
    config: CONFIG,
    data: { values: [...lines.map((l) => ({ ...l, kind: "mde" })), ...points.map((p) => ({ ...p, kind: "observed" }))] },
    facet: { column: { field: "dataset", type: "nominal", title: null, sort: firstSeen(lines.map((l) => l.dataset)) } },
    spec: {
      width: 280,
      height: 220,
      layer: [
        {
          transform: [{ filter: "datum.kind === 'mde'" }],
          mark: { type: "line", point: false },
          encoding: {
            x: { field: "orders", type: "quantitative", title: "Stream orders", scale: { domain: [1, top] }, axis: { tickMinStep: 1 } },
            y: { field: "mde", type: "quantitative", title: "MDE (lines), observed |Δ| (diamonds), pp", scale: { domain: [0, top_y] } },
            color,
          },
        },
        {
          transform: [{ filter: "datum.kind === 'observed'" }],
          mark: { type: "point", filled: true, size: 70, shape: "diamond" },
          encoding: { x: { field: "orders", type: "quantitative" }, y: { field: "delta", type: "quantitative" }, color },
        },
      ],
    },
  };
}
