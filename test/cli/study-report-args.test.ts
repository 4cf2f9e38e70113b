// Tests the report arguments of `merit study run` (lib/cli/study.ts studyReportArgs): the study's
// methods and comparisons, --conditions for arms that change K or feedback, --curves (learning
// curves and order sensitivity) only with two or more stream orders, --html unless --no-html.
import { describe, expect, it } from "vitest";
import { studyReportArgs } from "../../lib/cli/study.ts";
import { defineStudy } from "../../lib/experiment/study.ts";

const base = { name: "report-args", datasets: ["spider"], methods: ["iterative", "merit"], reference: "merit" };

describe("merit study run: the report's arguments", () => {
  it("passes --curves with two or more seeds, not with one", () => {
    const one = studyReportArgs(defineStudy({ ...base, seeds: [0] }), ["runs/spider"], "out", false);
    expect(one).toEqual(["runs/spider", "--out", "out", "--methods", "iterative,merit", "--comparisons", "merit:iterative", "--html"]);
    const two = studyReportArgs(defineStudy({ ...base, seeds: [0, 1] }), ["runs/spider"], "out", true);
    expect(two).toEqual(["runs/spider", "--out", "out", "--methods", "iterative,merit", "--comparisons", "merit:iterative", "--curves"]);
  });
  it("passes --conditions when an arm changes K", () => {
    const study = defineStudy({ ...base, methods: ["iterative", "merit", "iterative_k9"], seeds: [0, 1, 2], arms: { iterative_k9: { method: "iterative", max_repair_steps: 9 } } });
    const args = studyReportArgs(study, ["a", "b"], "out", true);
    expect(args.slice(0, 4)).toEqual(["a", "b", "--out", "out"]);
    expect(args).toContain("--curves");
    expect(args[args.indexOf("--conditions") + 1]).toBe("max_repair_steps");
  });
});
