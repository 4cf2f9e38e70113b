// Tests a hook call declaration whose `most` follows K (issue 39 §13): `{ per_repair: n, plus?: m }`
// allows n·K + m calls per episode at the run's K, so a step hook that calls once after every failed
// attempt declares `{ per_repair: 1 }` rather than a fixed number that is wrong at any other K. The
// run enforces the bound at its own K, the grid plan and the budget-matched control count it, the
// manifest and `merit methods` record it; lib/plugin.ts exports what a study reads back of a method
// (budgetMatchedSteps, callMost, methodSource: citation and groundTruth).
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { budgetMatchedSteps as pluginBudget, callMost, methodSource, registerMethod as pluginRegister } from "../../lib/plugin.ts";
import type { ChatBackend } from "../../lib/llm/types.ts";
import { budgetMatchedSteps, getMethod, hookCallBound, methodTable, registerMethod } from "../../lib/methods/index.ts";
import { budget } from "../helpers/budget.ts";
import { readRun } from "../helpers/run-fixture.ts";
import { ScriptedBackend } from "../helpers/scripted-backend.ts";
import { B, closeScenario, openScenario, runScenarioWith, scenarioScript, type ScenarioFixture } from "../helpers/scripted-scenario.ts";

let fx: ScenarioFixture;
beforeAll(async () => {
  fx = await openScenario("calls-per-repair");
}, budget(120_000));
afterAll(() => closeScenario(fx));

/** The scenario's repairs, and "ok" to any other prompt (a hook's own calls). */
function hookAnswers(): ChatBackend {
  const repairs = new ScriptedBackend(scenarioScript(fx.dataset));
  return {
    identity: repairs.identity,
    generate: (request) => (request.prompt.includes("\nQUESTION:\n") ? repairs.generate(request) : Promise.resolve({ text: "ok", promptTokens: 1, outputTokens: 1, truncatedPromptTokens: 0, cached: false })),
    close: async () => {},
  };
}

/** A critic note after every failure, `calls` model calls each, declared `{ per_repair: 1 }`. */
function critic(name: string, calls: number): void {
  registerMethod({
    name,
    description: "a critic's note after every failure, its bound following K (test)",
    hooks: {
      calls: { critic: { most: { per_repair: 1 }, per: "repair_episode" } },
      step: {
        name: "critic",
        afterFailure: async (state, model) => {
          for (let i = 1; i < calls; i++) await model.generate("critic", `again ${state.queryId}`);
          return `${await model.generate("critic", `critique ${state.queryId}`)} after ${state.attempts.length} attempts`;
        },
      },
    },
  });
}
critic("test_critic_per_repair", 1);
critic("test_critic_twice", 2);

describe("calls.most = { per_repair: n, plus?: m }", () => {
  it("the bound follows K: hookCallBound, budgetMatchedSteps, callMost, the manifest record and merit methods", () => {
    const m = getMethod("test_critic_per_repair");
    expect(hookCallBound(m, 7)).toBe(7);
    expect(hookCallBound(m, 3)).toBe(3);
    expect(hookCallBound(m, 3, { initiallyAccepted: true, finallyAccepted: true })).toBe(0); // per: repair_episode
    expect(budgetMatchedSteps("test_critic_per_repair", 7)).toBe(14);
    expect(pluginBudget("test_critic_per_repair", 2)).toBe(4);
    expect(callMost({ most: { per_repair: 2, plus: 1 } }, 7)).toBe(15);
    expect(callMost({ most: 4 }, 7)).toBe(4);
    expect(m.record.hooks?.calls.critic).toEqual({ most: { per_repair: 1 }, per: "repair_episode" });
    expect(methodTable().find((l) => l.startsWith("| `test_critic_per_repair` |"))).toContain("calls(critic<=K/repair_episode)");
  });

  it("registration refuses a malformed bound in one line", () => {
    const bad = (most: unknown) => () => registerMethod({ name: `test_bad_${Math.random().toString(36).slice(2)}`, description: "x", hooks: { calls: { critic: { most: most as number } } } });
    for (const most of [{ per_repair: 0 }, { per_repair: 1, plus: -1 }, { per_repair: 1.5 }, { per_repair: 1, extra: 2 }, {}, 0]) {
      expect(bad(most), JSON.stringify(most)).toThrow(/calls\.critic\.most must be a positive integer \(the most calls of that kind per episode\) or \{ per_repair: n, plus\?: m \}/);
    }
    expect(() => pluginRegister({ name: "test_plus_ok", description: "x", hooks: { calls: { critic: { most: { per_repair: 1, plus: 2 } } } } })).not.toThrow();
  });

  it("a run at K = 3 allows 3 calls in a failed episode (B: a note after the initial failure and repairs 1-2)", async () => {
    const dir = join(fx.root, "k3");
    await runScenarioWith(fx, "test_critic_per_repair", dir, hookAnswers(), { config: { max_repair_steps: 3 } });
    const b = readRun(dir).trajectories.find((t) => t.query_id === B)!;
    expect(b.call_kinds.filter((k) => k === "critic")).toHaveLength(3);
    expect(b.reflections).toEqual([1, 2, 3].map((n) => `ok after ${n} attempts`));
  }, budget(120_000));

  it("the run refuses a call beyond n·K, naming the method, the kind and the bound at this K", async () => {
    const dir = join(fx.root, "twice");
    await expect(runScenarioWith(fx, "test_critic_twice", dir, hookAnswers(), { config: { max_repair_steps: 3 } })).rejects.toThrow(/method "test_critic_twice": its hooks made 4 "critic" calls in the episode of query \d+ but declare at most 3/);
  }, budget(120_000));

  it("lib/plugin.ts gives a method's declared source: citation and groundTruth", () => {
    expect(methodSource("expel_online").citation).toMatch(/arXiv:2308\.10144/);
    expect(methodSource("reasoning_bank_oracle").groundTruth).toBe(true);
    expect(methodSource("test_critic_per_repair")).toEqual({ citation: null, groundTruth: false }); // hooks with the default sight: the agent's view
    expect(methodSource("iterative")).toEqual({ citation: null, groundTruth: null }); // no hooks: nothing to declare
  });
});
