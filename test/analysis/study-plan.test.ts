// Tests lib/analysis/study-plan.ts: the most model calls per method, the grid budget with finished
// runs left out, the duration wording, and the power rows from the paper's variance.
import { describe, expect, it } from "vitest";
import { readPaperNumbers } from "../../lib/analysis/paper-comparison.ts";
import { comparisonPowers, durationText, gridBudget, planLines, streamCalls } from "../../lib/analysis/study-plan.ts";
import { paperVariances } from "../../lib/analysis/study-power.ts";
import { defineStudy } from "../../lib/experiment/study.ts";

const study = defineStudy({ name: "p", methods: ["zeroshot", "iterative", "reflexion", "merit"], seeds: [0, 1], reference: "merit", queries: 10 });
const streams = [{ dataset: "spider", queries: 10, failed: 4, exact: true, available: 1034 }];

describe("study plan", () => {
  it("K repairs per initially failed query; reflexion K + 1 reflections more; zeroshot none", () => {
    expect(streamCalls("zeroshot", 4, 7)).toBe(0);
    expect(streamCalls("iterative", 4, 7)).toBe(28);
    expect(streamCalls("reflexion", 4, 7)).toBe(60);
    expect(streamCalls("merit", 4, 7)).toBe(28);
  });

  it("counts runs and calls per dataset, leaving finished runs out of what is left", () => {
    const [b] = gridBudget(study, streams, (_d, m, s) => m === "reflexion" && s === 0);
    expect(b).toEqual({ dataset: "spider", runs: 8, complete: 1, calls: 2 * (28 + 60 + 28), callsLeft: 2 * (28 + 60 + 28) - 60 });
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
});
