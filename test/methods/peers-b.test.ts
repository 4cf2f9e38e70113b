// The built-in peer memory methods expel_online, exprag, exprecent and error_fix_memory (METHOD.md
// §13.5–13.7) on the scripted five-query Spider scenario (test/helpers/scripted-scenario.ts: 426
// correct, A fails and is repaired at step 3, B is never repaired, C is repaired at step 1, 278
// correct). Repairs come from the scenario's ScriptedBackend; a chat double answers expel_online's
// `critique` prompts with fixed operations. For each method: what a success and a failure store,
// what reaches the repair prompt (earlier stream positions only), the call kinds against the
// declaration, and a clean `merit audit`.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditRun } from "../../lib/experiment/audit.ts";
import type { ChatBackend, GenerateRequest, GenerateResult } from "../../lib/llm/types.ts";
import { getMethod, hookCallBound, methodDefinition, methodTable, type AttemptView, type EpisodeView, type HookModel } from "../../lib/methods/index.ts";
import { errorFixNotes, fixKey, FIXES_SHOWN, parseAdvice, SOLVED_SHOWN } from "../../lib/methods/peers/error-fix-memory.ts";
import { sqlSkeleton } from "../../lib/methods/peers/sql-skeleton.ts";
import { applyOperations, critiquePrompt, IMPORTANCE, MAX_INSIGHTS, MAX_OPERATIONS, parseOperations, REMOVE_WHEN_FULL, type Insight } from "../../lib/methods/peers/expel-online.ts";
import { EXPERIENCES_SHOWN, experienceNote } from "../../lib/methods/peers/exprag.ts";
import type { Trajectory } from "../../lib/repair/trajectory.ts";
import { readRun, type RunFiles } from "../helpers/run-fixture.ts";
import { ScriptedBackend } from "../helpers/scripted-backend.ts";
import { A, B, C, closeScenario, openScenario, runScenarioWith, SCENARIO_IDS, type ScenarioFixture, scenarioScript } from "../helpers/scripted-scenario.ts";
import { budget } from "../helpers/budget.ts";

/** The first critique (empty list) and the second (the list of two that the first made). */
const FIRST_CRITIQUE = "ADD: Copy table and column names from the schema exactly.\n- ADD: Finish every clause before running a query.\nthis line is not an operation\nAGREE 9\nREMOVE";
const SECOND_CRITIQUE = "1. AGREE 1\n**EDIT 2:** Finish every clause, including the WHERE value.\nREMOVE 2\nADD: Group by a key column that exists.";

/** Answers `critique` prompts with the fixed operations above and `advise` prompts with numbered advice; everything else goes to `repairs`. */
class CritiqueDouble implements ChatBackend {
  readonly identity = { kind: "test-scripted", model: "critique-double", modelHash: "none", params: {} };
  readonly critiques: string[] = [];
  readonly advice: string[] = [];
  readonly repairs: ChatBackend;
  constructor(repairs: ChatBackend) {
    this.repairs = repairs;
  }
  async generate(request: GenerateRequest): Promise<GenerateResult> {
    let text: string;
    if (request.prompt.startsWith("ERRFIX-ADVISE v1")) {
      this.advice.push(request.prompt);
      const types = [...request.prompt.matchAll(/^\[(\d+)\] Failure type: (.*)$/gm)];
      text = types.map((m) => `<advice n="${m[1]}">Check the ${m[2]} first.</advice>`).join("\n");
      return { text, promptTokens: request.prompt.split(/\s+/).length, outputTokens: text.split(/\s+/).length, truncatedPromptTokens: 0, cached: false };
    }
    if (!request.prompt.startsWith("EXPEL-CRITIQUE v2")) return this.repairs.generate(request);
    this.critiques.push(request.prompt);
    text = request.prompt.includes("CURRENT INSIGHTS ([importance]):\n(none yet)") ? FIRST_CRITIQUE : SECOND_CRITIQUE;
    return { text, promptTokens: request.prompt.split(/\s+/).length, outputTokens: text.split(/\s+/).length, truncatedPromptTokens: 0, cached: false };
  }
  async close(): Promise<void> {}
}

let fx: ScenarioFixture;
beforeAll(async () => {
  fx = await openScenario("peers-b");
}, budget(120_000));
afterAll(() => closeScenario(fx));

async function run(method: string): Promise<{ dir: string; files: RunFiles; byId: Map<string, Trajectory>; double: CritiqueDouble }> {
  const dir = join(fx.root, method);
  const double = new CritiqueDouble(new ScriptedBackend(scenarioScript(fx.dataset)));
  await runScenarioWith(fx, method, dir, double);
  const files = readRun(dir);
  expect(files.trajectories.map((t) => t.query_id)).toEqual(SCENARIO_IDS);
  return { dir, files, byId: new Map(files.trajectories.map((t) => [t.query_id, t])), double };
}

/** Every retrieval picked notes from strictly earlier positions, never its own query; the audit is clean. */
function expectCausalAndClean(dir: string, files: RunFiles, byId: Map<string, Trajectory>): void {
  for (const r of files.retrievals) {
    const pos = byId.get(r.query_id)!.stream_position;
    expect(r.source_stream_positions.every((s) => s < pos)).toBe(true);
  }
  const writer = new Map(files.trajectories.flatMap((t) => (t.memory_writes ?? []).map((n) => [n.note_id, t.query_id] as const)));
  for (const r of files.retrievals) for (const id of r.retrieved_entry_ids) expect(writer.get(id)).not.toBe(r.query_id);
  expect(auditRun(dir, fx.dataset).violations).toEqual([]);
}

/** Call kinds of a method with no extra calls: the initial cache and the repairs only. */
function expectNoExtraCalls(files: RunFiles): void {
  for (const t of files.trajectories) {
    expect(new Set(t.call_kinds.slice(1))).toEqual(new Set(t.repair_steps > 0 ? ["repair"] : []));
    expect(t.accounting.llm_calls).toBe(t.call_kinds.length);
  }
}

const repairPromptsOf = (files: RunFiles, id: string) => files.prompts.filter((p) => p.kind === "repair" && p.query_id === id).map((p) => p.prompt);

describe("the peer methods are registered with their hooks, citation and ground-truth flag", () => {
  it("lists each with its memory and declared calls", () => {
    const table = methodTable();
    expect(table.find((l) => l.startsWith("| `expel_online` |"))).toContain("memory:expel_insights(embedded) + calls(critique<=1/repaired)");
    expect(table.find((l) => l.startsWith("| `exprag` |"))).toContain("memory:experience_rag(embedded)");
    expect(table.find((l) => l.startsWith("| `exprecent` |"))).toContain("memory:experience_recent |");
    expect(table.find((l) => l.startsWith("| `error_fix_memory` |"))).toContain("memory:error_fix_pairs(embedded)");
    expect(table.find((l) => l.startsWith("| `error_fix_memory` |"))).toContain("calls(advise<=1/repaired)");
    expect(hookCallBound(getMethod("expel_online"), 7)).toBe(1);
    expect(hookCallBound(getMethod("error_fix_memory"), 7)).toBe(1);
    for (const name of ["exprag", "exprecent"]) expect(hookCallBound(getMethod(name), 7)).toBe(0);
    expect(methodDefinition("expel_online").citation).toMatch(/arXiv:2308\.10144/);
    expect(methodDefinition("exprag").citation).toMatch(/arXiv:2511\.20857/);
    expect(methodDefinition("exprecent").citation).toMatch(/arXiv:2511\.20857/);
    expect(methodDefinition("error_fix_memory").citation).toMatch(/^Memo-SQL-style \(error→fix memory for Text-to-SQL\)/);
    for (const name of ["expel_online", "exprag", "exprecent", "error_fix_memory"]) expect(getMethod(name).sight).toBe("oracle");
  });
});

describe("expel_online: operations and importance counters", () => {
  it("parses operations robustly: bullets, numbering and bold are skipped, bad lines ignored", () => {
    expect(parseOperations(FIRST_CRITIQUE)).toEqual([
      { op: "ADD", text: "Copy table and column names from the schema exactly." },
      { op: "ADD", text: "Finish every clause before running a query." },
      { op: "AGREE", index: 9 },
    ]);
    expect(parseOperations(SECOND_CRITIQUE)).toEqual([
      { op: "AGREE", index: 1 },
      { op: "EDIT", index: 2, text: "Finish every clause, including the WHERE value." },
      { op: "REMOVE", index: 2 },
      { op: "ADD", text: "Group by a key column that exists." },
    ]);
    expect(parseOperations("add: lower case works\nEDIT 3\nEDIT: no number\nAGREE\nREMOVE 0\nADDITION: not an op\nagree #2")).toEqual([
      { op: "ADD", text: "lower case works" },
      { op: "AGREE", index: 2 },
    ]);
    expect(parseOperations("")).toEqual([]);
  });

  it("ADD +2, AGREE +1, EDIT +1, REMOVE −1, dropped at 0, ordered by importance, capped", () => {
    expect(IMPORTANCE).toEqual({ ADD: 2, AGREE: 1, EDIT: 1, REMOVE: -1 });
    const start: Insight[] = [
      { text: "a", importance: 3 },
      { text: "b", importance: 1 },
      { text: "c", importance: 2 },
    ];
    // b: 1 − 1 = 0 → dropped (a later AGREE of b is ignored); c: 2 + 1 (EDIT) + 1 (AGREE) = 4;
    // a: 3 − 1 − 1 = 1; d: ADD 2; "A" again counts as AGREE of a: 2; index 7 is outside the list.
    const { insights, applied } = applyOperations(
      start,
      [
      { op: "REMOVE", index: 2 },
      { op: "AGREE", index: 2 },
      { op: "EDIT", index: 3, text: "c2" },
      { op: "AGREE", index: 3 },
      { op: "REMOVE", index: 1 },
      { op: "REMOVE", index: 1 },
      { op: "ADD", text: "d" },
      { op: "ADD", text: " A " },
      { op: "AGREE", index: 7 },
      ],
      MAX_INSIGHTS,
      20,
    );
    expect(insights).toEqual([
      { text: "c2", importance: 4 },
      { text: "a", importance: 2 },
      { text: "d", importance: 2 },
    ]);
    expect(applied).toBe(7);
    expect(start[1]).toEqual({ text: "b", importance: 1 }); // the input list is not changed
    // A full list takes no ADD; removing one to 0 makes room for the next.
    const full = Array.from({ length: MAX_INSIGHTS }, (_, i) => ({ text: `i${i}`, importance: 1 }));
    expect(applyOperations(full, [{ op: "ADD", text: "new" }]).applied).toBe(0);
    const room = applyOperations(full, [{ op: "REMOVE", index: 1 }, { op: "ADD", text: "new" }]).insights;
    expect(room).toHaveLength(MAX_INSIGHTS);
    expect(room.find((i) => i.text === "new")).toEqual({ text: "new", importance: 2 });
    expect(room[0]).toEqual({ text: "new", importance: 2 });
  });

  it("holds up to 20 rules, applies at most 4 operations per update, and a REMOVE on a full list counts −3 (the original's)", () => {
    expect([MAX_INSIGHTS, MAX_OPERATIONS, REMOVE_WHEN_FULL]).toEqual([20, 4, -3]);
    const adds = Array.from({ length: 6 }, (_, i) => ({ op: "ADD" as const, text: `rule ${i}` }));
    expect(applyOperations([], adds).insights.map((i) => i.text)).toEqual(["rule 0", "rule 1", "rule 2", "rule 3"]);
    expect(applyOperations([], adds, MAX_INSIGHTS, 6).applied).toBe(6);
    // Full: a REMOVE takes 3 (an insight at 3 is dropped at once); not full: 1.
    const full = Array.from({ length: MAX_INSIGHTS }, (_, i) => ({ text: `i${i}`, importance: 3 }));
    expect(applyOperations(full, [{ op: "REMOVE", index: 1 }]).insights).toHaveLength(MAX_INSIGHTS - 1);
    expect(applyOperations(full.slice(1), [{ op: "REMOVE", index: 1 }]).insights[18]).toEqual({ text: "i1", importance: 2 });
    // The critique prompt states both limits; an arm's settings change them.
    const prompt = critiquePrompt({ dataset: "spider", queryId: "q", dbId: "db", question: "Q?", evidence: "", schema: "", streamPosition: 1, attempts: [{ sql: "SELECT 1", status: "DENOTATION_MISMATCH", dbError: null, executed: true, errorType: "Result Mismatch", rowsPreview: "[1]" }, { sql: "SELECT 2", status: "CORRECT", dbError: null, executed: true, errorType: null, rowsPreview: "[2]" }], success: true, reflections: [], retrieved: [] }, [], 7, 2);
    expect(prompt).toContain("Answer with at most 2 operations");
    expect(prompt).toContain("The list holds at most 7 insights");
  });

  it("one critique per repaired episode; the list it makes is stored and shown to later repairs beside the most similar successful trajectories", async () => {
    const { dir, files, byId, double } = await run("expel_online");
    // Only A and C failed and were then repaired: one critique each, after their repairs. Every
    // success stores its trajectory (ExpeL's pool); a repaired one also stores the new list.
    for (const t of files.trajectories) {
      const pair = !t.initial_correct && t.final_correct;
      expect(t.call_kinds.filter((k) => k === "critique")).toHaveLength(pair ? 1 : 0);
      if (pair) expect(t.call_kinds[t.call_kinds.length - 1]).toBe("critique");
      expect(t.accounting.llm_calls).toBe(t.call_kinds.length);
      const kinds = (t.memory_writes ?? []).map((n) => n.kind);
      expect(kinds).toEqual(pair ? ["trajectory", "insights"] : t.final_correct ? ["trajectory"] : []);
      // Each stored note's key is embedded once; the question once at each repair (426's position 0 has none).
      expect(t.accounting.embedding_calls).toBe(kinds.length + (t.stream_position > 0 ? t.repair_steps : 0));
    }
    expect(double.critiques).toHaveLength(2);
    // A's critique saw the empty list, its failed attempts and the accepted query.
    expect(double.critiques[0]).toContain("CURRENT INSIGHTS ([importance]):\n(none yet)");
    expect(double.critiques[0]).toContain("[Failed 1] SELECT series_nam FROM TV_Channel");
    expect(double.critiques[0]).toContain("ACCEPTED QUERY:\nSELECT T1.series_name FROM TV_Channel AS T1 JOIN Cartoon");
    const note = (id: string, kind: string) => byId.get(id)!.memory_writes!.find((n) => n.kind === kind)!;
    const a = note(A, "insights");
    expect([a.kind, a.polarity, a.source_query_id]).toEqual(["insights", "neutral", A]);
    expect(a.text).toBe("1. [2] Copy table and column names from the schema exactly.\n2. [2] Finish every clause before running a query.");
    // A's trajectory: the question, its three failed attempts with their feedback, then the accepted SQL.
    const trajA = note(A, "trajectory");
    expect([trajA.polarity, trajA.key]).toEqual(["positive", fx.dataset.examples.find((e) => e.id === A)!.question]);
    expect(trajA.text).toMatch(/^Question: .*\nDatabase: \w+\nFailed attempt 1: SELECT series_nam FROM TV_Channel.*\n  -> status \w+.*\nFailed attempt 2: .*\n  -> .*\nFailed attempt 3: .*\n  -> .*\nAccepted SQL: SELECT T1\.series_name FROM TV_Channel AS T1 JOIN Cartoon/);
    // C's critique read A's list (write() is given the eligible memory) and changed it.
    expect(double.critiques[1]).toContain(`CURRENT INSIGHTS ([importance]):\n${a.text}`);
    expect(note(C, "insights").data).toMatchObject({
      insights: [
        { text: "Copy table and column names from the schema exactly.", importance: 3 },
        { text: "Finish every clause, including the WHERE value.", importance: 2 },
        { text: "Group by a key column that exists.", importance: 2 },
      ],
    });
    // A's repairs (position 1) see 426's trajectory, no list; B's and C's see A's list and the two
    // most similar successful trajectories of 426 and A (B stored none).
    const heading = "INSIGHTS AND SIMILAR SUCCESSES FROM EARLIER EPISODES:\n";
    for (const r of files.retrievals.filter((r) => r.query_id === A)) expect(r.retrieved_entry_ids).toEqual([note("426", "trajectory").note_id]);
    for (const p of repairPromptsOf(files, A)) {
      expect(p).toContain(`${heading}Successful attempts at similar earlier questions:\n[example 1]\n${note("426", "trajectory").text}`);
      expect(p).not.toContain("Insights (most important first");
    }
    for (const r of files.retrievals.filter((r) => r.query_id !== A)) {
      expect(r.retrieved_entry_ids[0]).toBe(a.note_id);
      expect(new Set(r.retrieved_entry_ids.slice(1))).toEqual(new Set([note("426", "trajectory").note_id, trajA.note_id]));
    }
    for (const id of [B, C]) {
      for (const p of repairPromptsOf(files, id)) {
        expect(p).toContain(`${heading}Insights (most important first, [importance]):\n${a.text}\n\nSuccessful attempts at similar earlier questions:\n[example 1]\n`);
        expect(p).toContain(trajA.text);
      }
    }
    expectCausalAndClean(dir, files, byId);
  }, budget(120_000));
});

describe("exprag and exprecent: raw experiences, by similarity or by recency", () => {
  it("experience notes hold the question, the final SQL and the feedback", () => {
    const episode: EpisodeView = {
      dataset: "spider", queryId: "q", dbId: "db", question: "How many?", evidence: "", schema: "", streamPosition: 4,
      attempts: [{ sql: "SELECT count(*) FROM t", status: "EXECUTION_ERROR", dbError: "no such table: t", executed: false, errorType: "Schema Linking", rowsPreview: "" }],
      success: false, reflections: [], retrieved: [],
    };
    expect(experienceNote(episode)).toEqual({
      kind: "experience",
      text: "Question: How many?\nDatabase: db\nFinal SQL: SELECT count(*) FROM t\nFeedback: not accepted (EXECUTION_ERROR; error: no such table: t; type: Schema Linking)",
      key: "How many?",
      polarity: "negative",
      data: { question: "How many?", final_sql: "SELECT count(*) FROM t", status: "EXECUTION_ERROR", success: false },
    });
  });

  for (const method of ["exprag", "exprecent"]) {
    it(`${method}: one experience per episode, success or failure; earlier ones reach the prompt`, async () => {
      const { dir, files, byId } = await run(method);
      expectNoExtraCalls(files);
      for (const t of files.trajectories) {
        expect(t.memory_writes!.map((n) => [n.kind, n.polarity])).toEqual([["experience", t.final_correct ? "positive" : "negative"]]);
        // exprag embeds each stored experience and the question at each repair; exprecent embeds nothing.
        expect(t.accounting.embedding_calls).toBe(method === "exprag" ? 1 + t.repair_steps : 0);
      }
      expect(byId.get(B)!.memory_writes![0].text).toContain("Feedback: not accepted (DENOTATION_MISMATCH");
      // The repair path (issue 37 §1): A's experience holds its three failed attempts with their feedback before the final SQL.
      expect(byId.get(A)!.memory_writes![0].text).toMatch(/^Question: .*\nDatabase: \w+\nFailed attempt 1: SELECT series_nam FROM TV_Channel.*\n  -> status \w+.*\nFailed attempt 2: [^\n]*\n  -> [^\n]*\nFailed attempt 3: [^\n]*\n  -> [^\n]*\nFinal SQL: /);
      expect((byId.get(A)!.memory_writes![0].data as { path: { failed: unknown[] } }).path.failed).toHaveLength(3);
      expect(byId.get("426")!.memory_writes![0].text).toMatch(/\nFeedback: accepted \(CORRECT\)$/);
      const noteOf = (id: string) => byId.get(id)!.memory_writes![0].note_id;
      // Position p sees the min(p, 4) experiences of positions 0..p−1.
      for (const r of files.retrievals) expect(r.retrieved_entry_ids).toHaveLength(Math.min(byId.get(r.query_id)!.stream_position, EXPERIENCES_SHOWN));
      const atC = files.retrievals.find((r) => r.query_id === C)!;
      if (method === "exprecent") expect(atC.retrieved_entry_ids).toEqual([noteOf(B), noteOf(A), noteOf("426")]);
      else expect(new Set(atC.retrieved_entry_ids)).toEqual(new Set([noteOf(B), noteOf(A), noteOf("426")]));
      const heading = method === "exprag" ? "EXPERIENCES FROM EARLIER EPISODES" : "RECENT EXPERIENCES";
      const question426 = fx.dataset.examples.find((e) => e.id === "426")!.question;
      expect(repairPromptsOf(files, A)[0]).toContain(`${heading}:\n[experience 1]\nNote ID: ${noteOf("426")}\nQuestion: ${question426}\n`);
      expectCausalAndClean(dir, files, byId);
    }, budget(120_000));
  }
});

describe("error_fix_memory: solved questions and error→fix pairs", () => {
  it("a failure stores nothing; a repair stores its solved question and one pair per failure type, with advice from one call, keyed on question + failing-SQL skeleton", async () => {
    const at = (sql: string, errorType: string | null, dbError: string | null = null): AttemptView => ({ sql, status: errorType ? "EXECUTION_ERROR" : "CORRECT", dbError, executed: errorType === null, errorType, rowsPreview: errorType === null ? "[1]" : "" });
    const base = { dataset: "spider", queryId: "q", dbId: "db", question: "Q?", evidence: "", schema: "", streamPosition: 2, reflections: [], retrieved: [] };
    const prompts: string[] = [];
    const model: HookModel = {
      async reply(kind, prompt) {
        expect(kind).toBe("advise");
        prompts.push(prompt);
        return { text: '<advice n="2">Finish the statement.</advice>\n<advice n="1">Copy column names from the schema.</advice>', truncated: false };
      },
      async generate(kind, prompt) {
        return (await this.reply(kind, prompt)).text;
      },
      async embed() {
        throw new Error("not used");
      },
    };
    expect(await errorFixNotes({ ...base, attempts: [at("SELECT x", "Schema Linking", "no such column: x")], success: false }, model)).toEqual([]);
    const notes = await errorFixNotes({ ...base, attempts: [at("SELECT x", "Schema Linking", "no such column: x"), at("SELECT", "Syntax", "incomplete input"), at("SELECT y FROM t WHERE a = 'v'", "Schema Linking", "no such column: y"), at("SELECT z", null)], success: true }, model);
    expect(notes.map((n) => [n.kind, n.polarity, (n.data as { error_type?: string }).error_type ?? null])).toEqual([
      ["solved", "positive", null],
      ["error_fix", "negative", "Schema Linking"],
      ["error_fix", "negative", "Syntax"],
    ]);
    // One advise call for the episode: both pairs, numbered, with their feedback and the fix; never the gold.
    expect(prompts).toHaveLength(1);
    expect(prompts[0]).toContain("[1] Failure type: Schema Linking\nFailing SQL: SELECT y FROM t WHERE a = 'v'\nFeedback: EXECUTION_ERROR; error: no such column: y; type: Schema Linking\n[2] Failure type: Syntax\nFailing SQL: SELECT\n");
    expect(prompts[0]).toContain("Fixed SQL: SELECT z");
    expect(notes[1].text).toBe("Question: Q?\nDatabase: db\nFailing SQL: SELECT y FROM t WHERE a = 'v'\nFeedback: EXECUTION_ERROR; error: no such column: y; type: Schema Linking\nFixed SQL: SELECT z\nAdvice: Copy column names from the schema.");
    expect(notes[2].text).toMatch(/\nAdvice: Finish the statement\.$/);
    // Retrieval keys: the question and the failing SQL's skeleton (names `_`, values `?`).
    expect(notes[1].key).toBe("Q?\nSELECT _ FROM _ WHERE _ = ?");
    expect(fixKey("Q?", "select y from t where a = 'v'")).toBe(notes[1].key);
    expect(sqlSkeleton("SELECT T1.name, count(*) FROM singer AS T1 WHERE age > 20 -- note\nORDER  BY 1 DESC")).toBe("SELECT _._, COUNT (*) FROM _ AS _ WHERE _ > ? ORDER BY ? DESC");
    expect(notes[0]).toMatchObject({ text: "Question: Q?\nDatabase: db\nAccepted SQL: SELECT z", key: "Q?" });
    expect(parseAdvice('<advice>first</advice><advice n="3">third</advice><advice n="9">stray</advice>', 3)).toEqual(["first", "", "third"]);
    // An initially correct episode stores its solved question only, with no call.
    expect((await errorFixNotes({ ...base, attempts: [at("SELECT z", null)], success: true }, model)).map((n) => n.kind)).toEqual(["solved"]);
    expect(prompts).toHaveLength(1);
  });

  it("shows pairs of the current failure type and similar solved questions", async () => {
    const { dir, files, byId, double } = await run("error_fix_memory");
    // One advise call per repaired episode (A and C), after its repairs; none elsewhere.
    for (const t of files.trajectories) {
      const repaired = !t.initial_correct && t.final_correct;
      expect(t.call_kinds.slice(1)).toEqual([...Array(t.repair_steps).fill("repair"), ...(repaired ? ["advise"] : [])]);
      expect(t.accounting.llm_calls).toBe(t.call_kinds.length);
    }
    expect(double.advice).toHaveLength(2);
    for (const t of files.trajectories) {
      const types = new Set(t.error_types.slice(0, -1).filter((e) => e !== null));
      const kinds = (t.memory_writes ?? []).map((n) => n.kind);
      expect(kinds).toEqual(t.final_correct ? ["solved", ...[...types].map(() => "error_fix")] : []);
      // Each stored note is embedded once, and the question once at each repair that had notes to rank.
      expect(t.accounting.embedding_calls).toBeGreaterThanOrEqual(kinds.length);
    }
    expect(byId.get(B)!.memory_writes ?? []).toEqual([]);
    const notes = files.trajectories.flatMap((t) => (t.memory_writes ?? []).map((n) => ({ n, pos: t.stream_position })));
    // Every retrieval: the pairs of the step's failure type (at most 2), then solved questions (at most 2).
    for (const r of files.retrievals) {
      const pos = byId.get(r.query_id)!.stream_position;
      const eligible = notes.filter((x) => x.pos < pos).map((x) => x.n);
      const fixes = eligible.filter((n) => n.kind === "error_fix" && (n.data as { error_type: string }).error_type === r.current_error_type);
      const solved = eligible.filter((n) => n.kind === "solved");
      const expected = Math.min(fixes.length, FIXES_SHOWN) + Math.min(solved.length, SOLVED_SHOWN);
      expect(r.retrieved_entry_ids).toHaveLength(expected);
      expect(r.retrieved_error_types).toEqual([...Array(Math.min(fixes.length, FIXES_SHOWN)).fill("error_fix"), ...Array(Math.min(solved.length, SOLVED_SHOWN)).fill("solved")]);
    }
    // C (position 3) fails with the type A had first; it is shown A's pair for that type.
    const cType = byId.get(C)!.error_types[0]!;
    const aPair = byId.get(A)!.memory_writes!.find((n) => n.kind === "error_fix" && (n.data as { error_type: string }).error_type === cType)!;
    expect(aPair).toBeDefined();
    expect(repairPromptsOf(files, C)[0]).toContain(`ERROR FIXES AND SOLVED QUESTIONS FROM EARLIER EPISODES:\n[error_fix 1]\nNote ID: ${aPair.note_id}\n`);
    expect(aPair.text).toContain(`\nAdvice: Check the ${cType} first.`);
    expect(repairPromptsOf(files, C)[0]).toContain(`Advice: Check the ${cType} first.`);
    expect(aPair.key).toBe(`${aPair.key.split("\n")[0]}\n${sqlSkeleton((aPair.data as { failed_sql: string }).failed_sql)}`);
    expectCausalAndClean(dir, files, byId);
  }, budget(120_000));

  it("the critique prompt is built without the gold", () => {
    const example = fx.dataset.examples.find((e) => e.id === A)!;
    const prompt = critiquePrompt(
      { dataset: "spider", queryId: A, dbId: example.dbId, question: example.question, evidence: "", schema: "", streamPosition: 1, attempts: [{ sql: "SELECT 1", status: "DENOTATION_MISMATCH", dbError: null, executed: true, errorType: "Result Mismatch", rowsPreview: "[1]" }, { sql: "SELECT 2", status: "CORRECT", dbError: null, executed: true, errorType: null, rowsPreview: "[2]" }], success: true, reflections: [], retrieved: [] },
      [],
    );
    expect(prompt).not.toContain(example.goldSql);
    expect(prompt).toContain("[Failed 1] SELECT 1\nFeedback: DENOTATION_MISMATCH; type: Result Mismatch\n\nACCEPTED QUERY:\nSELECT 2");
  });
});
