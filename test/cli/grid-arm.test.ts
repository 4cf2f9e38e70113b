// Tests `merit grid --max-repair-steps` and `--arm` (lib/cli/run.ts, issue "The peers on the same
// stream" §2: the equal-budget control): K overridden or computed as the budget-matched K of listed
// methods, and the one-line refusals of an arm that names several methods, changes nothing, or names a
// registered method; `merit run` refuses both flags.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rmSync } from "node:fs";
import { gridCommand, runCommand, withRepairSteps } from "../../lib/cli/run.ts";
import { loadConfig } from "../../lib/experiment/config.ts";
import { budgetMatchedSteps } from "../../lib/methods/registry.ts";
import { tempDir, writeTinyGridConfig } from "../helpers/run-fixture.ts";

const root = tempDir("grid-arm");
afterAll(() => rmSync(root, { recursive: true, force: true }));
let config: string;
beforeAll(async () => {
  config = await writeTinyGridConfig(root, { max_repair_steps: 2 });
});
const sink = { out: () => {}, err: () => {} };

describe("merit grid --max-repair-steps / --arm", () => {
  it("overrides K with a number, or with the budget-matched K of the listed methods", () => {
    const base = loadConfig(config);
    expect(withRepairSteps(base, undefined)).toBe(base);
    expect(withRepairSteps(base, "5").max_repair_steps).toBe(5);
    const k = withRepairSteps(base, "budget:reasoning_bank,exprag").max_repair_steps;
    expect(k).toBe(Math.max(budgetMatchedSteps("reasoning_bank", 2), budgetMatchedSteps("exprag", 2)));
    expect(k).toBeGreaterThan(2);
    expect(withRepairSteps(base, "budget:iterative").max_repair_steps).toBe(2); // no extra calls: K itself
    expect(() => withRepairSteps(base, "-1")).toThrow(/max-repair-steps/);
    expect(() => withRepairSteps(base, "budget:no_such_method")).toThrow(/unknown method "no_such_method"/);
  });
  it("refuses an arm of several methods, an arm that changes nothing, an arm under a method's name, and both flags in merit run", async () => {
    const grid = (...args: string[]) => gridCommand.run(["--config", config, "--seeds", "0", "--out", `${root}/g`, "--plan", ...args], sink);
    await expect(grid("--methods", "iterative,merit", "--arm", "both_budget", "--max-repair-steps", "9")).rejects.toThrow(/names the arm of one method; give one --methods/);
    await expect(grid("--methods", "iterative", "--arm", "same_budget")).rejects.toThrow(/changes nothing of iterative/);
    await expect(grid("--methods", "iterative", "--arm", "same_budget", "--max-repair-steps", "2")).rejects.toThrow(/changes nothing of iterative/);
    await expect(grid("--methods", "iterative", "--arm", "merit", "--max-repair-steps", "4")).rejects.toThrow(/arm "merit" has the name of a registered method/);
    await expect(runCommand.run(["--config", config, "--method", "iterative", "--seed", "0", "--arm", "x"], sink)).rejects.toThrow(/--arm is for merit grid/);
    await expect(runCommand.run(["--config", config, "--method", "iterative", "--seed", "0", "--max-repair-steps", "3"], sink)).rejects.toThrow(/--max-repair-steps is for merit grid/);
  });
  it("plans the arm under its own name at its K", async () => {
    const out: string[] = [];
    expect(await gridCommand.run(["--config", config, "--methods", "iterative", "--arm", "iterative_k4", "--max-repair-steps", "4", "--seeds", "0", "--out", `${root}/p`, "--plan", "--json"], { out: (l) => out.push(l), err: () => {} })).toBe(0);
    expect(out.join("\n")).toContain("iterative_k4");
  });
});
