// The simulated engine (lib/llm/engines/simulated*.ts; docs/METHOD.md "Simulated engine"): deterministic
// from (seed, prompt); its correct SQL scores correct under the oracle and is never the gold's text, its
// wrong SQL produces the drawn failure type; each peer's call is recognised and answered in the tags the
// peer parses; its parameters file is checked strictly and hashed into its identity; the report's model
// identity carries the SIMULATED ENGINE banner and refuses runs that mix it with a model.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Dataset } from "../../lib/data/index.ts";
import { assertNotMixed, modelIdentity } from "../../lib/analysis/model-identity.ts";
import { classifyFailure } from "../../lib/classify.ts";
import { main } from "../../lib/cli.ts";
import { applyOverrides } from "../../lib/cli/run.ts";
import { parseConfig } from "../../lib/experiment/config.ts";
import { simulatedBackendOf } from "../../lib/experiment/services.ts";
import { callOf, draw, repairFeatures, SIMULATED_HEADLINE, SimulatedBackend, SimulatedEmbedder } from "../../lib/llm/engines/simulated.ts";
import { defaultSimulatedParams, loadSimulatedParams, parseSimulatedParams, type LoadedSimulatedParams } from "../../lib/llm/engines/simulated-params.ts";
import { correctVariants, normalizeSqlText, wrongSql } from "../../lib/llm/engines/simulated-sql.ts";
import type { EpisodeView } from "../../lib/methods/hooks.ts";
import { judgePrompt as attemptJudgePrompt, parseJudgeVerdict } from "../../lib/methods/feedback.ts";
import { inducePrompt } from "../../lib/methods/peers/awm.ts";
import { curatePrompt, parseSheet } from "../../lib/methods/peers/dynamic-cheatsheet.ts";
import { synthesizePrompt } from "../../lib/methods/peers/dynamic-cheatsheet-rs.ts";
import { tagged } from "../../lib/methods/peers/episode-text.ts";
import { critiquePrompt, parseOperations } from "../../lib/methods/peers/expel-online.ts";
import { judgePrompt, parseItems, parseVerdict, rbDistillPrompt } from "../../lib/methods/peers/reasoning-bank.ts";
import type { Oracle } from "../../lib/oracle/oracle.ts";
import { repairPrompt, initialPrompt, reflectionPrompt } from "../../lib/prompts.ts";
import { loadSpider, spiderOracle } from "../helpers/run-fixture.ts";

let dataset: Dataset;
let oracle: Oracle;
beforeAll(async () => {
  dataset = await loadSpider();
  oracle = spiderOracle(dataset);
});
afterAll(async () => {
  await oracle.close();
});

const loaded = (over: Record<string, unknown> = {}): LoadedSimulatedParams => ({ file: "test.json", sha256: "f".repeat(64), params: parseSimulatedParams(over) });
const engine = (over: Record<string, unknown> = {}) => new SimulatedBackend(loaded(over), { examples: dataset.examples, schemas: dataset.schemas });

describe("simulated SQL", () => {
  it("a correct rewrite of each of the first 60 Spider golds scores correct and is not the gold's text; each wrong type is classified as that type", async () => {
    const slipsCorrect: string[] = [];
    for (const example of dataset.examples.slice(0, 60)) {
      const gold = normalizeSqlText(example.goldSql);
      for (const sql of correctVariants(example.goldSql)) {
        expect(normalizeSqlText(sql).includes(gold), `${example.id}: ${sql}`).toBe(false);
        expect((await oracle.score(example, sql)).status, `${example.id}: ${sql}`).toBe("CORRECT");
      }
      for (const type of ["Schema Linking", "Syntax", "Aggregation"] as const) {
        const sql = wrongSql(example.goldSql, type, 0.3);
        const v = await oracle.score(example, sql);
        expect(classifyFailure({ status: v.status, dbError: v.dbError, predictedExecOk: v.predictedExecOk })?.errorType, `${example.id} ${type}: ${sql} -> ${v.dbError}`).toBe(type);
      }
      if ((await oracle.score(example, wrongSql(example.goldSql, "Result Mismatch", 0.3))).status === "CORRECT") slipsCorrect.push(example.id);
    }
    // a Result Mismatch slip is plausible SQL, not a guaranteed wrong answer: 3 of these 60 still score
    // correct (30: a flipped comparison in one INTERSECT branch; 43, 44: a slip inside a scalar subquery)
    expect(slipsCorrect, slipsCorrect.join(",")).toEqual(["30", "43", "44"]);
  }, 120_000);
});

describe("the response model", () => {
  const example = () => dataset.examples[17];
  const question = () => ({ dataset: "spider" as const, dbId: example().dbId, question: example().question, evidence: "", schema: dataset.schemas.get(example().dbId)! });
  const attempts = [{ sql: "SELECT nme FROM singer", status: "EXECUTION_ERROR", dbError: "no such column: nme" }];
  const repair = (extra: Partial<Parameters<typeof repairPrompt>[0]> = {}) => repairPrompt({ ...question(), positives: [], negatives: [], reflections: [], attempts, currentErrorType: "Schema Linking", ...extra });
  const positive = (type: string) => ({ entry_id: `e-${type}`, error_type: type, failure_context: "ctx", successful_direction: "dir", attempted_sql_delta: "delta", observed_outcome: "CORRECT", observed_db_error: null });

  it("is a function of (seed, prompt): the same prompt, the same answer; another seed, other draws", async () => {
    const e = engine();
    const a = await e.generate({ prompt: repair(), maxOutputTokens: 512 });
    const b = await engine().generate({ prompt: repair(), maxOutputTokens: 512 });
    expect(a).toEqual(b);
    expect(draw(0, "x", "p")).not.toBe(draw(1, "x", "p"));
    expect(callOf(repair())).toBe("repair");
    expect(callOf(initialPrompt(question()))).toBe("initial");
    expect(callOf(reflectionPrompt({ ...question(), attempts, currentErrorType: "Syntax" }))).toBe("reflection");
  });

  it("reads the precedents, reflections and lessons a repair prompt holds, and plants their effects on the log-odds", () => {
    const e = engine({ repair: { difficulty_sd: 0, effects: { relevant_precedent: 2, misleading_precedent: -1, negative_precedent: 0, reflection: 0, lesson: 0 } } });
    const plain = e.respond(repair());
    const relevant = e.respond(repair({ positives: [positive("Schema Linking")] }));
    const misleading = e.respond(repair({ positives: [positive("Syntax")] }));
    expect(relevant.features).toMatchObject({ relevantPrecedents: 1, misleadingPrecedents: 0 });
    expect(misleading.features).toMatchObject({ relevantPrecedents: 0, misleadingPrecedents: 1 });
    const logit = (p: number) => Math.log(p / (1 - p));
    expect(logit(relevant.probability!) - logit(plain.probability!)).toBeCloseTo(2, 9);
    expect(logit(misleading.probability!) - logit(plain.probability!)).toBeCloseTo(-1, 9);
    expect(plain.probability).toBeCloseTo(0.4, 9); // base["Schema Linking"], no difficulty
    // a peer's notes: an accepted experience on the same database is a relevant precedent, a cheatsheet a lesson
    const notes = `EXPERIENCES FROM EARLIER EPISODES:\n[experience 1]\nNote ID: n1\nQuestion: q\nDatabase: ${example().dbId}\nFinal SQL: SELECT 1\nFeedback: accepted (CORRECT)\n[cheatsheet 2]\nNote ID: n2\n- check names`;
    expect(repairFeatures(repair({ memoryNotes: notes, reflections: ["r"] }), example().dbId)).toEqual({ errorType: "Schema Linking", relevantPrecedents: 1, misleadingPrecedents: 0, negativePrecedents: 0, reflections: 1, lessons: 1 });
  });

  it("answers correctly about as often as it draws: 400 repair prompts at p = 0.4", () => {
    const e = engine({ repair: { difficulty_sd: 0 } });
    let correct = 0;
    for (let i = 0; i < 400; i++) correct += e.respond(repair({ reflections: [] , attempts: [{ ...attempts[0], sql: `SELECT nme${i} FROM singer` }] })).correct ? 1 : 0;
    expect(correct / 400).toBeGreaterThan(0.33);
    expect(correct / 400).toBeLessThan(0.47);
  });

  it("answers every peer's call in the tags its parser reads: well formed, truncated at the output limit, or malformed", async () => {
    const ex = example();
    const episode: EpisodeView = {
      ...question(),
      queryId: ex.id,
      streamPosition: 3,
      attempts: [
        { sql: "SELECT nme FROM singer", status: "EXECUTION_ERROR", dbError: "no such column: nme", executed: false, errorType: "Schema Linking", rowsPreview: "" },
        { sql: correctVariants(ex.goldSql)[0], status: "CORRECT", dbError: null, executed: true, errorType: null, rowsPreview: "[1]" },
      ],
      success: true,
      reflections: [],
      retrieved: [],
    };
    const all = engine({ hooks: { well_formed: 1, truncated: 0 } });
    const judged = all.respond(judgePrompt(episode));
    expect(judged.correct).toBe(true);
    expect(typeof parseVerdict(judged.text)).toBe("boolean");
    expect(parseJudgeVerdict(all.respond(attemptJudgePrompt({ ...question(), sql: correctVariants(ex.goldSql)[0], rowsPreview: "(no rows)" } as never)).text)).toBeTypeOf("boolean");
    expect(parseItems(all.respond(rbDistillPrompt(episode, true)).text).length).toBeGreaterThan(0);
    expect(parseSheet(all.respond(curatePrompt(episode, null)).text)).toContain("schema");
    expect(tagged(all.respond(synthesizePrompt(question(), [])).text, "cheatsheet")).not.toBeNull();
    expect(tagged(all.respond(inducePrompt([{ question: ex.question, db_id: ex.dbId, sql: "SELECT count(*) FROM singer" }])).text, "workflows")).toContain("Workflow");
    expect(parseOperations(all.respond(critiquePrompt(episode, [])).text)[0]).toMatchObject({ op: "ADD" });
    const truncated = engine({ hooks: { well_formed: 0, truncated: 1 } });
    const cut = await truncated.generate({ prompt: rbDistillPrompt(episode, true), maxOutputTokens: 300 });
    expect(cut.outputTokens).toBe(300);
    expect(parseItems(cut.text).length).toBeLessThan(parseItems(all.respond(rbDistillPrompt(episode, true)).text).length);
    const malformed = engine({ hooks: { well_formed: 0, truncated: 0 } });
    expect(parseSheet(malformed.respond(curatePrompt(episode, null)).text)).toBeNull();
    expect(parseOperations(malformed.respond(critiquePrompt(episode, [])).text)).toEqual([]);
  });

  it("the judge is right with its sensitivity and specificity", () => {
    const perfect = engine({ judge: { sensitivity: 1, specificity: 1 } });
    const ex = example();
    const right = attemptJudgePrompt({ ...question(), sql: correctVariants(ex.goldSql)[0], rowsPreview: "[1]" } as never);
    const wrong = attemptJudgePrompt({ ...question(), sql: "SELECT 2", rowsPreview: "[2]" } as never);
    expect(parseJudgeVerdict(perfect.respond(right).text)).toBe(true);
    expect(parseJudgeVerdict(perfect.respond(wrong).text)).toBe(false);
    const inverted = engine({ judge: { sensitivity: 0, specificity: 0 } });
    expect(parseJudgeVerdict(inverted.respond(right).text)).toBe(false);
    expect(parseJudgeVerdict(inverted.respond(wrong).text)).toBe(true);
  });

  it("counts a prompt over the config's max_input_tokens as cut, as a real engine does, or refuses it under truncate: error (issue 39 item 21)", async () => {
    // A 200,000-character hook prompt was recorded as 50,003 prompt tokens with 0 truncations, so
    // the run's stderr line and the cost table's count of cut prompts never showed on this engine.
    const request = { kind: "distill", prompt: "word ".repeat(40_000), maxOutputTokens: 64 } as never;
    const cut = await new SimulatedBackend(loaded(), { examples: dataset.examples, maxInputTokens: 4096 }).generate(request);
    expect([cut.promptTokens, cut.truncatedPromptTokens]).toEqual([4096, 50_000 - 4096]);
    const uncut = await new SimulatedBackend(loaded(), { examples: dataset.examples, maxInputTokens: 4096 }).generate({ kind: "distill", prompt: "word ".repeat(100), maxOutputTokens: 64 } as never);
    expect(uncut.truncatedPromptTokens).toBe(0);
    await expect(new SimulatedBackend(loaded(), { examples: dataset.examples, maxInputTokens: 4096, truncate: "error" }).generate(request)).rejects.toThrow(/prompt has 50000 tokens, more than max_input_tokens 4096/);
    // The run's engine takes both from the config.
    const config = parseConfig({ dataset: "spider", data_dir: "data/spider", initial_cache: "none.json", model: { backend: "simulated" }, embedder: { backend: "simulated" }, decoding: { max_input_tokens: 1000 } });
    expect((await simulatedBackendOf(config, dataset).generate(request)).truncatedPromptTokens).toBe(49_000);
  });

  it("its embedder is a deterministic L2-normalised hashed bag of words", async () => {
    const [a, b] = await new SimulatedEmbedder().embed(["how many singers", "how many singers"]);
    expect(a).toEqual(b);
    expect(Math.hypot(...a)).toBeCloseTo(1, 6);
  });
});

describe("the parameters file", () => {
  it("the kit's file parses; its sha256 is the engine's model hash; a bad field is one line naming the file and the fix", () => {
    const p = loadSimulatedParams("configs/simulated-engine.json");
    expect(p.params).toEqual({ ...defaultSimulatedParams(), $comment: p.params.$comment });
    expect(new SimulatedBackend(p, { examples: [] }).identity).toMatchObject({ kind: "simulated", modelHash: p.sha256 });
    const dir = mkdtempSync(join(tmpdir(), "merit-sim-"));
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ repair: { effects: { precedent: 1 } } }));
    expect(() => loadSimulatedParams(bad)).toThrow(new RegExp(`^${bad.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: invalid simulated-engine parameters — repair.effects: Unrecognized key.*fix the field`));
    writeFileSync(bad, JSON.stringify({ hooks: { well_formed: 0.9, truncated: 0.2 } }));
    expect(() => loadSimulatedParams(bad)).toThrow(/hooks: well_formed \+ truncated must be at most 1/);
  });

  it("the config selects it; absent keys leave the hashes of other configs as they were", () => {
    const c = parseConfig({ dataset: "spider", data_dir: "d", initial_cache: "i", model: { backend: "simulated" }, embedder: { backend: "simulated" } });
    expect(c.model.backend).toBe("simulated");
    expect("simulation" in parseConfig({ dataset: "spider", data_dir: "d", initial_cache: "i" }).model).toBe(false);
  });
});

describe("merit run|grid --engine", () => {
  it("--engine simulated switches the chat backend and the embedder; a bad name or --simulation without it is one usage line", async () => {
    const base = parseConfig({ dataset: "spider", data_dir: "d", initial_cache: "i" });
    const c = applyOverrides(base, { engine: "simulated", simulation: "w.json" }, 1);
    expect(c.model).toMatchObject({ backend: "simulated", simulation: "w.json" });
    expect(c.embedder.backend).toBe("simulated");
    const run = async (...flags: string[]) => {
      const err: string[] = [];
      const code = await main(["run", "--config", "configs/demo.json", "--method", "merit", "--seed", "0", ...flags], { out: () => {}, err: (l) => err.push(l) });
      return { code, err };
    };
    expect(await run("--engine", "vllm")).toEqual({ code: 2, err: [expect.stringMatching(/^merit run: --engine must be one of llama, openai, simulated, got "vllm"/)] });
    expect(await run("--simulation", "w.json")).toEqual({ code: 2, err: [expect.stringMatching(/^merit run: --simulation is the simulated engine's parameters file; add --engine simulated/)] });
  });
});

describe("reports of simulated runs", () => {
  const sim = { kind: "simulated", model: "simulated-engine (configs/simulated-engine.json)", modelHash: "a".repeat(64) };
  const real = { kind: "llama.cpp", model: "qwen.gguf", modelHash: "b".repeat(64) };
  it("carry the SIMULATED ENGINE banner", () => {
    const id = modelIdentity([sim, sim], [{ kind: "simulated-embedding", model: "hashed-bag-of-words-256", modelHash: "hashed-bag-v1-256" }], new Set());
    expect(id.headline).toBe(SIMULATED_HEADLINE);
    expect(id.banner).toMatch(/^SIMULATED ENGINE — effects are planted, not measured: /);
  });
  it("are never mixed with runs of a model", () => {
    expect(() => assertNotMixed([sim, real], ["runs/a", "runs/b"])).toThrow(/the runs mix the simulated engine \(1 run\(s\), e\.g\. runs\/a\) with a model \(1 run\(s\), e\.g\. runs\/b\)/);
    expect(() => assertNotMixed([sim, sim], ["a", "b"])).not.toThrow();
    expect(() => assertNotMixed([real, null], ["a", "b"])).not.toThrow();
  });
});
