// Tests lib/methods/feedback.ts (issue 29 §3) on the scripted five-query scenario (real Spider data;
// test/helpers/scripted-scenario.ts): llm_judge's verdict drives termination and memory polarity
// while the oracle's is kept for the record, noisy_oracle flips the oracle's verdict by a seeded draw,
// the config names regimes (`oracle` = denotation_confirmed) and refuses unknown ones, and
// `merit grid --plan` bounds the judge calls.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditRun } from "../../lib/experiment/audit.ts";
import { parseConfig } from "../../lib/experiment/config.ts";
import { computePlan } from "../../lib/experiment/grid-plan.ts";
import type { ChatBackend, GenerateRequest, GenerateResult } from "../../lib/llm/types.ts";
import { getFeedback, judgePrompt, noiseDraw, parseJudgeVerdict, rowsPreview } from "../../lib/methods/feedback.ts";
import { readRun, SPIDER_DIR } from "../helpers/run-fixture.ts";
import { ScriptedBackend } from "../helpers/scripted-backend.ts";
import { A, B, C, closeScenario, openScenario, runScenarioWith, SCENARIO_IDS, SCENARIO_LIMIT, SCENARIO_SEED, type ScenarioFixture, scenarioScript } from "../helpers/scripted-scenario.ts";
import { budget } from "../helpers/budget.ts";

/** Judges by a rule on the QUERY section (a tiny random model cannot judge); repairs go to the scenario's script. */
class JudgeDouble implements ChatBackend {
  readonly identity = { kind: "test-scripted", model: "judge-double", modelHash: "none", params: {} };
  readonly judged: string[] = [];
  readonly repairs: ChatBackend;
  readonly accepts: (sql: string) => boolean;
  constructor(
    repairs: ChatBackend,
    accepts: (sql: string) => boolean,
  ) {
    this.repairs = repairs;
    this.accepts = accepts;
  }
  async generate(request: GenerateRequest): Promise<GenerateResult> {
    if (!request.prompt.startsWith("PROMPT_VERSION: merit-judge-v1")) return this.repairs.generate(request);
    const sql = /\nQUERY:\n(.*)\n/.exec(request.prompt)![1];
    this.judged.push(sql);
    const text = `<verdict>${this.accepts(sql) ? "correct" : "incorrect"}</verdict>`;
    return { text, promptTokens: request.prompt.split(/\s+/).length, outputTokens: 3, truncatedPromptTokens: 0, cached: false };
  }
  async close(): Promise<void> {}
}

/** The scenario's script plus answers for the initially correct queries (a judge or a flipped verdict may reject them): their gold SQL. */
function fullScript(): Map<string, string[]> {
  const script = scenarioScript(fx.dataset);
  for (const id of ["426", "278"]) {
    const e = fx.dataset.examples.find((x) => x.id === id)!;
    script.set(e.question, [e.goldSql]);
  }
  return script;
}

let fx: ScenarioFixture;
beforeAll(async () => {
  fx = await openScenario("feedback");
}, budget(120_000));
afterAll(() => closeScenario(fx));

async function run(method: string, outDir: string, backend: ChatBackend, extra: Record<string, unknown>) {
  await runScenarioWith(fx, method, outDir, backend, { config: extra });
  return readRun(outDir);
}

describe("llm_judge", () => {
  it("the judge's verdict ends the episode and sets memory polarity; the oracle's is recorded beside it", async () => {
    const script = fullScript();
    // The judge accepts A's first repair (wrong: no such table, so it does not execute — rejected
    // without a call), B's second repair (executes, wrong), and every initially correct query.
    const bFirst = script.get(fx.dataset.examples.find((e) => e.id === B)!.question)!;
    const judge = new JudgeDouble(new ScriptedBackend(script), (sql) => sql === bFirst[1] || sql === fx.dataset.examples.find((e) => e.id === "426")!.goldSql);
    const { trajectories, positives, negatives, prompts } = await run("merit", join(fx.root, "judge"), judge, { feedback_regime: "llm_judge" });
    const by = new Map(trajectories.map((t) => [t.query_id, t]));
    for (const t of trajectories) expect(t.feedback_regime).toBe("llm_judge");
    // 426: its initial SQL is judged correct: no repair. 278: judged incorrect although the oracle
    // says correct: the agent repairs it.
    expect(by.get("426")!.repair_steps).toBe(0);
    expect(by.get("426")!.feedback).toEqual({ accepted: [true], oracle_correct: [true] });
    expect(by.get("278")!.repair_steps).toBeGreaterThan(0);
    expect(by.get("278")!.feedback!.accepted[0]).toBe(false);
    expect(by.get("278")!.initial_correct).toBe(true);
    // B stops at the judged-correct second repair, which the oracle scores wrong: told correct, not correct.
    const b = by.get(B)!;
    expect(b.repair_steps).toBe(2);
    expect(b.statuses[2]).toBe("CORRECT");
    expect(b.feedback).toEqual({ accepted: [false, false, true], oracle_correct: [false, false, false] });
    expect(b.final_correct).toBe(false);
    // A's first attempts do not execute: rejected without a judge call; a judge call per executed attempt.
    for (const t of trajectories) {
      const executed = t.statuses.filter((s) => s !== "EXECUTION_ERROR" && s !== "TIMEOUT").length;
      expect(t.call_kinds.filter((k) => k === "judge").length).toBe(executed);
    }
    // Memory follows the judge: B's episode ended "successful", so it stored a positive.
    expect(positives.some((e) => e.source_query_id === B)).toBe(true);
    expect(negatives.some((e) => e.source_query_id === B)).toBe(false);
    // The judge prompt shows the SQL and result rows, never the gold; the audit is clean.
    const judgePrompts = prompts.filter((p) => p.kind === "judge");
    expect(judgePrompts.length).toBe(judge.judged.length);
    expect(auditRun(join(fx.root, "judge"), fx.dataset).violations).toEqual([]);
    expect(trajectories.map((t) => t.query_id)).toEqual(SCENARIO_IDS);
  }, budget(120_000));

  it("parses verdicts and previews rows within bounds", () => {
    expect(parseJudgeVerdict("<verdict> Correct </verdict>")).toBe(true);
    expect(parseJudgeVerdict("The query is incorrect.")).toBe(false);
    expect(parseJudgeVerdict("no idea")).toBe(false);
    const rows = Array.from({ length: 8 }, (_, i) => [BigInt(i), "x".repeat(300), null]);
    const preview = rowsPreview(rows);
    expect(preview.split("\n")).toHaveLength(6);
    expect(preview.split("\n")[0].length).toBe(200);
    expect(preview.endsWith("(3 more rows)")).toBe(true);
    expect(rowsPreview([])).toBe("(no rows)");
    const example = fx.dataset.examples.find((e) => e.id === A)!;
    const prompt = judgePrompt({ dataset: "spider", queryId: A, dbId: example.dbId, question: example.question, evidence: "", schema: "CREATE TABLE t(x)", streamPosition: 1, attempt: 1, streamSeed: 0, sql: "SELECT 1", executed: true, dbError: null, rowsPreview: "[1]", oracleCorrect: null, noise: 0.1 });
    expect(prompt).not.toContain(example.goldSql);
    expect(getFeedback("llm_judge").usesOracle).toBe(false);
  });
});

describe("noisy_oracle", () => {
  it("with noise 0 it is the oracle's episode; with noise 1 every verdict is flipped", async () => {
    const oracleRun = await run("iterative", join(fx.root, "oracle"), new ScriptedBackend(fullScript()), { feedback_regime: "oracle" });
    const clean = await run("iterative", join(fx.root, "noise0"), new ScriptedBackend(fullScript()), { feedback_regime: "noisy_oracle", feedback_noise: 0 });
    expect(clean.trajectories.map((t) => [t.attempts, t.statuses, t.final_correct])).toEqual(oracleRun.trajectories.map((t) => [t.attempts, t.statuses, t.final_correct]));
    for (const t of oracleRun.trajectories) expect([t.feedback_regime, t.feedback]).toEqual(["denotation_confirmed", undefined]);
    const flipped = await run("iterative", join(fx.root, "noise1"), new ScriptedBackend(fullScript()), { feedback_regime: "noisy_oracle", feedback_noise: 1 });
    // B's first repair executes a wrong answer and is "accepted" by the flipped oracle: one repair, final still wrong.
    const b = flipped.trajectories.find((t) => t.query_id === B)!;
    expect([b.repair_steps, b.final_correct, b.feedback]).toEqual([1, false, { accepted: [false, true], oracle_correct: [false, false] }]);
    // C's initial SQL does not execute: the noise never accepts it (issue 39 item 6), whatever the draw.
    const c = flipped.trajectories.find((t) => t.query_id === C)!;
    expect([c.statuses[0], c.feedback!.accepted[0]]).toEqual(["EXECUTION_ERROR", false]);
    expect(c.repair_steps).toBeGreaterThan(0);
  }, budget(120_000));

  it("flips only the denotation verdict of SQL that executed: SQL that did not run is rejected at any noise (issue 39 item 6)", () => {
    const regime = getFeedback("noisy_oracle");
    const input = { dataset: "spider", queryId: "q", dbId: "d", question: "?", evidence: "", schema: "", streamPosition: 0, attempt: 0, streamSeed: 0, sql: "SELEC 1", dbError: "syntax error", rowsPreview: "", noise: 1 };
    const model = { generate: async () => "", reply: async () => ({ text: "", truncated: false }), embed: async () => [] };
    expect(regime.accept({ ...input, executed: false, oracleCorrect: false }, model)).toBe(false);
    expect(regime.accept({ ...input, executed: true, dbError: null, rowsPreview: "[1]", oracleCorrect: false }, model)).toBe(true);
    expect(regime.accept({ ...input, executed: true, dbError: null, rowsPreview: "[1]", oracleCorrect: true }, model)).toBe(false);
    expect(regime.accept({ ...input, executed: true, dbError: null, rowsPreview: "[1]", oracleCorrect: true, noise: 0 }, model)).toBe(true);
  });

  it("draws are seeded per (seed, query, attempt) and uniform enough", () => {
    expect(noiseDraw(0, "17", 2)).toBe(noiseDraw(0, "17", 2));
    expect(noiseDraw(0, "17", 2)).not.toBe(noiseDraw(1, "17", 2));
    const draws = Array.from({ length: 2000 }, (_, i) => noiseDraw(0, String(i), 0));
    const below = draws.filter((d) => d < 0.1).length;
    expect(below).toBeGreaterThan(140);
    expect(below).toBeLessThan(260);
  });
});

describe("the config and the plan", () => {
  it("`oracle` is denotation_confirmed (same hash); an unknown regime is refused when the run starts", async () => {
    const base = { dataset: "spider", data_dir: SPIDER_DIR, initial_cache: fx.cachePath };
    expect(parseConfig({ ...base, feedback_regime: "oracle" })).toEqual(parseConfig(base));
    expect(() => parseConfig({ ...base, feedback_regime: "Judge!" })).toThrow(/feedback regime name/);
    await expect(run("iterative", join(fx.root, "unknown"), new ScriptedBackend(fullScript()), { feedback_regime: "llm_jugde" })).rejects.toThrow(/unknown feedback regime "llm_jugde"\. Did you mean "llm_judge"\?/);
  }, budget(120_000));

  it("merit grid --plan bounds the judge calls: every episode in full, K repairs and K + 1 judge calls", async () => {
    const k = 2;
    const config = parseConfig({ dataset: "spider", data_dir: SPIDER_DIR, initial_cache: fx.cachePath, feedback_regime: "llm_judge", max_repair_steps: k });
    const dir = join(fx.root, "plan");
    const plan = await computePlan({ config, streams: [{ method: "iterative", seed: SCENARIO_SEED, outDir: dir }], limit: SCENARIO_LIMIT, dataset: fx.dataset, initialCache: fx.cache, score: (e, sql) => fx.oracle.score(e, sql), lookup: null, identity: null });
    expect(plan.computedAtMost).toBe(SCENARIO_LIMIT * (k + (k + 1)));
    // A judge that rejects everything, repairs that always execute: every bound is reached but the
    // judge calls of initial SQL that does not execute (A, B, C).
    const calls: string[] = [];
    const judge = new JudgeDouble({ identity: { kind: "t", model: "m", modelHash: "h", params: {} }, async generate(r) { calls.push(r.prompt); return { text: "<answer>SELECT 1</answer>", promptTokens: 1, outputTokens: 1, truncatedPromptTokens: 0, cached: false }; }, async close() {} }, () => false);
    await run("iterative", dir, judge, { feedback_regime: "llm_judge", max_repair_steps: k });
    expect(calls.length + judge.judged.length).toBe(plan.computedAtMost - 3);
    rmSync(dir, { recursive: true, force: true });
  }, budget(120_000));
});
