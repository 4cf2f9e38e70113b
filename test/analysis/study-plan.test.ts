// Tests lib/analysis/study-plan.ts: the most model calls per method, the grid budget with finished
// runs left out, the duration wording, and the power rows from the paper's variance.
import { describe, expect, it } from "vitest";
import { readPaperNumbers } from "../../lib/analysis/paper-comparison.ts";
import { summarizeRun } from "../../lib/analysis/run-summary.ts";
import { callRate, comparisonPowers, durationText, gridBudget, MEASURED_KIT_OVERHEAD_S, planLines, streamCalls } from "../../lib/analysis/study-plan.ts";
import { paperVariances } from "../../lib/analysis/study-power.ts";
import { defineStudy } from "../../lib/experiment/study.ts";
import { buildTrajectory } from "./build-trajectory.ts";

const study = defineStudy({ name: "p", methods: ["zeroshot", "iterative", "reflexion", "merit"], seeds: [0, 1], reference: "merit", queries: 10 });
const streams = [{ dataset: "spider", queries: 10, failed: 4, exact: true, available: 1034 }];

describe("study plan", () => {
  it("K repairs per initially failed query; reflexion K + 1 reflections more; zeroshot none", () => {
    expect(streamCalls("zeroshot", 4, 7)).toBe(0);
    expect(streamCalls("iterative", 4, 7)).toBe(28);
    expect(streamCalls("reflexion", 4, 7)).toBe(60);
    expect(streamCalls("merit", 4, 7)).toBe(28);
  });

  it("under a regime that may reject a correct attempt (noisy_oracle) every query may repair, without an initial cache too (issue 39 item 5)", () => {
    expect(streamCalls("iterative", 4, 7, { queries: 10, rejectsCorrect: true })).toBe(70);
    const noisy = defineStudy({ name: "n", methods: ["zeroshot", "iterative"], seeds: [0], reference: "iterative", queries: 10, feedback: "noisy_oracle" });
    expect(gridBudget(noisy, streams, () => false)[0].calls).toBe(70);
    const dbms = defineStudy({ name: "d", methods: ["zeroshot", "iterative"], seeds: [0], reference: "iterative", queries: 10, feedback: "dbms_only" });
    expect(gridBudget(dbms, streams, () => false)[0].calls).toBe(28);
  });

  it("counts a model-built initial cache's calls before it exists, all still to compute (issue 39 item 5)", () => {
    const unbuilt = [{ dataset: "spider_dk", queries: 10, failed: 10, exact: false, available: 535, initialCalls: 535 }];
    const [b] = gridBudget(study, unbuilt, () => false);
    expect([b.calls, b.callsLeft]).toEqual([2 * (70 + 150 + 70) + 535, 2 * (70 + 150 + 70) + 535]);
    const lines = planLines(study, unbuilt, [b], { seconds: 1, source: "assumed" }, { tokens: 1, source: "x" }, [], 2);
    expect(lines).toContain("  spider_dk: 10 queries per stream, at most 10 initially failed (the initial cache is not built yet; the model builds it first: 535 calls, one per query of the dataset, counted below)");
  });

  it("counts runs and calls per dataset, leaving finished runs out of what is left", () => {
    const [b] = gridBudget(study, streams, (_d, m, s) => m === "reflexion" && s === 0);
    expect(b).toEqual({ dataset: "spider", runs: 8, complete: 1, calls: 2 * (28 + 60 + 28), callsLeft: 2 * (28 + 60 + 28) - 60, planned: false });
  });

  it("takes the grid plan's counts where it has them (repeats across streams counted once) and says so", () => {
    const [b] = gridBudget(study, streams, () => false, new Map([["spider", { calls: 100, callsLeft: 40 }]]));
    expect(b).toMatchObject({ calls: 100, callsLeft: 40, planned: true });
    const lines = planLines(study, streams, [b], { seconds: 1, source: "assumed" }, { tokens: 1000, source: "x" }, [], 2);
    expect(lines).toContain("most model calls: 100 (merit grid --plan's count: calls repeated across streams counted once, those the call cache holds not left to compute), 40 of them still to compute");
    expect(lines).toContain("estimated time: at most ~40 s (assumed; the progress line gives the real ETA)");
  });

  it("durations", () => {
    expect(durationText(40)).toBe("~40 s");
    expect(durationText(600)).toBe("~10 min");
    expect(durationText(4 * 3600 + 20 * 60)).toBe("~4 h 20 min");
  });

  it("power rows from the paper's variance for each comparison, and the lines that print them", () => {
    const powers = comparisonPowers(study, streams, paperVariances(readPaperNumbers().numbers), 2, []);
    expect(powers.map((p) => `${p.a}:${p.b}`)).toEqual(["merit:zeroshot", "merit:iterative", "merit:reflexion"]);
    expect(powers[1].source).toMatch(/^paper Table 2, merit vs iterative on spider: σ = 24\.5 pp per query over 3 orders$/);
    const lines = planLines(study, streams, gridBudget(study, streams, () => false), { seconds: 20, source: "assumed" }, { tokens: 1000, source: "x" }, powers, 2);
    expect(lines[0]).toBe("runs: 8 (4 methods × 2 stream orders × 1 dataset), 0 already complete");
    expect(lines).toContain("estimated time: at most ~77 min (assumed; the progress line gives the real ETA)");
    expect(lines.find((l) => l.startsWith("| spider | merit vs iterative | 10 | 2 |"))).toMatch(/\| [\d,]+ \(more than the 1,034 the dataset holds\) \| needs a pilot \|/);
  });

  it("the time estimate: this machine's measured rate when the last run computed calls, else the stated assumption", () => {
    expect(callRate({ seconds: 30, computed_calls: 60 }, "tiny")).toEqual({ seconds: 0.5, source: "measured on this machine by the study's last run: 0.50 s per computed call over 60 calls, model loading included" });
    expect(callRate({ seconds: 3, computed_calls: 0 }, "real")).toEqual({ seconds: 20, source: "assumed 20 s per call for a 7B Q4 GGUF on a CPU (~1 s on one GPU), not measured here" });
    expect(callRate(null, "server").seconds).toBe(1);
  });

  it("the simulated engine's estimate is the kit's own work per call that bench/overhead.ts measured, not an assumption (issue 38 §4)", () => {
    const rate = callRate(null, "simulated");
    expect(rate.seconds).toBe(MEASURED_KIT_OVERHEAD_S);
    expect(rate.source).toBe(`${Math.round(MEASURED_KIT_OVERHEAD_S * 1000)} ms of the kit's own work (oracle, retrieval, hooks, call cache, commit) measured by bench/overhead.ts per call for the simulated engine (no model: the kit's own work is all of it), not on this machine`);
    // a study's own measured rate still wins: it already holds the kit's work
    expect(callRate({ seconds: 6, computed_calls: 600 }, "simulated").seconds).toBe(0.01);
  });

  it("finished runs that differ are the pilot: their variance, rescaled to the planned design", () => {
    // 8 queries, seeds 0 and 1: merit right on q0-q5, iterative on q0-q1 and, under seed 1, q2
    const runOf = (method: string, seed: number, right: (q: number) => boolean) =>
      summarizeRun(Array.from({ length: 8 }, (_, q) => buildTrajectory({ query_id: String(q), attempts: [`SELECT ${q}`], statuses: [right(q) ? "CORRECT" : "DENOTATION_MISMATCH"], dataset: "spider", method, stream_seed: seed })));
    const pilot = [0, 1].flatMap((seed) => [runOf("merit", seed, (q) => q < 6), runOf("iterative", seed, (q) => q < 2 || (seed === 1 && q === 2))]);
    const s = defineStudy({ name: "p", methods: ["iterative", "merit"], seeds: [0, 1], reference: "merit", queries: 8 });
    const [p] = comparisonPowers(s, [{ dataset: "spider", queries: 8, failed: 8, exact: true, available: 1034 }], paperVariances(readPaperNumbers().numbers), 2, pilot);
    expect(p.source).toMatch(/^pilot: the study's runs \(8 queries × 2 orders, σ_b² [\d.]+, σ_w² [\d.]+ pp²\)$/);
    const [bigger] = comparisonPowers(s, [{ dataset: "spider", queries: 32, failed: 8, exact: true, available: 1034 }], paperVariances(readPaperNumbers().numbers), 2, pilot);
    expect(bigger.mde).toBeCloseTo(p.mde / 2, 9);
    expect(p.pilot).toBe("used");
  });

  it("a finished study: no tokens left (not \"most tokens: 0\"), and a pilot without variance asks for a larger pilot, not for a pilot", () => {
    const runOf = (method: string) => summarizeRun(Array.from({ length: 4 }, (_, q) => buildTrajectory({ query_id: String(q), attempts: [`SELECT ${q}`], statuses: [q < 2 ? "CORRECT" : "DENOTATION_MISMATCH"], dataset: "spider", method, stream_seed: 0 })));
    const s = defineStudy({ name: "p", methods: ["iterative", "merit"], seeds: [0], reference: "merit", queries: 4 });
    const done = [{ dataset: "spider", queries: 4, failed: 2, exact: true, available: 1034 }];
    const powers = comparisonPowers(s, done, paperVariances(readPaperNumbers().numbers), 2, [runOf("merit"), runOf("iterative")]);
    expect(powers[0]).toMatchObject({ pilot: "no-variance", seedsNeeded: null });
    const lines = planLines(s, done, gridBudget(s, done, () => true), { seconds: 1, source: "assumed" }, { tokens: 1234, source: "1234 per call, the mean of the study's finished runs" }, powers, 2);
    expect(lines).toContain("most tokens: none left to compute (no model call left)");
    expect(lines.find((l) => l.startsWith("| spider | merit vs iterative |"))).toMatch(/\| needs a larger pilot \(identical outcomes\) \| paper Table 2, merit vs iterative on spider \(the pilot shows identical outcomes/);
  });
});
