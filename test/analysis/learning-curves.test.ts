// Tests lib/analysis/learning-curves.ts (hand-computed curves on hand-made summaries, the band around the mean, determinism for a seed, the figure spec and CSV) and lib/analysis/order-sensitivity.ts (spread of EX across orders).
import { describe, expect, it } from "vitest";
import { renderSvg } from "../../lib/analysis/figure-render.ts";
import { learningCurveFigure, learningCurves, learningCurvesCsv, methodCurves } from "../../lib/analysis/learning-curves.ts";
import type { QueryOutcome, RunSummary } from "../../lib/analysis/run-summary.ts";
import { MeritError } from "../../lib/errors.ts";

/** A summary whose stream visits `order` (query ids), with final correctness and initial failures per id. */
function run(method: string, seed: number, order: string[], final: Record<string, boolean>, initial: Record<string, boolean>): RunSummary {
  const queries: QueryOutcome[] = order
    .map((id, p) => ({ query_id: id, source_index: Number(id), initial_sql: "SELECT 1", initial_error_type: null, initial_correct: initial[id], final_correct: final[id], repair_steps: 0, stream_position: p }))
    .sort((x, y) => x.source_index - y.source_index);
  return { dataset: "spider", method, stream_seed: seed, metrics: {} as RunSummary["metrics"], queries };
}

// Four queries: 0 initially correct; 1, 2, 3 initially failed. Final: seed 0 repairs 1 and 2; seed 1 repairs 1 only.
const initial = { "0": true, "1": false, "2": false, "3": false };
const runs = [
  run("merit", 0, ["0", "1", "2", "3"], { "0": true, "1": true, "2": true, "3": false }, initial),
  run("merit", 1, ["3", "2", "1", "0"], { "0": true, "1": true, "2": false, "3": false }, initial),
];

describe("learning curves", () => {
  it("the mean line is the hand-computed cumulative EX and repair success", () => {
    const c = methodCurves(runs, { resamples: 50 });
    // seed 0 EX: 1/1, 2/2, 3/3, 3/4; seed 1 (3, 2, 1, 0): 0/1, 0/2, 1/3, 2/4
    expect([...c.ex.mean]).toEqual([50, 50, (100 + 100 / 3) / 2, (75 + 50) / 2].map((v) => expect.closeTo(v, 10)));
    // repair: seed 0 undefined at p = 1 (no failure met), then 1/1, 2/2, 2/3; seed 1 0/1, 0/2, 1/3, 1/3
    expect(Number.isNaN(c.repair.mean[0])).toBe(true);
    expect([...c.repair.mean.subarray(1)]).toEqual([50, (100 + 100 / 3) / 2, (200 / 3 + 100 / 3) / 2].map((v) => expect.closeTo(v, 10)));
    expect(c.orders).toBe(2);
    expect(c.queries).toBe(4);
  });

  it("the band contains the mean at every position, and is deterministic for a seed", () => {
    const a = methodCurves(runs, { resamples: 400, seed: 3 });
    const b = methodCurves(runs, { resamples: 400, seed: 3 });
    expect([...a.ex.lo]).toEqual([...b.ex.lo]);
    expect([...a.ex.hi]).toEqual([...b.ex.hi]);
    for (let p = 0; p < 4; p++) {
      expect(a.ex.lo[p]).toBeLessThanOrEqual(a.ex.mean[p]);
      expect(a.ex.hi[p]).toBeGreaterThanOrEqual(a.ex.mean[p]);
      expect(a.ex.lo[p]).toBeGreaterThanOrEqual(0);
      expect(a.ex.hi[p]).toBeLessThanOrEqual(100);
    }
    for (let p = 1; p < 4; p++) {
      expect(a.repair.lo[p]).toBeLessThanOrEqual(a.repair.mean[p]);
      expect(a.repair.hi[p]).toBeGreaterThanOrEqual(a.repair.mean[p]);
    }
  });

  it("a method right on every query has a zero-width band at 100 %", () => {
    const all = { "0": true, "1": true, "2": true, "3": true };
    const c = methodCurves([run("oracle", 0, ["0", "1", "2", "3"], all, initial), run("oracle", 1, ["2", "0", "3", "1"], all, initial)], { resamples: 100 });
    expect([...c.ex.lo, ...c.ex.hi]).toEqual(Array(8).fill(100));
  });

  it("refuses orders over different query sets and summaries without stream positions", () => {
    const other = run("merit", 1, ["0", "1", "2", "4"], { "0": true, "1": true, "2": false, "4": false }, { ...initial, "4": false });
    expect(() => methodCurves([runs[0], other])).toThrow(MeritError);
    const bare = { ...runs[0], queries: runs[0].queries.map(({ stream_position: _p, ...q }) => q) };
    expect(() => methodCurves([bare])).toThrow(/stream position/);
  });

  it("points, CSV and figure spec", async () => {
    const points = learningCurves(runs, { labels: { merit: "MERIT", spider: "Spider" } }, { resamples: 50 });
    expect(points).toHaveLength(8);
    expect(points[0]).toMatchObject({ dataset: "Spider", method: "MERIT", curve: "ex", position: 1, mean: 50 });
    expect(points[4]).toMatchObject({ curve: "repair", position: 1, mean: null, lo: null, hi: null });
    const csv = learningCurvesCsv(points).split("\n");
    expect(csv[0]).toBe("dataset,method,curve,position,mean,lo,hi");
    expect(csv[5]).toBe("Spider,MERIT,repair,1,,,");
    const spec = learningCurveFigure(points, { resamples: 50 });
    // the undefined repair point is left out of the figure
    expect((spec.data as { values: unknown[] }).values).toHaveLength(7);
    const svg = await renderSvg(spec);
    expect(svg).toContain(">Stream position</text>");
    expect(await renderSvg(spec)).toBe(svg);
  });
});

describe("order sensitivity", () => {
  it("the spread of EX across orders, its interval, and 0 [0, 0] for identical orders", async () => {
    const { orderSpread, orderSensitivityTable } = await import("../../lib/analysis/order-sensitivity.ts");
    // seed 0: 3/4 = 75 %, seed 1: 2/4 = 50 % → spread 25 pp
    const s = orderSpread(runs, { resamples: 300, seed: 1 });
    expect(s.ex).toEqual([75, 50]);
    expect(s.spread).toBe(25);
    expect(s.lo).toBeGreaterThanOrEqual(0);
    expect(s.lo).toBeLessThanOrEqual(25);
    expect(s.hi).toBeGreaterThanOrEqual(25);
    expect(s.hi).toBeLessThanOrEqual(100);
    expect(orderSpread(runs, { resamples: 300, seed: 1 })).toEqual(s);
    const same = orderSpread([runs[0], { ...runs[0], stream_seed: 1 }], { resamples: 50 });
    expect([same.spread, same.lo, same.hi]).toEqual([0, 0, 0]);
    expect(() => orderSpread([runs[0]])).toThrow(/at least 2/);
    const table = orderSensitivityTable(runs, {}, { resamples: 50 })!;
    expect(table.rows[0].map((c) => c.text)).toEqual(["spider", "merit", "2", "75.00 / 50.00", "25.00", expect.stringMatching(/^\[\d+\.\d\d, \d+\.\d\d\]$/)]);
    expect(orderSensitivityTable([runs[0]])).toBeNull();
  });
});
