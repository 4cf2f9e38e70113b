// Tests lib/analysis/figures.ts and figure-render.ts: figure data by hand, deterministic SVG, a PNG with real text written to a temp dir.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderSvg, svgToPng } from "../../lib/analysis/figure-render.ts";
import { cumulativeRepairs, exFigure, forestFigure } from "../../lib/analysis/figures.ts";
import { summarizeRun } from "../../lib/analysis/run-summary.ts";
import { MeritError } from "../../lib/errors.ts";
import { buildTrajectory, repairTrajectory } from "./build-trajectory.ts";

// One Spider run per seed: q0 initially correct, q1 repaired at step 2, q2 repaired at step 5 (seed 0) or never (seed 1).
const runs = [0, 1].map((seed) =>
  summarizeRun([
    buildTrajectory({ query_id: "0", attempts: ["SELECT 0"], statuses: ["CORRECT"], method: "merit", stream_seed: seed }),
    repairTrajectory("1", 2, true, { method: "merit", stream_seed: seed }),
    seed === 0 ? repairTrajectory("2", 5, true, { method: "merit", stream_seed: 0 }) : repairTrajectory("2", 7, false, { method: "merit", stream_seed: 1 }),
  ]),
);

describe("figure data", () => {
  it("cumulative repaired queries by step, mean over seeds", () => {
    // seed 0: steps ≤ s repaired = 0,0,1,1,1,2,2,2; seed 1: 0,0,1,1,1,1,1,1 → means
    const values = cumulativeRepairs(runs, {}, 7).map((v) => v.repaired);
    expect(values).toEqual([0, 0, 1, 1, 1, 1.5, 1.5, 1.5]);
  });
  it("EX bars carry mean ± std", () => {
    // EX: seed 0 3/3 = 100, seed 1 2/3 = 66.67 → mean 83.33, sample std = 33.33/√2 = 23.57;
    // the upper end 106.9 is clamped to 100
    const values = (exFigure(runs).data as { values: Record<string, number>[] }).values;
    expect(values[0].ex).toBeCloseTo(250 / 3, 10);
    expect(values[0].ex - values[0].lo).toBeCloseTo(100 / 3 / Math.SQRT2, 10);
    expect(values[0].hi).toBe(100);
  });
});

describe("rendering", () => {
  it("SVG is deterministic and PNG has readable text", async () => {
    const spec = exFigure(runs, { labels: { spider: "Spider", merit: "MERIT" } });
    const svg = await renderSvg(spec);
    expect(await renderSvg(spec)).toBe(svg);
    expect(svg).toContain(">MERIT</text>");
    expect(svg).toContain(">EX (%)</text>");
    const png = svgToPng(svg);
    // PNG signature and IHDR width (bytes 16–19) = 2 × the SVG width
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const width = Number(/width="(\d+)"/.exec(svg)![1]);
    expect(png.readUInt32BE(16)).toBe(2 * width);
    // text is drawn: the same SVG without fonts would be blank where labels are, so it must differ
    const noText = svgToPng(svg.replace(/<text[^>]*>[^<]*<\/text>/g, ""));
    expect(Buffer.compare(png, noText)).not.toBe(0);
    const dir = mkdtempSync(join(tmpdir(), "merit-figure-"));
    writeFileSync(join(dir, "ex.png"), png);
    expect(readFileSync(join(dir, "ex.png")).equals(png)).toBe(true);
    rmSync(dir, { recursive: true });
  });
  it("forest plot renders from table records", async () => {
    const table = { id: "t", title: "", columns: [], align: [], rows: [], notes: [], data: [{ dataset: "spider", reference: "merit", other: "iterative", delta: 2, lo: -1, hi: 5 }] };
    // the row names the sign: Δ = merit − iterative, as Table 2 prints it
    expect(await renderSvg(forestFigure(table))).toContain(">merit − iterative</text>");
  });
  it("refuses to rasterise without fonts", () => {
    expect(() => svgToPng("<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'/>", { fontFiles: [] })).toThrow(MeritError);
    expect(() => svgToPng("<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'/>", { fontFiles: [] })).toThrow(/fonts-dejavu-core/);
  });
});
