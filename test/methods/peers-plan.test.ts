// Tests that `merit grid --plan` (lib/experiment/grid-plan.ts `computePlan`) counts the peer methods'
// extra calls exactly (issue 31 §3): on the scripted five-query scenario (real Spider data; two
// queries initially correct, three failing) with repairs that never succeed, each peer's planned
// `computed` calls equal the calls its run makes — its repairs plus its declared kinds in the
// episodes their scope allows (`per`: every episode, repair episodes, successes, repaired ones) —
// and `computedAtMost` bounds them.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../lib/experiment/config.ts";
import { computePlan } from "../../lib/experiment/grid-plan.ts";
import type { ChatBackend, GenerateRequest, GenerateResult } from "../../lib/llm/types.ts";
import { readRun, SPIDER_DIR } from "../helpers/run-fixture.ts";
import { closeScenario, openScenario, runScenarioWith, SCENARIO_LIMIT, SCENARIO_SEED, type ScenarioFixture } from "../helpers/scripted-scenario.ts";
import { budget } from "../helpers/budget.ts";

const PEERS = ["reasoning_bank", "reasoning_bank_oracle", "dynamic_cheatsheet", "dynamic_cheatsheet_rs", "awm", "expel_online", "exprag", "exprecent", "error_fix_memory"];
const K = 2;

/** Repairs that never succeed (`SELECT 1`); any other prompt (a peer's judge, distill, curate, …) gets a fixed text. */
class CountingDouble implements ChatBackend {
  readonly identity = { kind: "test-scripted", model: "counting", modelHash: "none", params: {} };
  calls = 0;
  async generate(request: GenerateRequest): Promise<GenerateResult> {
    this.calls += 1;
    const repair = /^PROMPT_VERSION: \w+-repair-v4/.test(request.prompt);
    const text = repair ? "<answer>SELECT 1</answer>" : "<verdict>incorrect</verdict> nothing to add";
    return { text, promptTokens: 10, outputTokens: 3, truncatedPromptTokens: 0, cached: false };
  }
  async close(): Promise<void> {}
}

let fx: ScenarioFixture;
beforeAll(async () => {
  fx = await openScenario("peers-plan");
}, budget(120_000));
afterAll(() => closeScenario(fx));

describe("merit grid --plan with the peers", () => {
  for (const method of PEERS) {
    it(`${method}: planned computed calls = the run's calls`, async () => {
      const config = parseConfig({ dataset: "spider", data_dir: SPIDER_DIR, initial_cache: fx.cachePath, max_repair_steps: K });
      const dir = join(fx.root, method);
      const plan = await computePlan({ config, streams: [{ method, seed: SCENARIO_SEED, outDir: dir }], limit: SCENARIO_LIMIT, dataset: fx.dataset, initialCache: fx.cache, score: (e, sql) => fx.oracle.score(e, sql), lookup: null, identity: null });
      const double = new CountingDouble();
      await runScenarioWith(fx, method, dir, double, { config: { max_repair_steps: K } });
      const made = readRun(dir).trajectories.reduce((n, t) => n + t.call_kinds.length - 1, 0);
      expect(made).toBe(double.calls);
      expect(plan.computed).toBe(double.calls);
      expect(plan.computedAtMost).toBeGreaterThanOrEqual(double.calls);
    }, budget(120_000));
  }
});
