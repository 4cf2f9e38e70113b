// `merit grid --plan` is an upper bound under every feedback regime (issue 39 item 5): on the scripted
// five-query scenario over three stream orders, the calls a grid computes (distinct requests: the
// call cache answers a repeated one) never exceed the plan's computedAtMost — under noisy_oracle too,
// where the noise rejects initially correct queries in some orders (they are then repaired) and not
// in others, so each order's initial attempts are replayed with its own draws.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../lib/experiment/config.ts";
import { computePlan } from "../../lib/experiment/grid-plan.ts";
import { defineStudy } from "../../lib/experiment/study.ts";
import { largestOutputLimit } from "../../lib/analysis/study-plan.ts";
import { runExperiment } from "../../lib/experiment/run.ts";
import type { ChatBackend, GenerateRequest, GenerateResult } from "../../lib/llm/types.ts";
import { getMethod } from "../../lib/methods/index.ts";
import { createRetriever } from "../../lib/retrieval/retriever.ts";
import { SPIDER_DIR } from "../helpers/run-fixture.ts";
import { HashedEmbedder } from "../helpers/hashed-embedder.ts";
import { closeScenario, openScenario, SCENARIO_LIMIT, type ScenarioFixture } from "../helpers/scripted-scenario.ts";
import { budget } from "../helpers/budget.ts";

/** Answers every repair with SQL that runs and is wrong, and every judge with "incorrect"; counts distinct requests (a call cache computes each once). */
class CountingBackend implements ChatBackend {
  readonly identity = { kind: "test-counting", model: "count", modelHash: "none", params: {} };
  readonly distinct = new Set<string>();
  async generate(request: GenerateRequest): Promise<GenerateResult> {
    this.distinct.add(`${request.maxOutputTokens}\0${request.prompt}`);
    const judge = request.prompt.startsWith("PROMPT_VERSION: merit-judge-v1");
    return { text: judge ? "<verdict>incorrect</verdict>" : "<answer>SELECT 1</answer>", promptTokens: 1, outputTokens: 1, truncatedPromptTokens: 0, cached: false };
  }
  async close(): Promise<void> {}
}

let fx: ScenarioFixture;
beforeAll(async () => {
  fx = await openScenario("plan-regimes");
}, budget(120_000));
afterAll(() => closeScenario(fx));

// Under noisy_oracle at 0.5 the draws accept both initially correct queries (426, 278) in orders 1 and
// 2 but reject both in order 0: planned first, order 1 must not stand for order 0's episodes.
const SEEDS = [1, 0, 2];
const REGIMES: [string, Record<string, unknown>][] = [
  ["denotation_confirmed", {}],
  ["dbms_only", {}],
  ["llm_judge", {}],
  ["noisy_oracle", { feedback_noise: 0.5 }],
];

describe("the plan is an upper bound under every regime", () => {
  it.each(REGIMES)("%s: the calls computed over three orders are at most the plan's computedAtMost", async (regime, extra) => {
    const k = 2;
    const config = parseConfig({ dataset: "spider", data_dir: SPIDER_DIR, initial_cache: fx.cachePath, feedback_regime: regime, max_repair_steps: k, ...extra });
    const dir = join(fx.root, `plan-${regime}`);
    const streams = SEEDS.map((seed) => ({ method: "iterative", seed, outDir: join(dir, String(seed)) }));
    const plan = await computePlan({ config, streams, limit: SCENARIO_LIMIT, dataset: fx.dataset, initialCache: fx.cache, score: (e, sql) => fx.oracle.score(e, sql), lookup: null, identity: null });
    const backend = new CountingBackend();
    for (const s of streams) {
      await runExperiment({ spec: { config, method: s.method, seed: s.seed, limit: SCENARIO_LIMIT }, method: getMethod(s.method), dataset: fx.dataset, initialCache: fx.cache, outDir: s.outDir, services: { backend, oracle: fx.oracle, embedder: new HashedEmbedder(), retriever: createRetriever() } });
    }
    expect(backend.distinct.size).toBeGreaterThan(0);
    expect(backend.distinct.size).toBeLessThanOrEqual(plan.computedAtMost);
    // Under the oracle the plan is exact here (nothing is repaired: every repair is wrong).
    if (regime === "denotation_confirmed") expect(backend.distinct.size).toBe(plan.computed);
    rmSync(dir, { recursive: true, force: true });
  }, budget(120_000));
});

describe("the plan bounds generated tokens with each call kind's declared output limit (issue 36 §4)", () => {
  it("dynamic_cheatsheet's curate calls count at 4,096 tokens, repairs at max_output_tokens", async () => {
    const config = parseConfig({ dataset: "spider", data_dir: SPIDER_DIR, initial_cache: fx.cachePath, max_repair_steps: 2 });
    const plan = await computePlan({ config, streams: [{ method: "dynamic_cheatsheet", seed: 0, outDir: join(fx.root, "dc") }], limit: SCENARIO_LIMIT, dataset: fx.dataset, initialCache: fx.cache, score: (e, sql) => fx.oracle.score(e, sql), lookup: null, identity: null });
    const curate = SCENARIO_LIMIT; // one per episode
    expect(plan.outputTokensBound).toBe((plan.computedAtMost - curate) * 512 + curate * 4096);
    const study = defineStudy({ name: "s", methods: ["iterative", "dynamic_cheatsheet"], seeds: [0], reference: "iterative", queries: 5 });
    expect(largestOutputLimit(study, 512)).toBe(4096);
    expect(largestOutputLimit(defineStudy({ name: "p", methods: ["iterative", "merit"], seeds: [0], reference: "merit", queries: 5 }), 512)).toBe(512);
  }, budget(120_000));
});
