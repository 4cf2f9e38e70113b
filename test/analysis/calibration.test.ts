// The calibration machinery (lib/analysis/calibration.ts, bench/calibration.ts) on a tiny version:
// the planted Δ is the population's, the truth curves are right, the sections return what the
// report reads, and the numbers do not depend on how the replications are split. The coverage
// goals themselves are measured by bench/calibration.ts at the paper's scale, never asserted here.
import { describe, expect, it } from "vitest";
import {
  calibrate,
  calibrationMarkdown,
  effectScale,
  resolveCalibrationOptions,
  runSection,
  simulatedRuns,
  simulateStudy,
  SPIDER_POPULATION,
  trueExCurve,
  type CalibrationOptions,
  type PopulationModel,
  type SectionRunner,
} from "../../lib/analysis/calibration.ts";
import { readFileSync } from "node:fs";
import { methodCurves } from "../../lib/analysis/learning-curves.ts";
import { comparisonTable } from "../../lib/analysis/tables.ts";
import { PyRandom } from "../../lib/random.ts";

const SMALL: PopulationModel = { ...SPIDER_POPULATION, queries: 120 };
const TINY: CalibrationOptions = { replications: 30, bandReplications: 4, truthReplications: 40, resamples: 300, bandResamples: 100, positions: [10, 60, 120] };

describe("simulated studies", () => {
  it("plant the asked Δ in expectation, and keep initially correct queries correct for every method", () => {
    const model: PopulationModel = { ...SMALL, queries: 400 };
    const deltas: number[] = [];
    let broken = 0;
    for (let r = 0; r < 200; r++) {
      const study = simulateStudy(model, [5, 0], new PyRandom(r));
      const [b, a, c] = study.outcomes;
      let sum = 0;
      for (let q = 0; q < model.queries; q++) {
        if (study.failed[q] === 0 && ![...a[q], ...b[q], ...c[q]].every((v) => v === 1)) broken++;
        for (let s = 0; s < model.orders; s++) sum += a[q][s] - b[q][s];
      }
      deltas.push((100 * sum) / (model.queries * model.orders));
    }
    expect(broken).toBe(0);
    const mean = deltas.reduce((s, x) => s + x, 0) / deltas.length;
    const sd = Math.sqrt(deltas.reduce((s, x) => s + (x - mean) ** 2, 0) / (deltas.length - 1));
    // within 4 Monte Carlo standard errors of the planted 5 pp
    expect(Math.abs(mean - 5)).toBeLessThan((4 * sd) / Math.sqrt(deltas.length));
  });

  it("are deterministic from the generator, with every order a permutation of the queries", () => {
    const x = simulateStudy(SMALL, [2], new PyRandom(7));
    const y = simulateStudy(SMALL, [2], new PyRandom(7));
    expect(x.outcomes).toEqual(y.outcomes);
    for (const pos of x.position) expect([...pos].sort((p, q) => p - q)).toEqual(Array.from({ length: SMALL.queries }, (_, i) => i));
  });

  it("give the exact EX truth: at p = n it is the initial EX plus F·m plus Δ", () => {
    const F = SMALL.initialFailure;
    const m = SMALL.repair;
    const [last] = trueExCurve(SMALL, 5, [SMALL.queries]);
    expect(last).toBeCloseTo(100 * (1 - F + F * m) + 5, 10);
    const [flat] = trueExCurve(SMALL, 0, [1]);
    expect(flat).toBeCloseTo(100 * (1 - F + F * m), 10);
  });

  it("become runs the learning curves read, in the order the study drew", () => {
    const study = simulateStudy(SMALL, [5], new PyRandom(3));
    const runs = simulatedRuns(study, 1);
    expect(runs.map((r) => r.stream_seed)).toEqual([0, 1, 2]);
    const curves = methodCurves(runs, { resamples: 50 });
    let hits = 0;
    for (let q = 0; q < SMALL.queries; q++) hits += study.outcomes[1][q][0] + study.outcomes[1][q][1] + study.outcomes[1][q][2];
    expect(curves.ex.mean[SMALL.queries - 1]).toBeCloseTo((100 * hits) / (3 * SMALL.queries), 10);
  });
});

describe("calibrate (tiny)", () => {
  it("measures every section, with rates and Monte Carlo errors in range, and renders the tables", async () => {
    const rep = await calibrate(SMALL, TINY);
    expect(rep.deltas.map((d) => d.delta)).toEqual([0, 1, 2, 5]);
    for (const d of rep.deltas) {
      for (const r of [d.coverage, d.coverageBca!, d.rejectBootstrap!, d.rejectMcnemar]) {
        expect(r.n).toBe(30);
        expect(r.rate).toBeGreaterThanOrEqual(0);
        expect(r.rate).toBeLessThanOrEqual(100);
        expect(r.mcse).toBeCloseTo(100 * Math.sqrt((r.rate / 100) * (1 - r.rate / 100) / 30), 10);
      }
      expect(d.width).toBeGreaterThan(0);
      expect(d.mde).toBeCloseTo(2.8016 * d.se, 3);
    }
    // a large planted Δ is found more often than none
    expect(rep.deltas[3].rejectBootstrap!.rate).toBeGreaterThan(rep.deltas[0].rejectBootstrap!.rate);
    expect(rep.holm.fwer.rate).toBeLessThanOrEqual(rep.holm.unadjusted.rate);
    expect(rep.holm.perComparison.n).toBe(30 * 6);
    expect(rep.power.map((p) => p.label)).toEqual(["MDE", "MDE / 2"]);
    expect(rep.power[0].delta).toBeCloseTo(rep.deltas[0].mde, 12);
    expect(rep.power[0].expected).toBeCloseTo(80, 0);
    expect(rep.band.rows.map((b) => b.position)).toEqual([10, 60, 120]);
    for (const b of rep.band.rows) expect(b.exCoverage.n).toBe(4);
    const md = calibrationMarkdown(rep);
    for (const head of ["Coverage, percentile 95 %", "Holm over a family of 6 true nulls", "Power at", "Stream position"]) expect(md).toContain(head);
  });

  it("gives the same numbers however the replications are split (as worker threads split them)", async () => {
    const options = resolveCalibrationOptions(SMALL, { ...TINY, bca: false, bandReplications: 2, truthReplications: 10 });
    // a runner that runs every chunk as two halves, the later half first
    const split: SectionRunner = async (spec, from, to) => {
      const mid = Math.floor((from + to) / 2);
      const late = runSection(SMALL, options, spec, mid, to);
      const early = runSection(SMALL, options, spec, from, mid);
      return { rows: [...early.rows, ...late.rows], ms: early.ms + late.ms };
    };
    const plain = await calibrate(SMALL, options);
    const chunked = await calibrate(SMALL, options, split);
    expect(chunked.deltas).toEqual(plain.deltas);
    expect(chunked.holm).toEqual(plain.holm);
    expect(chunked.power).toEqual(plain.power);
    expect(chunked.band).toEqual(plain.band);
  });
});

describe("calibrate with the tests at Δ = 0 only", () => {
  it("leaves the bootstrap p and the MDE out at Δ ≠ 0 and keeps them at Δ = 0", async () => {
    const rep = await calibrate(SMALL, { ...TINY, replications: 5, familyReplications: 3, powerReplications: 4, allTests: false, bca: false, bandReplications: 1, truthReplications: 5 });
    expect(rep.deltas[0].rejectBootstrap?.n).toBe(5);
    expect(rep.deltas.slice(1).every((d) => d.rejectBootstrap === null && Number.isNaN(d.mde))).toBe(true);
    expect(rep.holm.fwer.n).toBe(3);
    expect(rep.power[0].rejectBootstrap.n).toBe(4);
    expect(calibrationMarkdown(rep)).toContain("| 5 | ");
  });
});

describe("the report cites the calibration", () => {
  it("Table 2's notes name METHOD.md §9.1, which holds the calibration table", () => {
    const study = simulateStudy(SMALL, [5], new PyRandom(11));
    const runs = [...simulatedRuns(study, 0, "iterative"), ...simulatedRuns(study, 1, "merit")];
    const t = comparisonTable(runs, { reference: "merit", resamples: 200 });
    expect(t.notes.at(-1)).toMatch(/^Calibration by simulation .*: METHOD\.md §9\.1\.$/);
    const method = readFileSync(new URL("../../docs/METHOD.md", import.meta.url), "utf8");
    expect(method).toMatch(/^### 9\.1 Calibration$/m);
    expect(method).toContain("| Planted Δ (pp) | Coverage, percentile 95 %");
  });
});

describe("hostile input", () => {
  it("names the option and the fix", () => {
    expect(() => resolveCalibrationOptions(SMALL, { deltas: [1, 2] })).toThrow(/leave out 0/);
    expect(() => resolveCalibrationOptions(SMALL, { replications: 0 })).toThrow(/replications must be a positive integer/);
    expect(() => resolveCalibrationOptions(SMALL, { positions: [0] })).toThrow(/outside 1\.\.120/);
    expect(() => effectScale(SMALL, 60)).toThrow(/beyond ±1; plant a smaller Δ/);
    expect(() => resolveCalibrationOptions(SMALL, { familyReplications: 0 })).toThrow(/familyReplications must be a positive integer/);
    expect(() => simulateStudy({ ...SMALL, repair: 1 }, [0], new PyRandom(0))).toThrow(/repair must lie in \(0, 1\)/);
  });
});
