// Tests the equal-budget control (lib/methods/registry.ts budgetMatchedSteps; METHOD.md §13
// "Budget-matched control"): K plus the most extra LLM calls a method's hooks declare per episode,
// per peer, under an alias and for a spec; and the study recipe — an arm of iterative with that K,
// whose runs get it in their config and whose report pairs conditions on max_repair_steps.
import { describe, expect, it } from "vitest";
import { studyReportArgs } from "../../lib/cli/study.ts";
import { PEER_METHODS } from "../../lib/experiment/grid-plan.ts";
import { armConditions, defineStudy, registerStudyArms, studyConfig, studyPaths } from "../../lib/experiment/study.ts";
import { budgetMatchedSteps, getMethod, hookCallBound } from "../../lib/methods/index.ts";

describe("budgetMatchedSteps", () => {
  it("is K plus the method's declared extra calls per episode (the sum of each kind's most)", () => {
    const K = 7;
    expect(budgetMatchedSteps("iterative", K)).toBe(7); // no hooks
    expect(budgetMatchedSteps("merit", K)).toBe(7); // its memory writes make no LLM call
    expect(budgetMatchedSteps("reasoning_bank", K)).toBe(9); // judge + distill
    expect(budgetMatchedSteps("reasoning_bank_oracle", K)).toBe(8); // distill only
    expect(budgetMatchedSteps("dynamic_cheatsheet", K)).toBe(8); // curate
    expect(budgetMatchedSteps("awm", 0)).toBe(1);
    for (const peer of PEER_METHODS) expect(budgetMatchedSteps(peer, K)).toBe(K + hookCallBound(getMethod(peer), K));
    expect(Math.max(...PEER_METHODS.map((m) => budgetMatchedSteps(m, K)))).toBe(9); // the most any peer spends
    expect(budgetMatchedSteps(getMethod("reasoning_bank"), 3)).toBe(5);
    expect(() => budgetMatchedSteps("reasoning_bank", -1)).toThrow(/non-negative integer/);
    expect(() => budgetMatchedSteps("no_such_method", 7)).toThrow(/no_such_method/);
  });

  it("the study recipe: an iterative arm with the budget-matched K, reported with --conditions max_repair_steps", () => {
    const study = defineStudy({
      name: "budget-matched-t",
      datasets: ["spider"],
      seeds: [0, 1, 2],
      methods: ["iterative", "reasoning_bank", "iterative_budget_t"],
      reference: "reasoning_bank",
      comparisons: [["reasoning_bank", "iterative"], ["reasoning_bank", "iterative_budget_t"]],
      arms: { iterative_budget_t: { method: "iterative", max_repair_steps: budgetMatchedSteps("reasoning_bank", 7) } },
    });
    registerStudyArms(study);
    expect(armConditions(study, "iterative_budget_t")).toEqual({ max_repair_steps: 9 });
    const paths = studyPaths(study);
    expect(studyConfig(study, "spider", paths, "iterative_budget_t").max_repair_steps).toBe(9);
    expect(studyConfig(study, "spider", paths, "iterative").max_repair_steps).toBe(7);
    const args = studyReportArgs(study, ["runs/spider"], "out", true);
    expect(args[args.indexOf("--conditions") + 1]).toBe("max_repair_steps");
    expect(args[args.indexOf("--comparisons") + 1]).toBe("reasoning_bank:iterative,reasoning_bank:iterative_budget_t");
  });
});
