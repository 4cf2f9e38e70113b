/**
 * Analysis stage, memory-growth figure (METHOD.md §4.3–§4.5, §9): positive and negative memory
 * entries over the stream, per memory method (mean over seeds). Derived from each run's persisted
 * memory/ files (run-directory.ts readEntryBirths): an entry counts from the earliest
 * source_stream_position among its observations, so merges never add an entry. For methods that
 * insert only after the stream (deferred writes) this is the memory the same observations would
 * have built online, not what retrieval saw. The same curves serve hook-note memories
 * (memory-diagnostics.ts memorySizeFigure), whose notes may also be `neutral`: a third polarity
 * appears only for the (dataset, method) groups that hold one.
 * @module
 */
import type { TopLevelSpec } from "vega-lite";
import type { Polarity } from "../memory/entry.ts";
import { CONFIG, firstSeen, methodColorScale } from "./figures.ts";
import { displayName, type TableSelection } from "./table-selection.ts";

/** A memory item's polarity: entries are positive or negative, hook notes may also be neutral. */
export type ItemPolarity = Polarity | "neutral";

/** The memory of one run: entry births and the stream length. */
export interface RunMemory {
  dataset: string;
  method: string;
  stream_seed: number;
  /** Episodes in the run's stream (its trajectories). */
  stream_length: number;
  births: readonly { polarity: ItemPolarity; position: number }[];
  /** Items that left the memory (a memory hook's retired or superseded notes): gone once the episode at `position` finished. */
  deaths?: readonly { polarity: ItemPolarity; position: number }[];
}

/** One point of a growth curve: after `episodes` finished episodes, `entries` entries in force (mean over seeds). */
export interface GrowthPoint {
  dataset: string;
  method: string;
  polarity: ItemPolarity;
  episodes: number;
  entries: number;
}

/**
 * Growth curves, one per (dataset, method, polarity) in first-seen dataset/method order. Points sit
 * at 0, at every episode count where some seed's count changes, and at the longest stream's end;
 * between points the curve is a step (the mean of step functions only changes at their steps).
 */
export function memoryGrowth(runs: readonly RunMemory[], sel: TableSelection = {}): GrowthPoint[] {
  const groups = new Map<string, RunMemory[]>();
  for (const r of runs) {
    const key = `${r.dataset}\u0000${r.method}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const points: GrowthPoint[] = [];
  for (const group of groups.values()) {
    const { dataset, method } = group[0];
    const end = Math.max(...group.map((r) => r.stream_length));
    const neutral = group.some((r) => r.births.some((b) => b.polarity === "neutral"));
    for (const polarity of (neutral ? ["positive", "negative", "neutral"] : ["positive", "negative"]) as ItemPolarity[]) {
      // per seed: sorted episode counts (position + 1) at which an entry of this polarity appears, and those at which one is superseded
      const steps = group.map((r) => r.births.filter((b) => b.polarity === polarity).map((b) => b.position + 1).sort((x, y) => x - y));
      const ends = group.map((r) => (r.deaths ?? []).filter((b) => b.polarity === polarity).map((b) => b.position + 1).sort((x, y) => x - y));
      const xs = [...new Set([0, ...steps.flat(), ...ends.flat(), end])].sort((x, y) => x - y);
      for (const episodes of xs) {
        // the items in force: born by then, less those gone by then
        const counts = steps.map((s, i) => upperBound(s, episodes) - upperBound(ends[i], episodes));
        points.push({
          dataset: displayName(dataset, sel),
          method: displayName(method, sel),
          polarity,
          episodes,
          entries: counts.reduce((s, c) => s + c, 0) / counts.length,
        });
      }
    }
  }
  return points;
}

/** Number of elements ≤ x in an ascending array. */
function upperBound(sorted: readonly number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Figure: entries in memory vs finished episodes; a panel per (method, dataset), colour = method (the report's), dash = polarity. */
export function memoryGrowthFigure(runs: readonly RunMemory[], sel: TableSelection = {}, text: { title?: string; y?: string } = {}): TopLevelSpec {
  const values = memoryGrowth(runs, sel);
  const polarities = values.some((v) => v.polarity === "neutral") ? ["positive", "negative", "neutral"] : ["positive", "negative"];
  const color = methodColorScale(firstSeen(runs.map((r) => r.method)), sel);
  const methods = firstSeen(values.map((v) => v.method));
  const datasets = firstSeen(values.map((v) => v.dataset));
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v5.json",
    title: text.title ?? "Memory growth over the stream (mean over seeds)",
    config: CONFIG,
    data: { values },
    // small multiples, a panel per (method, dataset) named above it (identical curves of several methods no longer hide each other)
    ...(methods.length > 1
      ? {
          transform: [{ calculate: datasets.length > 1 ? "datum.method + ' · ' + datum.dataset" : "datum.method", as: "cell" }],
          facet: { field: "cell", type: "nominal", title: null, sort: methods.flatMap((m) => datasets.map((d) => (datasets.length > 1 ? `${m} · ${d}` : m))), header: { labelFontSize: 11, labelFontWeight: "bold", labelLimit: 320 } },
          columns: datasets.length,
        }
      : { facet: { column: { field: "dataset", type: "nominal", title: null, sort: datasets } } }),
    resolve: { scale: { x: "independent", y: "independent" } },
    spec: {
      width: 300,
      height: methods.length > 1 ? 110 : 220,
      mark: { type: "line", interpolate: "step-after" },
      encoding: {
        x: { field: "episodes", type: "quantitative", title: "Stream position (episodes finished)" },
        y: { field: "entries", type: "quantitative", title: text.y ?? "Memory entries" },
        color: { field: "method", type: "nominal", title: "Method", sort: null, ...(color ? { scale: color } : {}) },
        strokeDash: { field: "polarity", type: "nominal", title: "Polarity", sort: polarities },
        detail: { field: "polarity" },
      },
    },
  };
}
