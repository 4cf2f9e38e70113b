// What a method may spend (issue 36 §4): every declared call kind has an output limit (its
// maxOutputTokens, else the run's max_output_tokens); the backend is asked for that limit; a call that
// reaches it is recorded as truncated in the trajectory and counted in the cost table, and the hook is
// told ({ text, truncated }) so it keeps its previous state — a truncated AWM induction keeps the
// previous workflows instead of replacing them with "(no workflows induced yet)".
import { describe, expect, it } from "vitest";
import type { Example } from "../../lib/data/types.ts";
import type { ChatBackend, GenerateRequest } from "../../lib/llm/types.ts";
import { getMethod, hooksRecord, noteMemoryOf, type HookModel, type NoteDraft, type NoteView } from "../../lib/methods/index.ts";
import { buildMethod } from "../../lib/methods/method.ts";
import { AWM_MAX_OUTPUT_TOKENS } from "../../lib/methods/peers/awm.ts";
import type { Verdict } from "../../lib/oracle/oracle.ts";
import { runEpisode, type EpisodeSpec } from "../../lib/repair/episode.ts";
import { episodeMemoryOf } from "../../lib/repair/episode-memory.ts";
import { toTrajectory } from "../../lib/repair/trajectory-record.ts";
import { summarizeRun } from "../../lib/analysis/run-summary.ts";
import { costTable } from "../../lib/analysis/table-cost.ts";

const example = (id: string): Example => ({ id, sourceIndex: Number(id), dbId: "concert_singer", question: `How many singers? (${id})`, evidence: "", goldSql: "SELECT count(*) FROM singer", difficulty: "easy" });
const correct: Verdict = { status: "CORRECT", dbError: null, predictedExecOk: true, oracleCorrect: true, dbExecutions: 1, predictedRows: [[6n]] };

/** Answers each induce call with the next scripted reply; a reply marked `cut` uses the whole limit. */
function inducer(replies: { text: string; cut: boolean }[]): ChatBackend & { requests: GenerateRequest[] } {
  const requests: GenerateRequest[] = [];
  return {
    requests,
    identity: { kind: "test-script", model: "s", modelHash: "none", params: {} },
    async generate(request) {
      requests.push(request);
      const r = replies.shift()!;
      return { text: r.text, promptTokens: 10, outputTokens: r.cut ? request.maxOutputTokens : 7, truncatedPromptTokens: 0, cached: false };
    },
    async close() {},
  };
}

const spec = (id: string, position: number, method = getMethod("awm")): EpisodeSpec => ({ dataset: "spider", method, streamSeed: 0, streamPosition: position, example: example(id), schema: "", initial: { initial_sql: "SELECT count(*) FROM singer", execution_status: "CORRECT", prompt_hash: null, prompt_tokens: 1, output_tokens: 1 }, feedbackRegime: "denotation_confirmed", maxRepairSteps: 2, maxOutputTokens: 512 });
const asView = (notes: readonly { note_id: string }[]): NoteView[] => notes.map((n) => Object.freeze({ ...(n as NoteView), vector: null }));

describe("declared output limits", () => {
  it("a truncated AWM induction keeps the previous workflows, is recorded and counted", async () => {
    const backend = inducer([
      { text: "<workflows>Count rows: 1. find the table 2. SELECT count(*)</workflows>", cut: false },
      { text: "<workflows>Count rows: 1. find the tab", cut: true },
    ]);
    const first = await runEpisode(spec("1", 0), { backend, score: async () => correct, memory: episodeMemoryOf(getMethod("awm"), { notes: [] }) });
    expect(first.notes![0].text).toBe("Count rows: 1. find the table 2. SELECT count(*)");
    const second = await runEpisode(spec("2", 1), { backend, score: async () => correct, memory: episodeMemoryOf(getMethod("awm"), { notes: asView(first.notes!) }) });
    // The induce calls asked the backend for the kind's declared limit, not the run's 512.
    expect(backend.requests.map((r) => r.maxOutputTokens)).toEqual([AWM_MAX_OUTPUT_TOKENS, AWM_MAX_OUTPUT_TOKENS]);
    // Cut at its limit: the previous workflows stay, and both successes are carried forward.
    expect(second.notes![0].text).toBe("Count rows: 1. find the table 2. SELECT count(*)");
    expect((second.notes![0].data as { successes: unknown[] }).successes).toHaveLength(2);
    const t1 = toTrajectory(spec("1", 0), first, 0);
    const t2 = toTrajectory(spec("2", 1), second, 0);
    expect(t1.truncated_outputs).toBeUndefined();
    expect([t2.call_kinds, t2.truncated_outputs]).toEqual([["initial_cache", "induce"], [1]]);
    const summary = summarizeRun([t1, t2]);
    expect(summary.costs!.by_kind.induce).toMatchObject({ calls: 2, truncated: 1 });
    const table = costTable([summary])!;
    expect(table.columns).toContain("Truncated calls");
    expect(table.data[0]).toMatchObject({ truncated_calls_per_run: 1, induce_truncated_calls_per_run: 1 });
  });

  it("a kind without a declared limit generates at the run's max_output_tokens, and limits are checked and recorded", async () => {
    const m = buildMethod({ name: "limits_probe", description: "t", hooks: { calls: { note: { most: 1 }, big: { most: 1, maxOutputTokens: 3000 } }, step: { name: "s", async afterFailure(_s, model) { const a = await model.reply("note", "p1"); const b = await model.reply("big", "p2"); return `${a.truncated} ${b.truncated}`; } } } });
    expect(hooksRecord(m.hooks)!.calls).toEqual({ note: { most: 1 }, big: { most: 1, max_output_tokens: 3000 } });
    const backend = inducer([{ text: "x", cut: true }, { text: "y", cut: false }, { text: "<answer>SELECT 1</answer>", cut: false }, { text: "<answer>SELECT 1</answer>", cut: false }]);
    const failed: Verdict = { status: "EXECUTION_ERROR", dbError: "no such column: x", predictedExecOk: false, oracleCorrect: false, dbExecutions: 1, predictedRows: null };
    const s = { ...spec("3", 0, m), initial: { ...spec("3", 0).initial, initial_sql: "SELECT x", execution_status: "EXECUTION_ERROR" as const }, maxRepairSteps: 1 };
    const result = await runEpisode(s, { backend, score: async () => failed });
    expect(backend.requests.slice(0, 3).map((r) => r.maxOutputTokens)).toEqual([512, 3000, 512]);
    expect(result.reflections).toEqual(["true false"]);
    expect(() => buildMethod({ name: "bad_limit", description: "t", hooks: { calls: { note: { most: 1, maxOutputTokens: 0 } } } })).toThrow(/method "bad_limit": calls\.note\.maxOutputTokens must be an integer in 1\.\.32768/);
  });

  it("a truncated DC-RS synthesis keeps the previous sheet in force, and the episode's note carries it", async () => {
    const memory = noteMemoryOf(getMethod("dynamic_cheatsheet_rs"))!;
    const earlier: NoteView = Object.freeze({ note_id: "n-earlier", kind: "experience", text: "Question: q0\nDatabase: db\nFinal SQL: SELECT 1\nOutcome: status CORRECT", key: "q0", polarity: "positive" as const, data: { final_status: "CORRECT", sheet: "- old advice" }, source_query_id: "q0", source_db_id: "db", source_stream_position: 0, source_episode_id: "e0", vector: new Float32Array([1, 0]) });
    const prompts: string[] = [];
    const model: HookModel = {
      async reply(kind, prompt) {
        expect(kind).toBe("synthesize");
        prompts.push(prompt);
        return { text: "<cheatsheet>- new adv", truncated: true };
      },
      async generate(kind, prompt) {
        return (await this.reply(kind, prompt)).text;
      },
      async embed(texts) {
        return texts.map(() => new Float32Array([1, 0]));
      },
    };
    const question = { dataset: "spider", queryId: "trunc-1", dbId: "db", question: "q1", evidence: "", schema: "", streamPosition: 1 };
    const shown = (await memory.retrieve({ ...question, iteration: 1, attempts: [] }, [earlier], model)) as { picked: unknown[]; text: string };
    expect(prompts[0]).toContain("Previous cheatsheet:\n- old advice\n\nEarlier experiences:");
    expect(shown.text).toBe("- old advice");
    const attempt = { sql: "SELECT 2", status: "CORRECT", dbError: null, executed: true, errorType: null, rowsPreview: "[2]" };
    const drafts = await memory.write({ ...question, attempts: [attempt, attempt], success: true, reflections: [], retrieved: [["n-earlier"]] }, model, [earlier]);
    expect((drafts as NoteDraft[])[0].data).toMatchObject({ sheet: "- old advice" });
  });
});
