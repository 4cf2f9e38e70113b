/**
 * Analysis stage, paper figures (METHOD.md §9): Vega-Lite v5 specifications built from run
 * summaries — EX per method with error bars, a forest plot of Δ with intervals, cumulative
 * repaired queries by repair step, and tokens vs EX. Pure data → spec; rendering is figure-render.ts.
 * @module
 */
import type { TopLevelSpec } from "vega-lite";
import { meanStd } from "./aggregate.ts";
import { MAX_REPAIR_STEPS } from "../experiment/run-metrics.ts";
import { lineHeight, linearAxis, paddedDomain, placeLabels } from "./figure-labels.ts";
import { runsOf, type RunSummary } from "./run-summary.ts";
import { embeddingTokensPerQuery, llmTokensPerQuery } from "./table-peers.ts";
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

/**
 * The report's method → colour map (issue 37 §3: a method keeps its colour in every figure of one
 * report): CONFIG's palette in `methods` order (raw names, first occurrence; wrapping beyond its 20
 * colours). `merit report` builds it once over every method it shows and passes it as `sel.colors`.
 */
export function methodColors(methods: readonly string[]): Record<string, string> {
  const palette = CONFIG.range.category;
  return Object.fromEntries(firstSeen(methods).map((m, i) => [m, palette[i % palette.length]]));
}

/**
 * The colour scale of a figure that shows `methods` (raw names, in the figure's order) under their
 * display names: each method in the report's colour (`sel.colors`), the legend listing only the
 * figure's own methods. Without a map, undefined: the palette in the figure's order (Vega's default).
 */
export function methodColorScale(methods: readonly string[], sel: TableSelection): { domain: string[]; range: string[] } | undefined {
  const colors = sel.colors;
  if (colors === undefined) return undefined;
  const shown = firstSeen(methods);
  const fallback = methodColors([...Object.keys(colors), ...shown]);
  return { domain: shown.map((m) => displayName(m, sel)), range: shown.map((m) => colors[m] ?? fallback[m]) };
}

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

/**
 * Figure: forest plot of Δ (pp) with intervals, from the data records of Table 2 or Table 4, each
 * row named "A − B" for its Δ = EX(A) − EX(B): the sign its table prints (Table 2: the reference −
 * other; Table 4: ablation − full).
 */
export function forestFigure(comparison: Table, sel: TableSelection = {}): TopLevelSpec {
  const values = comparison.data
    .filter((r) => typeof r.delta === "number" && typeof r.lo === "number" && typeof r.hi === "number")
    .map((r) => ({
      comparison: `${displayName(String(r.reference ?? r.method), sel)} − ${displayName(String(r.other ?? "full"), sel)}`,
      dataset: displayName(String(r.dataset), sel),
      delta: r.delta,
      lo: r.lo,
      hi: r.hi,
    }));
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v5.json",
    title: "Difference in EX, Δ = EX(A) − EX(B) for each row A − B, with confidence intervals",
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
 * failed queries that end correct after at most s repair generations, s = 0..K of each method's own
 * K (a run's `max_repair_steps`, else `maxRepairSteps`: the equal-budget control runs past the
 * others' K), on an axis of whole steps.
 */
export function cumulativeRepairFigure(runs: readonly RunSummary[], sel: TableSelection = {}, maxRepairSteps = MAX_REPAIR_STEPS): TopLevelSpec {
  const values = cumulativeRepairs(runs, sel, maxRepairSteps);
  const lastStep = Math.max(maxRepairSteps, ...values.map((v) => v.step));
  const color = methodColorScale(firstSeen(values.map((v) => v.raw)), sel);
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
        // whole repair steps only: explicit tick values (tickMinStep alone still drew 0.5 steps at small K)
        x: { field: "step", type: "quantitative", title: "Repair step", axis: { values: integerTicks(lastStep), format: "d" }, scale: { domain: [0, lastStep] } },
        // At least [0, 1], so a run with no repairs still shows a readable axis.
        y: { field: "repaired", type: "quantitative", title: "Repaired queries", scale: { domainMin: 0, domainMax: Math.max(1, ...values.map((v) => v.repaired)) } },
        color: { field: "method", type: "nominal", title: "Method", sort: null, ...(color ? { scale: color } : {}) },
      },
    },
  };
}

/** Tick values 0..last, every whole step up to 20 steps, else a whole stride giving at most 20 ticks. */
export function integerTicks(last: number): number[] {
  const stride = Math.max(1, Math.ceil(last / 20));
  return Array.from({ length: Math.floor(last / stride) + 1 }, (_, i) => i * stride);
}

/** The data of cumulativeRepairFigure: one record per (dataset, method, step), steps 0..the method's K (the largest of its runs'). */
export function cumulativeRepairs(runs: readonly RunSummary[], sel: TableSelection, maxRepairSteps: number): { dataset: string; method: string; raw: string; step: number; repaired: number }[] {
  return tableDatasets(runs, sel).flatMap((dataset) =>
    tableMethods(runs, sel).flatMap((method) => {
      const selected = runsOf(runs, dataset, method);
      if (selected.length === 0) return [];
      const k = Math.max(...selected.map((r) => r.max_repair_steps ?? maxRepairSteps));
      return Array.from({ length: k + 1 }, (_, step) => ({
        dataset: displayName(dataset, sel),
        method: displayName(method, sel),
        raw: method,
        step,
        repaired: meanStd(selected.map((r) => r.queries.filter((q) => !q.initial_correct && q.final_correct && q.repair_steps <= step).length)).mean,
      }));
    }),
  );
}

/** Font size of point labels, px. */
const LABEL_FONT = 10;

/** A point of a labelled scatter panel: its data position, display method, raw method, and extra fields for the marks. */
export interface ScatterPoint {
  x: number;
  y: number;
  method: string;
  raw: string;
  [field: string]: string | number | boolean;
}

/**
 * The label layers of one scatter panel (`width` × `height` px, fixed domains): points at one
 * position share one label naming every method there; labels placed by figure-labels.ts so none
 * overlaps another or a point, joined to their point by a grey leader line once moved off its row.
 */
export function labelLayers(points: readonly ScatterPoint[], x: [number, number], y: [number, number], width: number, height: number, xField: string, yField: string, titles: { x: string; y: string }): object[] {
  const groups = new Map<string, ScatterPoint[]>();
  for (const p of points) {
    const key = `${p.x.toPrecision(6)}|${p.y.toPrecision(6)}`;
    groups.set(key, [...(groups.get(key) ?? []), p]);
  }
  const ax = linearAxis(x, width, false);
  const ay = linearAxis(y, height, true);
  // a shared label lists its methods one a line once they would not fit on one
  const sites = [...groups.values()].map((g) => {
    const names = g.map((p) => p.method);
    return { x: ax.toPixel(g[0].x), y: ay.toPixel(g[0].y), text: names.length > 2 ? names : names.join(", "), at: g[0] };
  });
  const placed = placeLabels(sites, width, height, LABEL_FONT);
  const labels = sites.map((site, i) => ({ [xField]: site.at.x, [yField]: site.at.y, label: site.text, lx: ax.toData(placed[i].x), ly: ay.toData(placed[i].y), leaderX: ax.toData(placed[i].x + (placed[i].align === "left" ? -2 : 2)), align: placed[i].align, leader: placed[i].leader }));
  const text = (align: "left" | "right") => ({
    data: { values: labels.filter((l) => l.align === align) },
    mark: { type: "text", align, baseline: "middle", fontSize: LABEL_FONT, lineHeight: lineHeight(LABEL_FONT) },
    encoding: { x: { field: "lx", type: "quantitative", title: titles.x }, y: { field: "ly", type: "quantitative", title: titles.y }, text: { field: "label" } },
  });
  return [
    {
      data: { values: labels.filter((l) => l.leader) },
      mark: { type: "rule", color: "#999", strokeWidth: 0.8 },
      encoding: { x: { field: xField, type: "quantitative", title: titles.x }, y: { field: yField, type: "quantitative", title: titles.y }, x2: { field: "leaderX" }, y2: { field: "ly" } },
    },
    text("left"),
    text("right"),
  ];
}

/**
 * Figure: LLM tokens (millions; every LLM call kind, Table 3's Tok.) vs EX (%), one point per
 * (dataset, method), means over seeds; each point named by a label that never overprints another.
 */
export function tokensVsExFigure(runs: readonly RunSummary[], sel: TableSelection = {}): TopLevelSpec {
  const values: ScatterPoint[] = tableDatasets(runs, sel).flatMap((dataset) =>
    tableMethods(runs, sel).flatMap((method) => {
      const selected = runsOf(runs, dataset, method);
      if (selected.length === 0) return [];
      return [{
        dataset: displayName(dataset, sel),
        method: displayName(method, sel),
        raw: method,
        x: meanStd(selected.map((r) => r.metrics.accounting.total_tokens / 1e6)).mean,
        y: meanStd(selected.map((r) => r.metrics.final_accuracy * 100)).mean,
      }];
    }),
  );
  const width = 360;
  const height = 260;
  const x: [number, number] = [0, Math.max(...values.map((v) => v.x), 1e-6) * 1.08];
  const y = paddedDomain(values.map((v) => v.y), 0.15, 10);
  const color = methodColorScale(values.map((v) => v.raw), sel);
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v5.json",
    title: "LLM token cost vs execution accuracy",
    config: CONFIG,
    width,
    height,
    layer: [
      {
        data: { values: values.map((v) => ({ ...v, tokens: v.x, ex: v.y })) },
        mark: { type: "point", filled: true, size: 70, opacity: 0.85 },
        encoding: {
          x: { field: "tokens", type: "quantitative", title: "LLM tokens (millions, every LLM call kind)", scale: { domain: x, nice: false, zero: false } },
          y: { field: "ex", type: "quantitative", title: "EX (%)", scale: { domain: y, nice: false, zero: false } },
          color: { field: "method", type: "nominal", title: "Method", sort: null, ...(color ? { scale: color } : {}) },
          shape: { field: "dataset", type: "nominal", title: "Dataset", sort: null },
        },
      },
      ...labelLayers(values, x, y, width, height, "tokens", "ex", { x: "LLM tokens (millions, every LLM call kind)", y: "EX (%)" }),
    ],
  } as TopLevelSpec;
}

/** One point of the EX-vs-tokens view: a (dataset, method) at its mean tokens per query and EX. */
export interface ParetoPoint {
  dataset: string;
  method: string;
  /** Prompt + output tokens of every LLM call kind per query, mean over seeds. */
  tokens: number;
  /** Embedding tokens per query (the embedder's own tokenizer), mean over seeds; null when some run could not count them. */
  embeddingTokens: number | null;
  /** EX (%), mean over seeds. */
  ex: number;
  /** No other method of the dataset has at most its LLM tokens and at least its EX, one of them strictly better. */
  front: boolean;
  /** The same against embedding tokens (among the methods whose embedding tokens are known); false when its own are unknown. */
  embeddingFront: boolean;
}

/** Whether each point is on the Pareto front of (cost ↓, ex ↑) among the points with a cost. */
function frontOf(points: readonly { cost: number | null; ex: number }[]): boolean[] {
  return points.map((p) => p.cost !== null && !points.some((q) => q.cost !== null && q.cost <= p.cost! && q.ex >= p.ex && (q.cost < p.cost! || q.ex > p.ex)));
}

/**
 * The points of {@link paretoFigure}, raw names (tables' order): per dataset, every method of
 * `methods` (default: the selection's) with runs, and whether it is on the Pareto front of EX against
 * LLM tokens per query (higher EX, fewer tokens), and against embedding tokens per query. Methods at
 * the same point are both on the front or neither.
 */
export function paretoPoints(runs: readonly RunSummary[], sel: TableSelection = {}): ParetoPoint[] {
  return tableDatasets(runs, sel).flatMap((dataset) => {
    const points: ParetoPoint[] = tableMethods(runs, sel).flatMap((method) => {
      const selected = runsOf(runs, dataset, method);
      if (selected.length === 0) return [];
      const embedding = selected.map(embeddingTokensPerQuery);
      return [{
        dataset,
        method,
        tokens: meanStd(selected.map(llmTokensPerQuery)).mean,
        embeddingTokens: embedding.every((v) => v !== null) ? meanStd(embedding as number[]).mean : null,
        ex: meanStd(selected.map((r) => r.metrics.final_accuracy * 100)).mean,
        front: false,
        embeddingFront: false,
      }];
    });
    const llm = frontOf(points.map((p) => ({ cost: p.tokens, ex: p.ex })));
    const emb = frontOf(points.map((p) => ({ cost: p.embeddingTokens, ex: p.ex })));
    points.forEach((p, i) => {
      p.front = llm[i];
      p.embeddingFront = emb[i];
    });
    return points;
  });
}

/**
 * Figure: EX (%) against cost per query, one row of panels per dataset: LLM tokens per query (every
 * LLM call kind: repair, reflection and the peers' own judge, distill, curate, … calls), and beside it
 * embedding tokens per query when some method of the dataset embedded anything (never added to the
 * LLM tokens: different models' tokens). One point per method; the non-dominated methods of each panel
 * (paretoPoints) are filled and joined by the front's step line, the dominated ones hollow; every point
 * labelled without overprinting. A point below the line spends more of that cost than a method at
 * least as accurate. Means over orders only: the peers table's intervals say which EX differences are resolved.
 */
export function paretoFigure(runs: readonly RunSummary[], sel: TableSelection = {}): TopLevelSpec {
  const points = paretoPoints(runs, sel);
  const color = methodColorScale(points.map((p) => p.method), sel);
  const colorScale = color ? { scale: color } : {};
  const width = 420;
  const height = 260;
  const panel = (dataset: string, axis: "llm" | "embedding") => {
    const values: ScatterPoint[] = points
      .filter((p) => p.dataset === dataset && (axis === "llm" || p.embeddingTokens !== null))
      .map((p) => ({ method: displayName(p.method, sel), raw: p.method, x: axis === "llm" ? p.tokens : p.embeddingTokens!, y: p.ex, front: axis === "llm" ? p.front : p.embeddingFront }))
      .map((v) => ({ ...v, cost: v.x, ex: v.y, status: v.front ? "Pareto front" : "dominated" }));
    const x = paddedDomain(values.map((v) => v.x), 0.08, 1);
    const y = paddedDomain(values.map((v) => v.y), 0.15, 10);
    const title = axis === "llm" ? "LLM tokens per query (every LLM call kind)" : "Embedding tokens per query (embedder's tokenizer)";
    return {
      title: `${displayName(dataset, sel)}: EX vs ${axis === "llm" ? "LLM" : "embedding"} tokens`,
      width,
      height,
      layer: [
        {
          data: { values: values.filter((v) => v.front) },
          mark: { type: "line", interpolate: "step-after", color: "gray", strokeDash: [4, 3] },
          encoding: { x: { field: "cost", type: "quantitative", title, scale: { domain: x, nice: false, zero: false } }, y: { field: "ex", type: "quantitative", title: "EX (%)", scale: { domain: y, nice: false, zero: false } }, order: { field: "cost", type: "quantitative" } },
        },
        {
          data: { values },
          mark: { type: "point", size: 70, strokeWidth: 2, opacity: 0.9 },
          encoding: {
            x: { field: "cost", type: "quantitative", title, scale: { domain: x, nice: false, zero: false } },
            y: { field: "ex", type: "quantitative", title: "EX (%)", scale: { domain: y, nice: false, zero: false } },
            color: { field: "method", type: "nominal", title: "Method", sort: null, ...colorScale },
            shape: { field: "status", type: "nominal", title: null, sort: ["Pareto front", "dominated"], legend: null },
            fill: { condition: { test: "datum.front", field: "method", type: "nominal", sort: null, ...colorScale }, value: "white" },
          },
        },
        ...labelLayers(values, x, y, width, height, "cost", "ex", { x: title, y: "EX (%)" }),
      ],
    };
  };
  const rows = tableDatasets(runs, sel)
    .filter((d) => points.some((p) => p.dataset === d))
    .map((d) => ({ hconcat: [panel(d, "llm"), ...(points.some((p) => p.dataset === d && (p.embeddingTokens ?? 0) > 0) ? [panel(d, "embedding")] : [])] }));
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v5.json",
    title: "EX vs cost per query: LLM tokens and embedding tokens on separate axes (Pareto front filled on the dashed line, dominated hollow)",
    config: CONFIG,
    vconcat: rows,
    resolve: { scale: { x: "independent", y: "independent" } },
  } as TopLevelSpec;
}
