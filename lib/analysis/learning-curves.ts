/**
 * Analysis stage, learning curves (METHOD.md §9, `merit report --curves`): cumulative execution
 * accuracy, and repair success among the initially failed queries, against stream position, per
 * (dataset, method), the mean over stream orders as a line and a paired query-cluster bootstrap band.
 *
 * Definition. A (dataset, method) has S runs (stream orders s) over one query set of n queries, kept
 * in ascending source_index order as q = 0..n−1 (the Table 2 bootstrap's rows). π_s(i) is the query
 * at stream position i = 1..n of order s; c_s(q) ∈ {0, 1} its final correctness and f(q) ∈ {0, 1}
 * whether it failed initially (f is the shared initial cache's, the same in every order).
 * - EX curve: EX_s(p) = (1/p) Σ_{i≤p} c_s(π_s(i)); the line is EX(p) = (1/S) Σ_s EX_s(p), in %.
 * - Repair curve: R_s(p) = Σ_{i≤p} f·c / Σ_{i≤p} f over the same positions (undefined while the order
 *   has met no initial failure); the line is the mean over orders at the positions where every order
 *   has met one, in %.
 * - Band: resample r draws n query indices with replacement (`PyRandom(seed)`, n consecutive
 *   `randbelow(n)` per resample, as the Table 2 bootstrap draws them; one fresh generator per
 *   (dataset, method), so every method sees the same resampled query sets — the band is paired
 *   across methods), giving multiplicities w_q (Σ w_q = n). Each order's resampled stream is its own
 *   sequence with query π_s(i) repeated w_{π_s(i)} times in place (queries drawn 0 times drop out),
 *   again n positions long; EX*_s(p) and R*_s(p) are the curves above along that stream, and the
 *   resample's line is their mean over orders. The band at p is the 2.5–97.5 % percentile
 *   (linear interpolation, as Table 2) of the B resampled lines; for the repair curve over the
 *   resamples in which it is defined at p (every order has met an initial failure), and only where
 *   the line is defined. At p = n the
 *   resampled EX is the Table 2 resample's EX of the method. Defaults: B = 1,000 (fewer than the
 *   tables' 10,000: a band is drawn, not tested), seed 0, level 0.95.
 * @module
 */
import type { TopLevelSpec } from "vega-lite";
import { MeritError } from "../errors.ts";
import { PyRandom } from "../random.ts";
import { quantile } from "./bootstrap.ts";
import { CONFIG, firstSeen, methodColorScale } from "./figures.ts";
import { runsOf, type RunSummary } from "./run-summary.ts";
import { displayName, tableDatasets, tableMethods, type TableSelection } from "./table-selection.ts";

/** Options of {@link learningCurves}. */
export interface LearningCurveOptions {
  /** Bootstrap resamples B. @default 1000 */
  resamples?: number;
  /** Seed of the resampling generator. @default 0 */
  seed?: number;
  /** Two-sided level of the band. @default 0.95 */
  level?: number;
}

/** Which curve a point belongs to. */
export type CurveKind = "ex" | "repair";

/** One point of a curve: the mean over orders and the band, in %; null where the repair curve is undefined. */
export interface CurvePoint {
  dataset: string;
  method: string;
  curve: CurveKind;
  /** Stream position p, 1..n. */
  position: number;
  mean: number | null;
  lo: number | null;
  hi: number | null;
}

/** The curves of one (dataset, method): arrays indexed by p − 1, values in % (NaN where undefined). */
export interface MethodCurves {
  ex: { mean: Float64Array; lo: Float64Array; hi: Float64Array };
  repair: { mean: Float64Array; lo: Float64Array; hi: Float64Array };
  orders: number;
  queries: number;
}

/**
 * The order of each run as query rows: stream[s][i] = row (ascending source_index) of the query at
 * position i of order s, with the per-order correctness and the shared initial failure flags.
 */
function streams(runs: readonly RunSummary[], queryIds?: readonly string[]): { order: Int32Array[]; correct: Uint8Array[]; failed: Uint8Array; n: number } {
  const ids = queryIds ?? runs[0].queries.map((q) => q.query_id);
  const row = new Map(ids.map((id, i) => [id, i]));
  const n = ids.length;
  const failed = new Uint8Array(n);
  for (const q of runs[0].queries) if (row.has(q.query_id)) failed[row.get(q.query_id)!] = q.initial_correct ? 0 : 1;
  const order: Int32Array[] = [];
  const correct: Uint8Array[] = [];
  for (const run of runs) {
    const label = `${run.dataset}/${run.method} seed ${run.stream_seed}`;
    if (run.queries.length !== n || run.queries.some((q) => !row.has(q.query_id))) {
      throw new MeritError(`learning curves: ${label} covers other queries than seed ${runs[0].stream_seed}; the orders of a method must visit one query set`);
    }
    const o = new Int32Array(n).fill(-1);
    const c = new Uint8Array(n);
    for (const q of run.queries) {
      const r = row.get(q.query_id)!;
      const p = q.stream_position;
      if (p === undefined || !Number.isInteger(p) || p < 0 || p >= n || o[p] !== -1) {
        throw new MeritError(`learning curves: ${label}: query ${q.query_id} has no distinct stream position in 0..${n - 1}; summarise the run with summarizeRun`);
      }
      o[p] = r;
      c[r] = q.final_correct ? 1 : 0;
      if ((q.initial_correct ? 0 : 1) !== failed[r]) throw new MeritError(`learning curves: ${label}: query ${q.query_id} differs in its initial outcome from seed ${runs[0].stream_seed}; the orders must share the initial cache`);
    }
    order.push(o);
    correct.push(c);
  }
  return { order, correct, failed, n };
}

/**
 * Mean curves over orders along the (resampled) streams: `weight[q]` repeats query q in place
 * (all ones for the original sample). Writes ex[p] and repair[p] (NaN where undefined) in %.
 */
function meanCurves(order: readonly Int32Array[], correct: readonly Uint8Array[], failed: Uint8Array, weight: Int32Array | null, ex: Float64Array, repair: Float64Array): void {
  const n = ex.length;
  const S = order.length;
  ex.fill(0);
  repair.fill(0);
  for (let s = 0; s < S; s++) {
    const o = order[s];
    const c = correct[s];
    let pos = 0;
    let hits = 0;
    let fails = 0;
    let repaired = 0;
    for (let i = 0; i < n; i++) {
      const q = o[i];
      const w = weight === null ? 1 : weight[q];
      for (let k = 0; k < w; k++) {
        hits += c[q];
        fails += failed[q];
        repaired += failed[q] & c[q];
        ex[pos] += hits / (pos + 1);
        // NaN (no initial failure met yet) stays NaN in the sum: the mean over orders is undefined
        repair[pos] += fails === 0 ? NaN : repaired / fails;
        pos += 1;
      }
    }
  }
  for (let p = 0; p < n; p++) {
    ex[p] = (ex[p] * 100) / S;
    repair[p] = (repair[p] * 100) / S;
  }
}

/**
 * The largest band B the kit accepts (`merit report --curve-resamples`): ten times the default of
 * 1,000. The band holds B resampled lines of every stream position in memory (16 bytes each, 165 MB
 * at this B for Spider's 1,034 queries), so a mistyped 1000000000 cannot be allocated.
 */
export const MAX_CURVE_RESAMPLES = 10_000;

/** The curves of the runs of one (dataset, method) — S orders of one query set (see the module comment). */
export function methodCurves(runs: readonly RunSummary[], opts: LearningCurveOptions = {}): MethodCurves {
  const B = opts.resamples ?? 1000;
  const seed = opts.seed ?? 0;
  const level = opts.level ?? 0.95;
  if (!Number.isInteger(B) || B < 1 || B > MAX_CURVE_RESAMPLES) throw new MeritError(`learning curves: resamples must be an integer in 1..${MAX_CURVE_RESAMPLES}, got ${B}; the kit's default is 1000`);
  if (!(level > 0 && level < 1)) throw new RangeError(`learning curves: level must lie in (0, 1), got ${level}`);
  if (runs.length === 0) throw new MeritError(`learning curves: no runs`);
  const { order, correct, failed, n } = streams(runs);
  const exMean = new Float64Array(n);
  const repairMean = new Float64Array(n);
  meanCurves(order, correct, failed, null, exMean, repairMean);
  const { band, exB, repairB } = resampledLines(n, B, seed, level, (weight, ex, repair) => meanCurves(order, correct, failed, weight, ex, repair));
  return { ex: { mean: exMean, ...band(exB, exMean) }, repair: { mean: repairMean, ...band(repairB, repairMean) }, orders: runs.length, queries: n };
}

/**
 * The B resampled lines of a curve pair (query clusters drawn with replacement: `lines` fills the EX and
 * repair lines under a weight per query), position-major so each position's B values are contiguous,
 * and the percentile band of a line at `level`: none where the line itself is undefined (the repair
 * curve before every order met a failure). Shared by a method's curves and the paired Δ panels.
 */
function resampledLines(n: number, B: number, seed: number, level: number, lines: (weight: Int32Array, ex: Float64Array, repair: Float64Array) => void) {
  const exB = new Float64Array(n * B);
  const repairB = new Float64Array(n * B);
  const rng = new PyRandom(seed);
  const draws = new Int32Array(n);
  const weight = new Int32Array(n);
  const ex = new Float64Array(n);
  const repair = new Float64Array(n);
  for (let r = 0; r < B; r++) {
    if (n > 0) rng.fillRandbelow(n, draws);
    weight.fill(0);
    for (let k = 0; k < n; k++) weight[draws[k]] += 1;
    lines(weight, ex, repair);
    for (let p = 0; p < n; p++) {
      exB[p * B + r] = ex[p];
      repairB[p * B + r] = repair[p];
    }
  }
  const alpha = 1 - level;
  const band = (values: Float64Array, mean: Float64Array) => {
    const lo = new Float64Array(n);
    const hi = new Float64Array(n);
    for (let p = 0; p < n; p++) {
      const defined = Number.isNaN(mean[p]) ? new Float64Array(0) : values.subarray(p * B, (p + 1) * B).filter((v) => !Number.isNaN(v)).sort();
      lo[p] = defined.length === 0 ? NaN : quantile(defined, alpha / 2);
      hi[p] = defined.length === 0 ? NaN : quantile(defined, 1 - alpha / 2);
    }
    return { lo, hi };
  };
  return { exB, repairB, band };
}

/** The points of every (dataset, method) of the selection, EX curve then repair curve, positions ascending. */
export function learningCurves(runs: readonly RunSummary[], sel: TableSelection = {}, opts: LearningCurveOptions = {}): CurvePoint[] {
  const orNull = (v: number) => (Number.isNaN(v) ? null : v);
  return tableDatasets(runs, sel).flatMap((dataset) =>
    tableMethods(runs, sel).flatMap((method) => {
      const selected = runsOf(runs, dataset, method);
      if (selected.length === 0) return [];
      const curves = methodCurves(selected, opts);
      return (["ex", "repair"] as const).flatMap((curve) =>
        Array.from(curves[curve].mean, (mean, i) => ({
          dataset: displayName(dataset, sel),
          method: displayName(method, sel),
          curve,
          position: i + 1,
          mean: orNull(mean),
          lo: orNull(curves[curve].lo[i]),
          hi: orNull(curves[curve].hi[i]),
        })),
      );
    }),
  );
}

/** Most positions a curve keeps in the figure: longer streams are thinned to every k-th position (and the last). */
export const MAX_FIGURE_POINTS = 400;

const CURVE_TITLES: Record<CurveKind, string> = { ex: "Cumulative EX (%)", repair: "Repaired among initial failures (%)" };

/**
 * Figure: learning curves, one column per dataset, a row per curve (cumulative EX; repair success
 * among initial failures), a line per method (mean over orders) with its bootstrap band, every method
 * in one panel: readable for a few methods only (notebooks); `merit report` draws
 * {@link learningCurvePanelFigure}, one panel per method.
 */
export function learningCurveFigure(points: readonly CurvePoint[], opts: LearningCurveOptions = {}): TopLevelSpec {
  const n = new Map<string, number>();
  for (const p of points) n.set(p.dataset, Math.max(n.get(p.dataset) ?? 0, p.position));
  const values = points
    .filter((p) => {
      const last = n.get(p.dataset)!;
      const stride = Math.ceil(last / MAX_FIGURE_POINTS);
      return p.mean !== null && ((p.position - 1) % stride === 0 || p.position === last);
    })
    .map((p) => ({ ...p, curve: CURVE_TITLES[p.curve] }));
  const level = Math.round((opts.level ?? 0.95) * 1000) / 10;
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v5.json",
    // a plain string: withModelSubtitle (model-identity.ts) puts the model line under it
    title: `Learning curves along the stream (${level}% bootstrap band, B = ${opts.resamples ?? 1000})`,
    config: CONFIG,
    data: { values },
    facet: {
      column: { field: "dataset", type: "nominal", title: null, sort: firstSeen(values.map((v) => v.dataset)) },
      row: { field: "curve", type: "nominal", title: null, sort: Object.values(CURVE_TITLES) },
    },
    resolve: { scale: { x: "independent" } },
    spec: {
      width: 280,
      height: 180,
      encoding: {
        x: { field: "position", type: "quantitative", title: "Stream position", scale: { domainMin: 1, nice: false } },
        // full-strength legend symbols, not the band's faint fill
        color: { field: "method", type: "nominal", title: "Method", sort: null, legend: { symbolOpacity: 1 } },
      },
      layer: [
        { mark: { type: "area", opacity: 0.18 }, encoding: { y: { field: "lo", type: "quantitative", title: null, scale: { domain: [0, 100] } }, y2: { field: "hi" } } },
        { mark: { type: "line", strokeWidth: 1.5 }, encoding: { y: { field: "mean", type: "quantitative", title: null } } },
      ],
    },
  };
}

/** The curve points as CSV (dataset, method, curve, position, mean, lo, hi; empty where undefined). */
export function learningCurvesCsv(points: readonly CurvePoint[]): string {
  const cell = (v: number | null) => (v === null ? "" : v.toFixed(4));
  const quote = (s: string) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  return ["dataset,method,curve,position,mean,lo,hi", ...points.map((p) => [quote(p.dataset), quote(p.method), p.curve, p.position, cell(p.mean), cell(p.lo), cell(p.hi)].join(","))].join("\n") + "\n";
}

/** One curve kind of a panel: the line (mean over orders), its band, and each order's own line; arrays indexed by p − 1, NaN where undefined. */
export interface PanelCurve {
  mean: Float64Array;
  lo: Float64Array;
  hi: Float64Array;
  /** Each stream order's line, in ascending seed order. */
  orders: Float64Array[];
}

/** The curves of one panel: a method's own (absolute, %), or its difference to a reference (pp). */
export interface PanelCurves {
  ex: PanelCurve;
  repair: PanelCurve;
  /** Stream seeds of the orders, ascending. */
  seeds: number[];
  queries: number;
}

/**
 * The paired difference curves of `runs` against `reference` on one dataset, Δ = reference − method
 * (the sign of Table 2 for the same pair): the line is the reference's mean curve minus the method's
 * (module comment), each order's line the same difference within that order (the orders paired by
 * stream seed), and the band the percentile interval of the resampled differences, both methods'
 * lines computed on the same resampled query multiplicities (the generator and draws of
 * {@link methodCurves}, so the band is paired). Without `reference`, the method's own curves with
 * its orders' lines. Refuses a method whose seeds, queries or initial outcomes differ from the reference's.
 */
export function panelCurves(runs: readonly RunSummary[], reference: readonly RunSummary[] | null, opts: LearningCurveOptions = {}): PanelCurves {
  const B = opts.resamples ?? 1000;
  const seed = opts.seed ?? 0;
  const level = opts.level ?? 0.95;
  if (!Number.isInteger(B) || B < 1) throw new RangeError(`learning curves: resamples must be a positive integer, got ${B}`);
  if (!(level > 0 && level < 1)) throw new RangeError(`learning curves: level must lie in (0, 1), got ${level}`);
  if (runs.length === 0 || (reference !== null && reference.length === 0)) throw new MeritError(`learning curves: no runs`);
  const sorted = (rs: readonly RunSummary[]) => [...rs].sort((a, b) => a.stream_seed - b.stream_seed);
  const mine = sorted(runs);
  const theirs = reference === null ? null : sorted(reference);
  const seeds = mine.map((r) => r.stream_seed);
  const label = `${mine[0].dataset}/${mine[0].method}`;
  if (theirs !== null && theirs.map((r) => r.stream_seed).join() !== seeds.join()) {
    throw new MeritError(`learning curves: ${label} has stream seeds [${seeds}] but the reference ${theirs[0].method} has [${theirs.map((r) => r.stream_seed)}]; the difference panels pair orders by seed: run the same seeds, or pass --no-curves`);
  }
  const ids = (theirs ?? mine)[0].queries.map((q) => q.query_id);
  const a = streams(mine, ids);
  const b = theirs === null ? null : streams(theirs, ids);
  if (b !== null && a.failed.some((f, i) => f !== b.failed[i])) {
    throw new MeritError(`learning curves: ${label} differs from the reference ${theirs![0].method} in which queries failed initially; the methods must share the initial cache`);
  }
  const n = a.n;
  const S = mine.length;
  // the difference of two mean-curve computations (or one), for `weight`
  const lines = (weight: Int32Array | null, ex: Float64Array, repair: Float64Array, orders?: { s: number }) => {
    const pick = <T>(xs: T[]) => (orders === undefined ? xs : [xs[orders.s]]);
    meanCurves(pick(a.order), pick(a.correct), a.failed, weight, ex, repair);
    if (b === null) return;
    const exB = new Float64Array(n);
    const repairB = new Float64Array(n);
    meanCurves(pick(b.order), pick(b.correct), b.failed, weight, exB, repairB);
    for (let p = 0; p < n; p++) {
      ex[p] = exB[p] - ex[p];
      repair[p] = repairB[p] - repair[p];
    }
  };
  const exMean = new Float64Array(n);
  const repairMean = new Float64Array(n);
  lines(null, exMean, repairMean);
  const exOrders: Float64Array[] = [];
  const repairOrders: Float64Array[] = [];
  for (let s = 0; s < S; s++) {
    const ex = new Float64Array(n);
    const repair = new Float64Array(n);
    lines(null, ex, repair, { s });
    exOrders.push(ex);
    repairOrders.push(repair);
  }
  const { band, exB, repairB } = resampledLines(n, B, seed, level, (weight, ex, repair) => lines(weight, ex, repair));
  return {
    ex: { mean: exMean, ...band(exB, exMean), orders: exOrders },
    repair: { mean: repairMean, ...band(repairB, repairMean), orders: repairOrders },
    seeds,
    queries: n,
  };
}

/** Whether two methods' runs can be paired by {@link panelCurves}: the same seeds, each run over the same queries. */
function pairsWith(runs: readonly RunSummary[], reference: readonly RunSummary[]): boolean {
  const seeds = (rs: readonly RunSummary[]) => rs.map((r) => r.stream_seed).sort((x, y) => x - y).join();
  if (seeds(runs) !== seeds(reference)) return false;
  const ids = new Set(reference[0].queries.map((q) => q.query_id));
  return [...runs, ...reference].every((r) => r.queries.length === ids.size && r.queries.every((q) => ids.has(q.query_id)));
}

/** Options of {@link learningCurvePanelFigure}: the band's, and the reference of the difference panels. */
export interface LearningPanelOptions extends LearningCurveOptions {
  /** The method the others are compared with (`merit report --reference`); none: every method's own curves. */
  reference?: string;
}

/** A record of the panel figure's data. */
interface PanelRecord {
  dataset: string;
  method: string;
  panel: string;
  curve: string;
  position: number;
  kind: "band" | "order";
  mean?: number | null;
  lo?: number | null;
  hi?: number | null;
  order?: string;
  value?: number | null;
}

/**
 * Figure, learning curves that stay readable with many methods (issue 37 §3): small multiples, one
 * panel per method, never one panel of overlapping bands. With a `reference`, the top row is the
 * reference's own curves (%), and below it one panel per other method with the paired difference
 * Δ = reference − method (pp; Table 2's sign for the pair) along the stream: the line (mean over
 * orders), its paired bootstrap band, each stream order's own difference as a thin line (the
 * order-to-order variation) and the zero line; Δ panels share one y axis per curve kind, so sizes
 * compare. Without a reference, each method's own curves in its panel. Columns: cumulative EX,
 * then repair success among the initial failures, each per dataset. Colours: the report's method map
 * (`sel.colors`).
 */
export function learningCurvePanelFigure(runs: readonly RunSummary[], sel: TableSelection = {}, opts: LearningPanelOptions = {}): TopLevelSpec {
  const datasets = tableDatasets(runs, sel);
  const methods = tableMethods(runs, sel);
  const reference = opts.reference !== undefined && runs.some((r) => r.method === opts.reference) ? opts.reference : undefined;
  const ref = reference === undefined ? "" : displayName(reference, sel);
  const records: PanelRecord[] = [];
  const orNull = (v: number) => (Number.isNaN(v) ? null : v);
  const panelsOrder: string[] = [];
  const shown: string[] = [];
  for (const dataset of datasets) {
    const refRuns = reference === undefined ? [] : runsOf(runs, dataset, reference);
    const n = Math.max(0, ...runs.filter((r) => r.dataset === dataset).map((r) => r.queries.length));
    const stride = Math.ceil(n / MAX_FIGURE_POINTS);
    const keep = (p: number) => (p - 1) % stride === 0 || p === n;
    const ordered = reference === undefined ? methods : [reference, ...methods.filter((m) => m !== reference)];
    for (const method of ordered) {
      const selected = runsOf(runs, dataset, method);
      if (selected.length === 0) continue;
      // a method that cannot be paired with the reference (other seeds or queries) keeps its own curves, and says why
      const pairable = refRuns.length > 0 && pairsWith(selected, refRuns);
      const delta = reference !== undefined && method !== reference && pairable;
      const unpaired = reference !== undefined && method !== reference && !pairable;
      const panel = delta ? `${ref} − ${displayName(method, sel)}` : unpaired ? `${displayName(method, sel)} (own curve: not paired with ${ref}, other seeds or queries)` : displayName(method, sel);
      if (!panelsOrder.includes(panel)) panelsOrder.push(panel);
      if (!shown.includes(method)) shown.push(method);
      const curves = panelCurves(selected, delta ? refRuns : null, opts);
      for (const curve of ["ex", "repair"] as const) {
        const c = curves[curve];
        const base = { dataset: displayName(dataset, sel), method: displayName(method, sel), panel, curve: `${curve}:${delta ? "delta" : "own"}` };
        for (let i = 0; i < c.mean.length; i++) {
          if (!keep(i + 1) || Number.isNaN(c.mean[i])) continue;
          records.push({ ...base, position: i + 1, kind: "band", mean: c.mean[i], lo: orNull(c.lo[i]), hi: orNull(c.hi[i]) });
          c.orders.forEach((line, s) => {
            if (!Number.isNaN(line[i])) records.push({ ...base, position: i + 1, kind: "order", order: `seed ${curves.seeds[s]}`, value: line[i] });
          });
        }
      }
    }
  }
  const color = methodColorScale(shown, sel);
  const colorEnc = { field: "method", type: "nominal", title: "Method", sort: null, legend: null, ...(color ? { scale: color } : {}) };
  const level = Math.round((opts.level ?? 0.95) * 1000) / 10;
  const several = datasets.length > 1;
  const datasetNames = datasets.map((d) => displayName(d, sel));
  const cellName = (panel: string, dataset: string) => (several ? `${panel} · ${dataset}` : panel);
  const facet = (curve: "ex" | "repair", part: "own" | "delta") => {
    const values = records.filter((r) => r.curve === `${curve}:${part}`);
    if (values.length === 0) return null;
    const percent = part === "own";
    const yTitle = percent ? "%" : "Δ (pp)";
    // Δ panels: one symmetric axis around 0 for every panel of the curve kind (sizes compare), at least ±1 pp
    const reach = Math.max(1, ...values.flatMap((v) => [v.mean, v.lo, v.hi, v.value].filter((x): x is number => typeof x === "number").map(Math.abs)));
    const y = (field: string) => ({ field, type: "quantitative", title: yTitle, scale: percent ? { domain: [0, 100] } : { domain: [-reach, reach], nice: false } });
    // a wrapped facet, one cell per (panel, dataset), its name above it; a row of cells per panel
    const cells = panelsOrder.flatMap((panel) => datasetNames.filter((d) => values.some((v) => v.panel === panel && v.dataset === d)).map((d) => cellName(panel, d)));
    return {
      data: { values },
      transform: [{ calculate: several ? "datum.panel + ' · ' + datum.dataset" : "datum.panel", as: "cell" }],
      facet: { field: "cell", type: "nominal", title: null, sort: cells, header: { labelFontSize: 11, labelFontWeight: "bold", labelLimit: 320 } },
      columns: datasetNames.length,
      ...(several ? { resolve: { scale: { x: "independent" } } } : {}),
      spec: {
        width: 240,
        height: percent ? 110 : 80,
        encoding: { x: { field: "position", type: "quantitative", title: "Stream position", scale: { domainMin: 1, nice: false } } },
        layer: [
          ...(percent ? [] : [{ mark: { type: "rule", color: "#888", strokeDash: [4, 3] }, encoding: { y: { datum: 0, type: "quantitative" } } }]),
          { transform: [{ filter: "datum.kind === 'band'" }], mark: { type: "area", opacity: 0.3 }, encoding: { y: y("lo"), y2: { field: "hi" }, color: colorEnc } },
          { transform: [{ filter: "datum.kind === 'order'" }], mark: { type: "line", strokeWidth: 0.8, opacity: 0.55 }, encoding: { y: y("value"), detail: { field: "order" }, color: colorEnc } },
          { transform: [{ filter: "datum.kind === 'band'" }], mark: { type: "line", strokeWidth: 2 }, encoding: { y: y("mean"), color: colorEnc } },
        ],
      },
    };
  };
  const block = (curve: "ex" | "repair") => {
    const parts = [facet(curve, "own"), facet(curve, "delta")].filter((f) => f !== null);
    return { title: { text: curve === "ex" ? "Cumulative EX" : "Repaired among the initial failures met so far", anchor: "start" as const, fontSize: 13 }, vconcat: parts };
  };
  const what = reference === undefined ? "each method's own (%)" : `${ref} (%), then Δ = ${ref} − method (pp)`;
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v5.json",
    // a plain string: withModelSubtitle (model-identity.ts) puts the model line under it
    title: `Learning curves: ${what}; band ${level}% paired bootstrap (B = ${opts.resamples ?? 1000}), thin lines single orders`,
    config: CONFIG,
    hconcat: [block("ex"), block("repair")],
  } as TopLevelSpec;
}
