// Tests lib/analysis/comparison-verdict.ts: the words Table 2 adds when a comparison carries no
// evidence (identical outcomes, a degenerate interval, an MDE above |Δ|), and none when it does.
import { describe, expect, it } from "vitest";
import { comparisonVerdict, withVerdicts } from "../../lib/analysis/comparison-verdict.ts";
import { comparisonTable } from "../../lib/analysis/tables.ts";
import { summarizeRun, type RunSummary } from "../../lib/analysis/run-summary.ts";
import { buildTrajectory } from "./build-trajectory.ts";

const base = { queries: 6, seeds: "0" };

describe("comparisonVerdict", () => {
  it("identical outcomes: no evidence either way", () => {
    expect(comparisonVerdict({ ...base, delta: 0, lo: 0, hi: 0, se: 0, mde: 0 })).toBe(
      "identical outcomes on all 6 paired queries × 1 stream order: Δ = 0 with the degenerate interval [0.00, 0.00] and p = 1 is no evidence either way, not evidence of equality (the MDE 0.00 only reflects the missing spread); with 6 queries the bootstrap interval is itself rough",
    );
  });
  it("a degenerate interval away from 0", () => {
    expect(comparisonVerdict({ ...base, delta: 100, lo: 100, hi: 100, se: 0, mde: 0 })).toMatch(/^degenerate interval \[\+100\.00, \+100\.00\]: every one of the 6 paired queries × 1 stream order differs by the same amount/);
  });
  it("an MDE above |Δ|, with the queries that would detect it", () => {
    const v = comparisonVerdict({ queries: 100, seeds: "0 1 2", delta: -1, lo: -3, hi: 1, se: 1, mde: 2.8 });
    expect(v).toBe("underpowered: with 100 paired queries × 3 stream orders the MDE 2.80 pp exceeds |Δ| = 1.00 pp, so the design cannot tell whether the methods differ by that much; about 784 queries at this variance would detect a Δ of this size");
  });
  it("nothing when the interval has spread and |Δ| ≥ MDE", () => {
    expect(comparisonVerdict({ queries: 1034, seeds: "0 1 2", delta: 3.45, lo: 1.97, hi: 4.96, se: 0.76, mde: 2.14 })).toBeNull();
  });
});

function run(method: string, correct: boolean[]): RunSummary {
  return summarizeRun(correct.map((c, q) => buildTrajectory({ query_id: String(q), attempts: [`SELECT ${q}`], statuses: [c ? "CORRECT" : "DENOTATION_MISMATCH"], dataset: "spider", method, stream_seed: 0 })));
}

describe("withVerdicts", () => {
  it("adds informative/verdict to every record and one note per uninformative row, cells unchanged", () => {
    const runs = [run("merit", [true, false, false]), run("iterative", [true, false, false])];
    const t = comparisonTable(runs, { reference: "merit", resamples: 200 });
    const v = withVerdicts(t, { labels: { merit: "MERIT", iterative: "Iterative", spider: "Spider" } });
    expect(v.rows).toEqual(t.rows);
    expect(v.columns).toEqual(t.columns);
    expect(v.notes.slice(0, t.notes.length)).toEqual(t.notes);
    expect(v.notes.at(-1)).toMatch(/^Uninformative — MERIT vs Iterative on Spider: identical outcomes on all 3 paired queries/);
    expect(v.data[0]).toMatchObject({ informative: false });
  });
});
