// Tests lib/analysis/study-power.ts: the per-query standard deviation derived from the paper's Table 2
// intervals, the planned MDE and the queries a target needs, and a pilot's pairedPower rescaled.
import { describe, expect, it } from "vitest";
import { readPaperNumbers } from "../../lib/analysis/paper-comparison.ts";
import { pairedPower } from "../../lib/analysis/power.ts";
import { mdeFactor, paperVarianceFor, paperVariances, powerFromPaper, powerFromPilot } from "../../lib/analysis/study-power.ts";

const paper = paperVariances(readPaperNumbers().numbers);

describe("paper variance", () => {
  it("σ = √n · (hi − lo) / (2 · 1.96) for every Table 2 row", () => {
    expect(paper).toHaveLength(8);
    const it = paper.find((v) => v.dataset === "spider" && v.other === "iterative")!;
    // Spider MERIT vs Iterative: 95% CI [1.97, 4.96] over 1,034 queries × 3 orders
    expect(it.sd).toBeCloseTo((Math.sqrt(1034) * (4.96 - 1.97)) / (2 * 1.959964), 6);
    expect(it.sd).toBeCloseTo(24.53, 1);
    expect(it).toMatchObject({ queries: 1034, seeds: 3 });
    expect(paper.find((v) => v.dataset === "bird" && v.other === "iterative")!.queries).toBe(1534);
  });

  it("uses the pair when the paper reports it (either order), else the dataset's largest σ", () => {
    expect(paperVarianceFor(paper, "spider", "dynamic_rag", "merit").variance.other).toBe("dynamic_rag");
    const other = paperVarianceFor(paper, "spider", "my_method", "merit");
    expect(other.variance.sd).toBe(Math.max(...paper.filter((v) => v.dataset === "spider").map((v) => v.sd)));
    const widest = other.variance;
    expect(other.source).toBe(`paper Table 2, ${widest.reference} vs ${widest.other} on spider (the paper does not compare my_method with merit; this is its largest σ on spider, the conservative choice)`);
    // a dataset the paper does not cover borrows its largest σ over every dataset, and says which pair and why
    const geo = paperVarianceFor(paper, "geoquery", "my_method", "merit");
    expect(geo.variance.sd).toBe(Math.max(...paper.map((v) => v.sd)));
    expect(geo.source).toBe(`paper Table 2, ${geo.variance.reference} vs ${geo.variance.other} on ${geo.variance.dataset} (the paper has no geoquery runs; this is its largest σ over spider and bird, the conservative choice)`);
  });

  it("the paper's own design reproduces its MDE; fewer orders are charged, more are not credited", () => {
    const v = paper.find((x) => x.dataset === "spider" && x.other === "iterative")!;
    const se = (4.96 - 1.97) / (2 * 1.959964);
    expect(powerFromPaper(v, "s", 1034, 3, 2).mde).toBeCloseTo(mdeFactor() * se, 6);
    expect(powerFromPaper(v, "s", 1034, 1, 2).mde).toBeCloseTo(mdeFactor() * se * Math.sqrt(3), 6);
    expect(powerFromPaper(v, "s", 1034, 9, 2).mde).toBeCloseTo(mdeFactor() * se, 6);
    const p = powerFromPaper(v, "s", 6, 1, 2);
    expect(p.mde).toBeCloseTo(mdeFactor() * v.sd * Math.sqrt(3) / Math.sqrt(6), 6);
    // queries needed: the least n with factor · σ(S) / √n ≤ target
    expect(powerFromPaper(v, "s", 6, 1, p.mde / 2).queriesNeeded).toBe(24);
    expect(p.seedsNeeded).toBeNull();
  });
});

describe("pilot power", () => {
  // 8 queries × 2 seeds with some discordance
  const a = [[1, 1], [1, 0], [0, 0], [1, 1], [0, 1], [1, 1], [0, 0], [1, 0]];
  const b = [[0, 1], [0, 0], [0, 0], [1, 1], [0, 0], [1, 0], [0, 0], [0, 0]];
  const r = pairedPower(a, b, { resamples: 2000, seed: 0 });

  it("at the pilot's own design it is the pilot's MDE; 4× the queries halve it", () => {
    expect(powerFromPilot(r, 8, 2, 1)!.mde).toBeCloseTo(r.mde, 9);
    expect(powerFromPilot(r, 32, 2, 1)!.mde).toBeCloseTo(r.mde / 2, 9);
    const p = powerFromPilot(r, 8, 2, r.mde / 2)!;
    expect(p.queriesNeeded).toBe(32);
    expect(p.source).toMatch(/^pilot: the study's runs \(8 queries × 2 orders/);
  });

  it("identical outcomes give no variance: null, so the plan falls back to the paper", () => {
    expect(powerFromPilot(pairedPower(a, a, { resamples: 200 }), 8, 2, 1)).toBeNull();
  });
});
