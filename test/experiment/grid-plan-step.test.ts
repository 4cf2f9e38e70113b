// merit grid --plan with a method whose `step` hook adds a text to its repair prompts (issue 36 §6,
// last bullet; lib/experiment/grid-plan.ts): those prompts are not the memoryless twin's, so its
// repair calls are computed, never repeats of another method's calls nor answers of the call cache
// for them. On the scripted five-query scenario (3 initial failures) with repairs that never
// succeed, plan = computed for a grid of `iterative` and the step-hook method together.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../lib/experiment/config.ts";
import { computePlan } from "../../lib/experiment/grid-plan.ts";
import type { ChatBackend } from "../../lib/llm/types.ts";
import { registerMethod } from "../../lib/methods/index.ts";
import { SPIDER_DIR } from "../helpers/run-fixture.ts";
import { closeScenario, openScenario, runScenarioWith, SCENARIO_LIMIT, SCENARIO_SEED, type ScenarioFixture } from "../helpers/scripted-scenario.ts";
import { budget } from "../helpers/budget.ts";

/** Repairs that never succeed, counting the prompts it is sent. */
function junk(): ChatBackend & { prompts: string[] } {
  const prompts: string[] = [];
  return {
    prompts,
    identity: { kind: "test-scripted", model: "junk", modelHash: "none", params: {} },
    async generate(request) {
      prompts.push(request.prompt);
      return { text: "<answer>SELECT 1</answer>", promptTokens: 1, outputTokens: 1, truncatedPromptTokens: 0, cached: false };
    },
    async close() {},
  };
}

registerMethod({
  name: "test_step_hint",
  description: "a step hook that adds a hint after every failure (test)",
  hooks: { step: { name: "hint", afterFailure: (state) => `Hint ${state.attempts.length}: check the column names.` } },
});

let fx: ScenarioFixture;
beforeAll(async () => {
  fx = await openScenario("grid-plan-step");
}, budget(120_000));
afterAll(() => closeScenario(fx));

describe("merit grid --plan, a step-hook method", () => {
  it("counts the repairs whose prompts its step hook changes as computed: plan = computed", async () => {
    const k = 2;
    const config = parseConfig({ dataset: "spider", data_dir: SPIDER_DIR, initial_cache: fx.cachePath, max_repair_steps: k });
    const streams = ["iterative", "test_step_hint"].map((method) => ({ method, seed: SCENARIO_SEED, outDir: join(fx.root, method) }));
    const plan = await computePlan({ config, streams, limit: SCENARIO_LIMIT, dataset: fx.dataset, initialCache: fx.cache, score: (e, sql) => fx.oracle.score(e, sql), lookup: null, identity: null });
    const sent = new Set<string>();
    for (const s of streams) {
      const backend = junk();
      await runScenarioWith(fx, s.method, s.outDir, backend, { config: { max_repair_steps: k } });
      for (const p of backend.prompts) sent.add(p); // one call cache for the grid: a prompt sent twice is computed once
    }
    const step = plan.methods.find((m) => m.method === "test_step_hint")!;
    expect(step.repeats).toBe(0);
    expect(step.computed).toBe(3 * k);
    expect(sent.size).toBe(2 * 3 * k);
    expect(plan.computed).toBe(sent.size);
    expect(plan.computedAtMost).toBeGreaterThanOrEqual(sent.size);
  }, budget(120_000));
});
