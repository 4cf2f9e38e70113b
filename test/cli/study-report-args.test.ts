// Tests the report arguments of `merit study run` (lib/cli/study.ts studyReportArgs): the study's
// methods and comparisons, --conditions for arms that change K or feedback, --html unless --no-html
// (the learning curves and order sensitivity are in every report: no flag for them).
import { describe, expect, it } from "vitest";
import { studyReportArgs } from "../../lib/cli/study.ts";
import { defineStudy } from "../../lib/experiment/study.ts";

const base = { name: "report-args", datasets: ["spider"], methods: ["iterative", "merit"], reference: "merit" };

describe("merit study run: the report's arguments", () => {
  it("passes the study's methods and comparisons, --setting (its order and databases in every note), --html unless --no-html, and no curve flag (curves are the default)", () => {
    const one = studyReportArgs(defineStudy({ ...base, seeds: [0] }), ["runs/spider"], "out", false);
    expect(one).toEqual(["runs/spider", "--out", "out", "--methods", "iterative,merit", "--comparisons", "merit:iterative", "--setting", "--html"]);
    const two = studyReportArgs(defineStudy({ ...base, seeds: [0, 1] }), ["runs/spider"], "out", true);
    expect(two).toEqual(["runs/spider", "--out", "out", "--methods", "iterative,merit", "--comparisons", "merit:iterative", "--setting"]);
  });
  it("passes --conditions when an arm changes K", () => {
    const study = defineStudy({ ...base, methods: ["iterative", "merit", "iterative_k9"], seeds: [0, 1, 2], arms: { iterative_k9: { method: "iterative", max_repair_steps: 9 } } });
    const args = studyReportArgs(study, ["a", "b"], "out", true);
    expect(args.slice(0, 4)).toEqual(["a", "b", "--out", "out"]);
    expect(args.some((a) => a.includes("curves"))).toBe(false);
    expect(args[args.indexOf("--conditions") + 1]).toBe("max_repair_steps");
  });
});
