// Tests examples/lesson-memory.ts from outside lib/ (issue 29 §6) on real Spider data, the scripted
// five-query scenario (test/helpers/scripted-scenario.ts: 426 correct, A fails and is repaired at
// step 3, B is never repaired, C is repaired at step 1, 278 correct). A scripted chat double answers
// the `distill` calls (a tiny random model cannot write a lesson) and delegates repairs to the
// scenario's script. It shows the write path (what a success and a failure store, stamped with their
// source), the read path (what reaches the prompt, only from earlier positions), the accounting, a
// crash and resume to the same bytes, the causal audit, and `merit grid --plan`'s count of `distill`.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCsv } from "../lib/analysis/csv.ts";
import { reportCommand } from "../lib/cli/report.ts";
import { auditRun } from "../lib/experiment/audit.ts";
import { parseConfig } from "../lib/experiment/config.ts";
import { computePlan } from "../lib/experiment/grid-plan.ts";
import type { ChatBackend, GenerateRequest, GenerateResult } from "../lib/llm/types.ts";
import { getMethod, loadPlugins, methodTable } from "../lib/methods/index.ts";
import { readRun, SPIDER_DIR } from "../test/helpers/run-fixture.ts";
import { ScriptedBackend } from "../test/helpers/scripted-backend.ts";
import { A, B, C, closeScenario, openScenario, scenarioScript, SCENARIO_IDS, SCENARIO_LIMIT, SCENARIO_SEED, runScenarioWith, type ScenarioFixture } from "../test/helpers/scripted-scenario.ts";
import { distillPrompt, parseLessons } from "./lesson-memory.ts";
import { budget } from "../test/helpers/budget.ts";

const PLUGIN = "examples/lesson-memory.ts";

/** Answers `distill` prompts with scripted lessons (two from a success, one from a failure); everything else goes to `repairs`. */
class LessonDouble implements ChatBackend {
  readonly identity = { kind: "test-scripted", model: "lesson-double", modelHash: "none", params: {} };
  readonly prompts: string[] = [];
  #failAt: number;
  readonly repairs: ChatBackend;
  constructor(
    repairs: ChatBackend,
    failAt = Infinity,
  ) {
    this.repairs = repairs;
    this.#failAt = failAt;
  }
  async generate(request: GenerateRequest): Promise<GenerateResult> {
    if (this.prompts.length + 1 >= this.#failAt) throw new Error("scripted crash");
    this.prompts.push(request.prompt);
    if (!request.prompt.startsWith("LESSON-DISTILL v1")) return this.repairs.generate(request);
    const question = /\nQUESTION:\n(.*)\n/.exec(request.prompt)![1];
    const text = request.prompt.includes("ended in SUCCESS")
      ? `<lesson><title>Check names</title><content>Copy names from the schema for: ${question}</content></lesson>\n<lesson><title>Join keys</title><content>Join on declared keys.</content></lesson>`
      : `<lesson><title>Avoid guessing</title><content>An unfinished query failed for: ${question}</content></lesson>`;
    return { text, promptTokens: request.prompt.split(/\s+/).length, outputTokens: text.split(/\s+/).length, truncatedPromptTokens: 0, cached: false };
  }
  async close(): Promise<void> {}
}

/** Repairs that never succeed: the plan's "if no repair succeeds" count is then exact. */
const junk: ChatBackend = {
  identity: { kind: "test-scripted", model: "junk", modelHash: "none", params: {} },
  async generate(request) {
    return { text: "<answer>SELECT 1</answer>", promptTokens: request.prompt.split(/\s+/).length, outputTokens: 3, truncatedPromptTokens: 0, cached: false };
  },
  async close() {},
};

let fx: ScenarioFixture;
beforeAll(async () => {
  await loadPlugins([PLUGIN]);
  fx = await openScenario("lesson-memory");
}, budget(120_000));
afterAll(() => closeScenario(fx));

const config = (extra: Record<string, unknown> = {}) => parseConfig({ dataset: "spider", data_dir: SPIDER_DIR, initial_cache: fx.cachePath, ...extra });

async function run(outDir: string, backend: ChatBackend, opts: { resume?: boolean; k?: number } = {}) {
  return runScenarioWith(fx, "lesson_memory", outDir, backend, { config: opts.k === undefined ? {} : { max_repair_steps: opts.k }, resume: opts.resume });
}

describe("lesson_memory, one file outside lib/", () => {
  it("is listed with its hooks: the memory, the distill call it declares", () => {
    const row = methodTable().find((l) => l.startsWith("| `lesson_memory` |"))!;
    expect(row).toContain("memory:distilled_lessons(embedded)");
    expect(row).toContain("calls(distill<=1)");
    expect(getMethod("lesson_memory").record.hooks).toEqual({ calls: { distill: { most: 1 } }, memory: { embeds_notes: true, heading: "LESSONS FROM EARLIER EPISODES", name: "distilled_lessons" } });
  });

  it("parses at most three well-formed lessons", () => {
    const one = "<lesson><title>T</title><content>C</content></lesson>";
    expect(parseLessons(`${one}${one}junk<lesson><title></title><content>x</content></lesson>${one}${one}`)).toHaveLength(3);
    expect(parseLessons("no lessons here")).toEqual([]);
  });

  it("writes lessons from successes and failures after each episode, and shows earlier ones before each repair", async () => {
    const dir = join(fx.root, "scenario");
    const double = new LessonDouble(new ScriptedBackend(scenarioScript(fx.dataset)));
    await run(dir, double);
    const { trajectories, retrievals, prompts } = readRun(dir);
    expect(trajectories.map((t) => t.query_id)).toEqual(SCENARIO_IDS);
    // Write path: one distill call per episode, after its repairs; a success stores two positive
    // lessons, a failure one negative lesson, each stamped with its own episode.
    for (const t of trajectories) {
      expect(t.call_kinds.filter((k) => k === "distill")).toHaveLength(1);
      expect(t.call_kinds[t.call_kinds.length - 1]).toBe("distill");
      const success = t.final_correct;
      expect(t.memory_writes!.map((n) => n.polarity)).toEqual(success ? ["positive", "positive"] : ["negative"]);
      for (const n of t.memory_writes!) {
        expect([n.source_query_id, n.source_stream_position, n.kind]).toEqual([t.query_id, t.stream_position, "lesson"]);
      }
    }
    const byId = new Map(trajectories.map((t) => [t.query_id, t]));
    expect(byId.get(B)!.memory_writes![0].text).toMatch(/^Avoid guessing: An unfinished query failed for: /);
    expect(byId.get(C)!.memory_writes![0].data).toMatchObject({ from: "success", title: "Check names" });
    // Read path: every repair of A (position 1) sees the two lessons of position 0 only; C (position 3)
    // picks 2 of the 5 lessons of positions 0-2, never its own.
    const repairPrompts = prompts.filter((p) => p.kind === "repair");
    const aPrompt = repairPrompts.find((p) => p.query_id === A)!.prompt;
    expect(aPrompt).toContain("LESSONS FROM EARLIER EPISODES:\n[lesson 1]\nNote ID: ");
    const ids0 = new Set(byId.get("426")!.memory_writes!.map((n) => n.note_id));
    for (const r of retrievals) {
      const pos = byId.get(r.query_id)!.stream_position;
      expect(r.source_stream_positions.every((s) => s < pos)).toBe(true);
      expect(r.retrieved_entry_ids.length).toBe(2);
      if (r.query_id === A) expect(new Set(r.retrieved_entry_ids)).toEqual(ids0);
    }
    expect(retrievals.map((r) => r.query_id)).toEqual([A, A, A, B, B, B, B, B, B, B, C]);
    // Accounting: distill tokens are in the episode's totals; embeddings = each stored lesson + the question at each repair.
    for (const t of trajectories) {
      const steps = t.retrieved_entry_ids.length;
      expect(t.accounting.embedding_calls).toBe(t.memory_writes!.length + steps);
      expect(t.accounting.llm_calls).toBe(t.call_kinds.length);
    }
    // The prompt of a distill call shows the episode's attempts and outcome, never the gold.
    const distill = prompts.filter((p) => p.kind === "distill");
    expect(distill).toHaveLength(5);
    expect(distill.find((p) => p.query_id === B)!.prompt).toContain("ended in FAILURE");
    expect(auditRun(dir, fx.dataset).violations).toEqual([]);
  }, budget(120_000));

  it("merit report --diagnostics counts the lessons in memory and the repairs after each retrieved polarity", async () => {
    const dir = join(fx.root, "scenario"); // written by the test above
    const out = join(fx.root, "diagnostics");
    expect(await reportCommand.run([dir, "--out", out, "--resamples", "20", "--diagnostics"], { out: () => {}, err: () => {} })).toBe(0);
    // Notes count from the episode after the one that wrote them: 426 (position 0), A (1), C (3) and 278 (4)
    // write two positive lessons each, B (2) one negative; 5 episodes.
    expect(readFileSync(join(out, "figures", "memory-size.csv"), "utf8").trim().split("\n").slice(1)).toEqual(
      ["positive,0,0", "positive,1,2", "positive,2,4", "positive,4,6", "positive,5,8", "negative,0,0", "negative,3,1", "negative,5,1"].map((p) => `Spider,lesson_memory,${p}.0000`),
    );
    // Every step retrieves two lessons; before C only positive ones exist, and C's two of five include at
    // most the one negative: all 11 steps retrieved a positive lesson (no base steps); 2 steps correct
    // (A's 3rd, C's 1st), 4 in episodes that succeed (A's 3, C's 1).
    const c = readRun(dir).retrievals.find((r) => r.query_id === C)!;
    const negatives = c.retrieved_polarities.filter((p) => p === "negative").length;
    const rows = parseCsv(readFileSync(join(out, "tables", "memory-utility.csv"), "utf8")).slice(1).map((r) => r.slice(2, 11).join(" "));
    expect(rows).toEqual([`positive lesson ${22 - negatives} 11 18.2 36.4 0 — —`, ...(negatives === 1 ? ["negative lesson 1 1 100.0 100.0 10 10.0 30.0"] : [])]);
  }, budget(120_000));

  it("a run killed mid-stream resumes to the same bytes", async () => {
    const whole = join(fx.root, "whole");
    const killed = join(fx.root, "killed");
    await run(whole, new LessonDouble(new ScriptedBackend(scenarioScript(fx.dataset))));
    await expect(run(killed, new LessonDouble(new ScriptedBackend(scenarioScript(fx.dataset)), 9))).rejects.toThrow(/scripted crash/);
    expect(readRun(killed).trajectories.length).toBeLessThan(SCENARIO_LIMIT);
    await run(killed, new LessonDouble(new ScriptedBackend(scenarioScript(fx.dataset))), { resume: true });
    for (const file of ["trajectories.jsonl", "prompts.jsonl", "retrieval_log.jsonl", "metrics.json"]) {
      expect(readFileSync(join(killed, file), "utf8"), file).toBe(readFileSync(join(whole, file), "utf8"));
    }
  }, budget(120_000));

  it("merit grid --plan counts the distill calls: plan = computed when no repair succeeds", async () => {
    const k = 2;
    const dir = join(fx.root, "plan-run");
    const double = new LessonDouble(junk);
    const streams = [{ method: "lesson_memory", seed: SCENARIO_SEED, outDir: dir }];
    const plan = await computePlan({ config: config({ max_repair_steps: k }), streams, limit: SCENARIO_LIMIT, dataset: fx.dataset, initialCache: fx.cache, score: (e, sql) => fx.oracle.score(e, sql), lookup: null, identity: null });
    await run(dir, double, { k });
    // 5 distill calls (one per episode) + K repairs for each of the 3 initially failed queries.
    expect(double.prompts.length).toBe(5 + 3 * k);
    expect(plan.computed).toBe(double.prompts.length);
    expect(plan.computedAtMost).toBe(double.prompts.length);
  }, budget(120_000));

  it("the distill prompt is built from the episode without its gold", () => {
    const example = fx.dataset.examples.find((e) => e.id === A)!;
    const prompt = distillPrompt({ dataset: "spider", queryId: A, dbId: example.dbId, question: example.question, evidence: "", schema: "", streamPosition: 1, attempts: [{ sql: "SELECT 1", status: "DENOTATION_MISMATCH", dbError: null, executed: true, errorType: "Result Mismatch", rowsPreview: "[1]" }], success: false, reflections: [], retrieved: [] });
    expect(prompt).not.toContain(example.goldSql);
    expect(prompt).toContain("[Attempt 1] SELECT 1\nOutcome: DENOTATION_MISMATCH; type: Result Mismatch");
  });
});
