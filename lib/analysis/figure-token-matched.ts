/**
 * Analysis stage, the token-matched figure (issue 37 §2; METHOD.md §13.8): per dataset, the long
 * Iterative run's EX against LLM tokens per query at every K′ = 0..K (prefix-runs.ts: the shorter runs
 * it holds as prefixes), one line with a point per K′, and every method of the report as a point at
 * its own EX and LLM tokens per query. A method above the line is more accurate than Iterative given
 * the same LLM tokens; below it, less. Embedding tokens are not on this axis (the Pareto figure has
 * them on their own).
 * @module
 */
import type { TopLevelSpec } from "vega-lite";
import { meanStd } from "./aggregate.ts";
import { CONFIG, labelLayers, methodColorScale, type ScatterPoint } from "./figures.ts";
import { paddedDomain } from "./figure-labels.ts";
import type { PrefixCurve } from "./prefix-runs.ts";
import { runsOf, type RunSummary } from "./run-summary.ts";
import { llmTokensPerQuery } from "./table-peers.ts";
import { displayName, tableMethods, type TableSelection } from "./table-selection.ts";

/** The figure `figures/token-matched.{svg,png}`: one panel per dataset with a long run. */
export function tokenMatchedFigure(runs: readonly RunSummary[], curves: readonly PrefixCurve[], sel: TableSelection = {}): TopLevelSpec {
  const width = 460;
  const height = 280;
  const methods = tableMethods(runs, sel).filter((m) => !curves.some((c) => c.method === m));
  const color = methodColorScale(methods, sel);
  const colorScale = color ? { scale: color } : {};
  const xTitle = "LLM tokens per query (every LLM call kind)";
  const panel = (curve: PrefixCurve) => {
    const line = curve.tokensPerQuery.map((t, k) => ({ tokens: t, ex: curve.ex[k], k: `K′ = ${k}` }));
    const points: ScatterPoint[] = methods.flatMap((m) => {
      const selected = runsOf(runs, curve.dataset, m);
      if (selected.length === 0) return [];
      const x = meanStd(selected.map(llmTokensPerQuery)).mean;
      const y = meanStd(selected.map((r) => r.metrics.final_accuracy * 100)).mean;
      return [{ method: displayName(m, sel), raw: m, x, y, tokens: x, ex: y }];
    });
    const x = paddedDomain([...line.map((l) => l.tokens), ...points.map((p) => p.x)], 0.08, 1);
    const y = paddedDomain([...line.map((l) => l.ex), ...points.map((p) => p.y)], 0.15, 10);
    const enc = (field: string, title: string, domain: [number, number]) => ({ field, type: "quantitative", title, scale: { domain, nice: false, zero: false } });
    const longName = displayName(curve.method, sel);
    return {
      title: `${displayName(curve.dataset, sel)}: ${longName} at K′ = 0..${curve.k} (one run at K = ${curve.k})`,
      width,
      height,
      layer: [
        {
          data: { values: line },
          mark: { type: "line", color: "#555555", strokeWidth: 1.5, point: { filled: true, size: 28, color: "#555555" } },
          encoding: { x: enc("tokens", xTitle, x), y: enc("ex", "EX (%)", y), order: { field: "tokens", type: "quantitative" }, tooltip: [{ field: "k" }, { field: "tokens", format: ".1f" }, { field: "ex", format: ".2f" }] },
        },
        // the curve's first K′ named below its point, the last above its point
        ...([[line[0], 14], [line[line.length - 1], -10]] as const).map(([at, dy]) => ({
          data: { values: [at] },
          mark: { type: "text", dy, fontSize: 10, color: "#555555" },
          encoding: { x: enc("tokens", xTitle, x), y: enc("ex", "EX (%)", y), text: { field: "k" } },
        })),
        {
          data: { values: points },
          mark: { type: "point", size: 80, strokeWidth: 2, filled: true, opacity: 0.9 },
          encoding: { x: enc("tokens", xTitle, x), y: enc("ex", "EX (%)", y), color: { field: "method", type: "nominal", title: "Method", sort: null, ...colorScale } },
        },
        ...labelLayers(points, x, y, width, height, "tokens", "ex", { x: xTitle, y: "EX (%)" }),
      ],
    };
  };
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v5.json",
    title: "EX vs LLM tokens per query: Iterative over K′ from one long run (line), each method a point above or below it",
    config: CONFIG,
    vconcat: curves.map(panel),
    resolve: { scale: { x: "independent", y: "independent" } },
  } as TopLevelSpec;
}
