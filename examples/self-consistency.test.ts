// Tests examples/self-consistency.ts, how a repair candidate is produced (issue 36 §6), on real
// Spider data (the scripted five-query scenario, test/helpers/scripted-scenario.ts). Query B (585,
// "List the title of all cartoons in alphabetical order.") fails initially and its greedy repair is
// wrong; a chat double answers its 5 samples by seed, 3 of which return the gold's rows: the vote
// scores the majority's SQL, the samples are accounted as `sample` calls with derived seeds (the
// same on a replay, keyed by the call cache), the executions are counted, the plan counts 5·K
// samples per repair episode, and what the hook is given holds no verdict and no gold.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { summarizeRun } from "../lib/analysis/run-summary.ts";
import { auditRun } from "../lib/experiment/audit.ts";
import { parseConfig } from "../lib/experiment/config.ts";
import { computePlan } from "../lib/experiment/grid-plan.ts";
import { episodeSpecOf } from "../lib/experiment/run.ts";
import { buildStream } from "../lib/experiment/stream.ts";
import { callKey } from "../lib/llm/call-cache.ts";
import { loadSimulatedParams } from "../lib/llm/engines/simulated-params.ts";
import { SimulatedBackend } from "../lib/llm/engines/simulated.ts";
import type { ChatBackend, GenerateRequest, GenerateResult } from "../lib/llm/types.ts";
import { getMethod, hookCallBound, loadPlugins, registerMethod } from "../lib/methods/index.ts";
import { runEpisode, type EpisodeServices } from "../lib/repair/episode.ts";
import { sampleSeed } from "../lib/repair/proposal.ts";
import { readRun, SPIDER_DIR } from "../test/helpers/run-fixture.ts";
import { ScriptedBackend } from "../test/helpers/scripted-backend.ts";
import { A, B, C, closeScenario, openScenario, runScenarioWith, SCENARIO_IDS, SCENARIO_LIMIT, SCENARIO_SEED, scenarioScript, type ScenarioFixture } from "../test/helpers/scripted-scenario.ts";
import { budget } from "../test/helpers/budget.ts";
import { answerKey, SAMPLES, selfConsistent, TEMPERATURE, vote, type Candidate } from "./self-consistency.ts";

const PLUGIN = "examples/self-consistency.ts";

/** B's samples at repair step 1, by sample number: two with 2 rows, three with the gold's rows, one that does not run. */
const SAMPLED = [
  "SELECT Title FROM Cartoon WHERE id <= 2 ORDER BY Title",
  "SELECT Title FROM Cartoon ORDER BY Title", // the gold's rows: the first of the majority
  "SELECT Title FROM Cartoon ORDER BY Title ASC",
  "SELECT title FROM cartoon ORDER BY title",
  "SELECT Titl FROM Cartoon",
];

/**
 * The scenario's greedy repairs, and B's samples at step 1 by seed; any other sample (`others`)
 * answers what the greedy repair of its prompt answers (else a seed it does not know is a failure).
 * With `stopAt`, the `stopAt`-th call fails with "scripted stop".
 */
class SamplingDouble implements ChatBackend {
  readonly identity = { kind: "test-sampling", model: "scripted", modelHash: "none", params: {} };
  readonly requests: GenerateRequest[] = [];
  readonly #greedy: ScriptedBackend;
  readonly #bySeed: Map<number, string>;
  readonly #others: boolean;
  readonly #stopAt: number;

  constructor(fx: ScenarioFixture, opts: { others?: boolean; stopAt?: number } = {}) {
    this.#greedy = new ScriptedBackend(scenarioScript(fx.dataset));
    this.#bySeed = new Map(SAMPLED.map((sql, i) => [sampleSeed(SCENARIO_SEED, B, 1, "sample", i), sql]));
    this.#others = opts.others ?? false;
    this.#stopAt = opts.stopAt ?? Infinity;
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    this.requests.push(request);
    if (this.requests.length >= this.#stopAt) throw new Error("scripted stop");
    if (!request.sampling) return this.#greedy.generate(request);
    const sql = this.#bySeed.get(request.sampling.seed);
    if (sql === undefined && this.#others) return this.#greedy.generate({ prompt: request.prompt, maxOutputTokens: request.maxOutputTokens });
    if (sql === undefined) throw new Error(`no sample scripted for seed ${request.sampling.seed}`);
    return { text: `<answer>${sql}</answer>`, promptTokens: 10, outputTokens: 5, truncatedPromptTokens: 0, cached: false };
  }

  async close(): Promise<void> {}
}

let fx: ScenarioFixture;
beforeAll(async () => {
  await loadPlugins([PLUGIN]);
  fx = await openScenario("self-consistency");
}, budget(120_000));
afterAll(() => closeScenario(fx));

const config = () => parseConfig({ dataset: "spider", data_dir: SPIDER_DIR, initial_cache: fx.cachePath });

/** The episode of B under `method` with `backend`, the fixture's oracle scoring and executing. */
function runB(method: string, backend: ChatBackend, services: Partial<EpisodeServices> = {}) {
  const item = buildStream(fx.dataset, fx.cache, SCENARIO_SEED, SCENARIO_LIMIT).find((i) => i.example.id === B)!;
  const spec = episodeSpecOf({ config: config(), method, seed: SCENARIO_SEED, limit: SCENARIO_LIMIT }, getMethod(method), fx.dataset, item);
  return runEpisode(spec, { backend, score: (e, sql) => fx.oracle.score(e, sql), execute: (e, sql) => fx.oracle.execute(e, sql), ...services });
}

describe("the execution-majority vote", () => {
  const ran = (rows: unknown[][]): Candidate["execution"] => ({ executed: true, rows: rows as never, truncated: false, error: null });
  const failed: Candidate["execution"] = { executed: false, rows: [], truncated: false, error: "no such column: x" };

  it("picks the first SQL of the largest group of equal results; row order does not split a group; failures do not vote", () => {
    const candidates: Candidate[] = [
      { sql: "greedy", execution: ran([[1]]) },
      { sql: "a", execution: failed },
      { sql: "b", execution: ran([[2], [3]]) },
      { sql: "c", execution: ran([[3], [2]]) },
      { sql: "d", execution: failed },
    ];
    expect(vote(candidates)).toBe("b");
    expect(answerKey(ran([[2], [3]]))).toBe(answerKey(ran([[3], [2]])));
  });

  it("a tie goes to the group whose first candidate comes first (the greedy repair's); none ran: null", () => {
    expect(vote([{ sql: "greedy", execution: ran([[1]]) }, { sql: "x", execution: ran([[2]]) }])).toBe("greedy");
    expect(vote([{ sql: "a", execution: ran([[1]]) }, { sql: "b", execution: ran([[2]]) }, { sql: "c", execution: ran([[2]]) }, { sql: "d", execution: ran([[1]]) }])).toBe("a");
    expect(vote([{ sql: "a", execution: failed }])).toBeNull();
  });
});

describe("self_consistency on the scripted scenario", () => {
  it("scores the majority result's SQL; the samples are `sample` calls at 0.7 with derived seeds; executions are counted", async () => {
    const backend = new SamplingDouble(fx);
    const result = await runB("self_consistency", backend);
    // Step 1: the greedy repair is wrong (1 row), the vote scores sample 1's SQL, which is correct: the episode ends.
    expect(result.attempts.map((a) => a.sql)).toEqual([expect.any(String), SAMPLED[1]]);
    expect(result.attempts[1].confirmedCorrect).toBe(true);
    expect(result.calls.map((c) => c.kind)).toEqual(["initial_cache", "repair", ...Array(SAMPLES).fill("sample")]);
    const sampled = backend.requests.filter((r) => r.sampling);
    expect(sampled.map((r) => r.sampling)).toEqual(SAMPLED.map((_, i) => ({ temperature: TEMPERATURE, seed: sampleSeed(SCENARIO_SEED, B, 1, "sample", i) })));
    // every sample is asked the repair prompt itself
    expect(new Set(sampled.map((r) => r.prompt))).toEqual(new Set([backend.requests.find((r) => !r.sampling)!.prompt]));
    // the greedy SQL and 5 distinct samples executed once each, on top of the oracle's scoring
    const scoring = (await fx.oracle.score(fx.dataset.examples.find((e) => e.id === B)!, SAMPLED[1])).dbExecutions;
    expect(result.attempts[1].dbExecutions).toBe(scoring + 6);
    // the same episode again asks the same calls (a replay is byte for byte), and the cache keys the samples apart
    const again = new SamplingDouble(fx);
    await runB("self_consistency", again);
    expect(again.requests).toEqual(backend.requests);
    const keys = new Set(sampled.map((r) => callKey(backend.identity, r)));
    expect(keys.size).toBe(SAMPLES);
    expect(keys.has(callKey(backend.identity, { prompt: sampled[0].prompt, maxOutputTokens: sampled[0].maxOutputTokens }))).toBe(false);
  }, budget(120_000));

  it("without a propose hook the episode scores the greedy repair's SQL and asks no sample (iterative)", async () => {
    const backend = new SamplingDouble(fx);
    const result = await runB("iterative", backend);
    expect(result.attempts).toHaveLength(8);
    expect(backend.requests.some((r) => r.sampling)).toBe(false);
    expect(result.attempts[1].sql).toBe("SELECT Title FROM Cartoon WHERE id <= 1 ORDER BY Title");
  }, budget(120_000));

  it("what a method that executes is given holds no verdict and no gold", async () => {
    const seen: unknown[] = [];
    registerMethod({
      name: "test_sc_spy",
      description: "records what a propose hook is given (test)",
     
      hooks: {
        calls: { sample: { most: { per_repair: SAMPLES }, per: "repair_episode", temperature: TEMPERATURE } },
        propose: {
          name: "spy",
          propose: async (request, tools) => {
            seen.push({ request, tools: Object.keys(tools).sort(), model: Object.keys(tools.model).sort() });
            for (const sql of SAMPLED) seen.push(await tools.execute(sql));
            return selfConsistent(request, tools);
          },
        },
      },
    });
    await runB("test_sc_spy", new SamplingDouble(fx));
    const [given, ...executions] = seen as [{ request: Record<string, unknown>; tools: string[]; model: string[] }, ...Record<string, unknown>[]];
    expect(given.tools).toEqual(["execute", "extractSql", "model"]);
    expect(given.model).toEqual(["embed", "generate", "reply", "sample"]);
    for (const e of executions) expect(Object.keys(e).sort()).toEqual(["error", "executed", "rows", "truncated"]);
    expect(executions.map((e) => e.executed)).toEqual([true, true, true, true, false]);
    const text = JSON.stringify(seen);
    const gold = fx.dataset.examples.find((e) => e.id === B)!.goldSql;
    expect(text).not.toContain(gold);
    expect(text).not.toMatch(/oracleCorrect|confirmedCorrect|"CORRECT"/);
    expect(Object.keys(given.request).sort()).toEqual(["attempts", "dataset", "dbId", "evidence", "greedy", "iteration", "prompt", "queryId", "question", "schema", "streamPosition"]);
    // the results are frozen: a hook cannot edit them in place
    expect(Object.isFrozen(executions[0])).toBe(true);
  }, budget(120_000));

  it("a caller that gives no executor, a sample of an undeclared temperature and a greedy call of a sampled kind are refused in one line", async () => {
    await expect(runB("self_consistency", new SamplingDouble(fx), { execute: undefined })).rejects.toThrow(/method "self_consistency": its propose hook executes candidates, but this caller of the episode gives no read-only executor/);
    registerMethod({ name: "test_sc_greedy_kind", description: "x", hooks: { calls: { draft: { most: { per_repair: 1 } } }, propose: { name: "p", propose: async (r, t) => (await t.model.sample("draft", r.prompt)).text } } });
    await expect(runB("test_sc_greedy_kind", new SamplingDouble(fx))).rejects.toThrow(/model\.sample with kind "draft", which declares no temperature; declare hooks\.calls\.draft\.temperature/);
    registerMethod({ name: "test_sc_reply_sampled", description: "x", hooks: { calls: { sample: { most: { per_repair: 1 }, temperature: 0.7 } }, propose: { name: "p", propose: async (r, t) => t.model.generate("sample", r.prompt) } } });
    await expect(runB("test_sc_reply_sampled", new SamplingDouble(fx))).rejects.toThrow(/model\.reply with kind "sample", which is sampled \(it declares temperature 0\.7\); call model\.sample/);
    registerMethod({ name: "test_sc_number", description: "x", hooks: { propose: { name: "p", propose: () => 42 as unknown as string } } });
    await expect(runB("test_sc_number", new SamplingDouble(fx))).rejects.toThrow(/method "test_sc_number": propose "p" returned 42 for query 585; it must return the SQL to score/);
    registerMethod({ name: "test_sc_throws", description: "x", hooks: { propose: { name: "p", propose: () => { throw new Error("boom\nstack"); } } } });
    await expect(runB("test_sc_throws", new SamplingDouble(fx))).rejects.toThrow(/^method "test_sc_throws": propose\.propose \("p"\) in the episode of query 585 threw Error: boom; fix the hook/);
    expect(() => registerMethod({ name: "test_sc_hot", description: "x", hooks: { calls: { sample: { most: 1, temperature: 3 } } } })).toThrow(/calls\.sample\.temperature must be a number in \(0, 2\]/);
  }, budget(120_000));

  it("the plan counts 5·K samples per repair episode, and the manifest records the declared temperature", async () => {
    const k = config().max_repair_steps;
    const m = getMethod("self_consistency");
    expect(hookCallBound(m, k)).toBe(SAMPLES * k);
    expect(hookCallBound(m, k, { initiallyAccepted: true, finallyAccepted: true })).toBe(0);
    expect(m.record.hooks).toMatchObject({ propose: { name: "execution_vote" }, calls: { sample: { most: { per_repair: SAMPLES }, per: "repair_episode", temperature: TEMPERATURE } } });
    const streams = [{ method: "self_consistency", seed: SCENARIO_SEED, outDir: "unused" }, { method: "iterative", seed: SCENARIO_SEED, outDir: "unused" }];
    const plan = await computePlan({ config: config(), streams, limit: SCENARIO_LIMIT, dataset: fx.dataset, initialCache: fx.cache, score: (e, sql) => fx.oracle.score(e, sql), lookup: null, identity: null });
    const sc = plan.methods.find((p) => p.method === "self_consistency")!;
    const it = plan.methods.find((p) => p.method === "iterative")!;
    // 3 repair episodes (A, B, C): K repairs and 5·K samples each if no repair succeeds
    expect(sc.repairEpisodes).toBe(3);
    expect(sc.computed).toBe(3 * (k + SAMPLES * k));
    expect(sc.computedAtMost).toBe(3 * (k + SAMPLES * k));
    expect(it.computedAtMost).toBe(3 * k);
  }, budget(120_000));
});

describe("the simulated engine answers sampled calls", () => {
  it("each seed is its own draw of the response model; greedy calls are as before", async () => {
    const loaded = loadSimulatedParams();
    const engine = new SimulatedBackend(loaded, { examples: fx.dataset.examples });
    const first = (await runB("iterative", new SamplingDouble(fx))).prompts.find((p) => p.kind === "repair")!.text;
    const greedy = engine.respond(first);
    expect(engine.respond(first, undefined)).toEqual(greedy);
    const samples = Array.from({ length: 40 }, (_, i) => engine.respond(first, { temperature: TEMPERATURE, seed: sampleSeed(0, B, 1, "sample", i) }));
    // the same seed, the same sample
    expect(engine.respond(first, { temperature: TEMPERATURE, seed: sampleSeed(0, B, 1, "sample", 0) })).toEqual(samples[0]);
    // every sample is a repair answer; they differ across seeds (correct and wrong ones both drawn)
    expect(samples.every((s) => s.call === "repair" && /<answer>/.test(s.text))).toBe(true);
    expect(new Set(samples.map((s) => s.text)).size).toBeGreaterThan(1);
    expect(new Set(samples.map((s) => s.correct))).toEqual(new Set([true, false]));
    const answered = await engine.generate({ prompt: first, maxOutputTokens: 512, sampling: { temperature: TEMPERATURE, seed: sampleSeed(0, B, 1, "sample", 0) } });
    expect(answered.text).toBe(samples[0].text);
  }, budget(120_000));
});

describe("a run of a sampling method (no execution)", () => {
  // Self-consistency by identical SQL text: the samples' most frequent SQL (ties: the first sample).
  registerMethod({
    name: "test_sc_textvote",
    description: "5 samples per repair step, the most frequent SQL text scored (test)",
    hooks: {
      calls: { sample: { most: { per_repair: SAMPLES }, per: "repair_episode", temperature: TEMPERATURE } },
      propose: {
        name: "text_vote",
        async propose(request, tools) {
          const sqls: string[] = [];
          for (let i = 0; i < SAMPLES; i++) sqls.push(tools.extractSql((await tools.model.sample("sample", request.prompt)).text));
          const count = (sql: string) => sqls.filter((s) => s === sql).length;
          return sqls.reduce((best, sql) => (count(sql) > count(best) ? sql : best), sqls[0]);
        },
      },
    },
  });

  it("records the samples under their kind in the trajectories and the cost summary, passes the audit, stays within the plan and resumes to the same bytes", async () => {
    const whole = join(fx.root, "textvote-whole");
    await runScenarioWith(fx, "test_sc_textvote", whole, new SamplingDouble(fx, { others: true }));
    const { trajectories } = readRun(whole);
    expect(trajectories.map((t) => t.query_id)).toEqual(SCENARIO_IDS);
    const byId = new Map(trajectories.map((t) => [t.query_id, t]));
    const steps = { [A]: 3, [B]: 7, [C]: 1 } as Record<string, number>;
    for (const [id, k] of Object.entries(steps)) {
      expect(byId.get(id)!.call_kinds, id).toEqual(["initial_cache", ...Array.from({ length: k }, () => ["repair", ...Array(SAMPLES).fill("sample")]).flat()]);
    }
    // B's first step: sample 0's SQL (every sample differs, so the first), not the greedy repair's
    expect(byId.get(B)!.attempts[1]).toBe(SAMPLED[0]);
    expect(summarizeRun(trajectories).costs!.by_kind.sample.calls).toBe(SAMPLES * (3 + 7 + 1));
    expect(auditRun(whole, fx.dataset).violations).toEqual([]);
    const calls = trajectories.reduce((n, t) => n + t.call_kinds.length - 1, 0);
    const plan = await computePlan({ config: config(), streams: [{ method: "test_sc_textvote", seed: SCENARIO_SEED, outDir: whole }], limit: SCENARIO_LIMIT, dataset: fx.dataset, initialCache: fx.cache, score: (e, sql) => fx.oracle.score(e, sql), lookup: null, identity: null });
    expect(calls).toBeLessThanOrEqual(plan.methods[0].computedAtMost);
    // stopped in B's episode (A's 3 steps of 6 calls, then B's), resumed: the same bytes
    const stopped = join(fx.root, "textvote-stopped");
    await expect(runScenarioWith(fx, "test_sc_textvote", stopped, new SamplingDouble(fx, { others: true, stopAt: 18 + 9 }))).rejects.toThrow(/scripted stop/);
    await runScenarioWith(fx, "test_sc_textvote", stopped, new SamplingDouble(fx, { others: true }), { resume: true });
    for (const file of ["trajectories.jsonl", "prompts.jsonl", "metrics.json"]) {
      expect(readFileSync(join(stopped, file), "utf8"), file).toBe(readFileSync(join(whole, file), "utf8"));
    }
  }, budget(120_000));
});

describe("self_consistency through merit run", () => {
  it("the run gives the propose hook the oracle's read-only executor: B's first step scores the majority sample; the audit is clean", async () => {
    const dir = join(fx.root, "sc-run");
    await runScenarioWith(fx, "self_consistency", dir, new SamplingDouble(fx, { others: true }));
    const { trajectories } = readRun(dir);
    const b = trajectories.find((t) => t.query_id === B)!;
    expect(b.attempts[1]).toBe(SAMPLED[1]);
    expect(b.call_kinds.slice(0, 2 + SAMPLES)).toEqual(["initial_cache", "repair", ...Array(SAMPLES).fill("sample")]);
    expect(auditRun(dir, fx.dataset).violations).toEqual([]);
  }, budget(120_000));
});
