// Hooks that misbehave (issue 39 items 12, 19, 20, 21; lib/methods/hook-guard.ts): a hook that
// throws, a write into what a hook was given (the frozen view, a note's data or vector), note data
// JSON cannot hold exactly (a function, a cycle, BigInt, Date, Map), a note over 64 KiB and a hook
// that never returns each stop the episode with one line naming the method, the hook and what was
// wrong; a note picked twice by retrieve is shown and logged once; SQL rows reach hooks JSON-safe.
import { describe, expect, it } from "vitest";
import type { Example } from "../../lib/data/types.ts";
import type { ChatBackend } from "../../lib/llm/types.ts";
import { buildMethod } from "../../lib/methods/method.ts";
import { stampNotes, type MethodHooks, type NoteView } from "../../lib/methods/hooks.ts";
import { jsonInexact, jsonRows } from "../../lib/methods/hook-guard.ts";
import { noteView } from "../../lib/methods/note-memory.ts";
import type { Verdict } from "../../lib/oracle/oracle.ts";
import { runEpisode, type EpisodeSpec } from "../../lib/repair/episode.ts";
import { episodeMemoryOf } from "../../lib/repair/episode-memory.ts";

const example: Example = { id: "cur", sourceIndex: 0, dbId: "concert_singer", question: "How many singers are there?", evidence: "", goldSql: "SELECT count(*) FROM singer", difficulty: "easy" };
const failed: Verdict = { status: "EXECUTION_ERROR", dbError: "no such column: x", predictedExecOk: false, oracleCorrect: false, dbExecutions: 1, predictedRows: null };
const backend = {
  identity: { kind: "test-capture", model: "capture", modelHash: "none", params: {} },
  generate: async () => ({ text: "<answer>SELECT x FROM singer</answer>", promptTokens: 1, outputTokens: 1, truncatedPromptTokens: 0, cached: false }),
} as unknown as ChatBackend;

/** A stored note from `queryId` at `position`, as the run hands it to hooks. */
const note = (queryId: string, position: number, data: unknown = { tries: [1, 2] }): NoteView =>
  noteView(stampNotes("probe", { queryId, dbId: "db", streamPosition: position, episodeId: `ep-${queryId}-${position}` }, [{ kind: "lesson", text: `from ${queryId}@${position}`, data: data as never }])[0], Float32Array.from([0.6, 0.8]));

/** One episode of a method with `hooks` at position 5 over two earlier notes. */
async function episode(name: string, hooks: MethodHooks, extra: Partial<EpisodeSpec> = {}, notes: readonly NoteView[] = [note("q0", 0), note("q1", 1)]) {
  const method = buildMethod({ name, description: "test", hooks });
  const spec: EpisodeSpec = { dataset: "spider", method, streamSeed: 0, streamPosition: 5, example, schema: "", initial: { initial_sql: "SELECT x FROM singer", execution_status: "EXECUTION_ERROR", prompt_hash: null, prompt_tokens: null, output_tokens: null }, feedbackRegime: "denotation_confirmed", maxRepairSteps: 1, maxOutputTokens: 64, ...extra };
  return runEpisode(spec, { backend, score: async () => failed, memory: episodeMemoryOf(method, { notes }) });
}

const memory = (over: Partial<NonNullable<MethodHooks["memory"]>>): MethodHooks => ({ memory: { name: "probe", heading: "PROBE", write: () => [], retrieve: () => [], ...over } });

/** The one-line refusal of `run`. */
async function refusal(run: Promise<unknown>): Promise<string> {
  const error = await run.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  const message = (error as Error).message;
  expect(message).not.toContain("\n");
  expect((error as Error).name).toBe("MeritError");
  return message;
}

describe("a hook that throws", () => {
  it("retrieve: one line naming method, hook and the error", async () => {
    const m = await refusal(episode("fault_retrieve", memory({ retrieve: () => { throw new Error("boom\n    at stack frame"); } })));
    expect(m).toMatch(/^method "fault_retrieve": memory\.retrieve \("probe"\) in the episode of query cur threw Error: boom; fix the hook/);
  });

  it("write, step and classify alike", async () => {
    expect(await refusal(episode("fault_write", memory({ write: async () => Promise.reject(new RangeError("bad index")) })))).toMatch(/^method "fault_write": memory\.write \("probe"\) .* threw RangeError: bad index/);
    expect(await refusal(episode("fault_step", { step: { name: "stepper", afterFailure: () => { throw new Error("no reflection"); } } }))).toMatch(/^method "fault_step": step\.afterFailure \("stepper"\) .* threw Error: no reflection/);
    expect(await refusal(episode("fault_classify", { classify: { name: "labels", types: ["a"], classify: () => { throw new TypeError("x is undefined"); } } }))).toMatch(/^method "fault_classify": classify\.classify \("labels"\) .* threw TypeError: x is undefined/);
  });
});

describe("a write to what a hook was given", () => {
  it("into the memory array, a note's data or the request: refused as a write to the read-only view", async () => {
    for (const retrieve of [
      (_r: unknown, mem: readonly NoteView[]) => ((mem as NoteView[]).push(mem[0]), []),
      (_r: unknown, mem: readonly NoteView[]) => (((mem[0].data as { tries: number[] }).tries as number[]).push(3), []),
      (_r: unknown, mem: readonly NoteView[]) => (((mem[0] as { text: string }).text = "changed"), []),
      (r: { attempts: readonly { sql: string }[] }) => (((r.attempts[0] as { sql: string }).sql = "x"), []),
    ]) {
      const m = await refusal(episode("fault_view", memory({ retrieve: retrieve as never })));
      expect(m).toMatch(/^method "fault_view": memory\.retrieve \("probe"\) in the episode of query cur wrote to the read-only view it was given \(.*\); .*supersedes/);
    }
  });

  it("a note's vector is a copy: zeroing it in place changes nothing stored", async () => {
    const notes = [note("q0", 0)];
    await episode("fault_vector", memory({ embedsNotes: true, retrieve: (_r, mem) => (mem[0].vector!.fill(0), []) }), {}, notes);
    expect([...notes[0].vector!]).toEqual([Float32Array.from([0.6])[0], Float32Array.from([0.8])[0]]);
  });
});

describe("note data JSON cannot hold exactly", () => {
  const cycle: Record<string, unknown> = { a: 1 };
  cycle.self = cycle;
  for (const [what, data, said] of [
    ["a function", { f: () => 1 }, /data\.f is a function/],
    ["a cycle", cycle, /data\.self refers back to an enclosing object \(a cycle\)/],
    ["a BigInt", { n: 2n ** 63n }, /data\.n is a BigInt \(9223372036854775808n\), which JSON cannot hold exactly/],
    ["a Date", { at: new Date(0) }, /data\.at is a Date, .*toISOString/],
    ["a Map", { m: new Map([["a", 1]]) }, /data\.m is a Map, .*Object\.fromEntries/],
    ["NaN", [1, Number.NaN], /data\[1\] is NaN/],
  ] as const) {
    it(`refuses ${what} in one line naming method and note`, async () => {
      const m = await refusal(episode("fault_data", memory({ write: () => [{ kind: "lesson", text: "t", data: data as never }] })));
      expect(m).toMatch(/^method "fault_data": memory\.write's note 1 for query cur cannot be stored: /);
      expect(m).toMatch(said);
    });
  }
  it("accepts plain JSON", () => expect(jsonInexact({ a: [1, "b", null, { c: true }] })).toBeNull());
});

describe("sizes", () => {
  it("refuses a note over 64 KiB", async () => {
    const m = await refusal(episode("fault_size", memory({ write: () => [{ kind: "lesson", text: "x".repeat(70_000) }] })));
    expect(m).toMatch(/note 1 for query cur is 70004 bytes \(text, key and data\); a note holds at most 65536 bytes/);
  });
});

describe("retrieve picking a note twice", () => {
  it("shows and logs it once, at its first place", async () => {
    const result = await episode("dup_pick", memory({ retrieve: (_r, mem) => [{ note: mem[1], score: 0.5 }, { note: mem[0] }, { note: mem[1], score: 0.1 }] }));
    expect(result.retrieved).toEqual([[result.retrievalLog[0].retrieved_entry_ids[0], result.retrievalLog[0].retrieved_entry_ids[1]]]);
    expect(result.retrievalLog[0].retrieved_entry_ids).toHaveLength(2);
    expect(result.retrievalLog[0].final_scores).toEqual([0.5, 0]);
    const prompt = result.prompts.find((p) => p.kind === "repair")!.text;
    expect(prompt.match(/Note ID: /g)).toHaveLength(2);
  });
});

describe("a hook's deadline", () => {
  it("a retrieve that never returns stops the episode with one line naming method, hook and the setting", async () => {
    const m = await refusal(episode("hang_retrieve", memory({ retrieve: () => new Promise(() => {}) }), { hookDeadlineS: 0.05 }));
    expect(m).toMatch(/^method "hang_retrieve": memory\.retrieve \("probe"\) did not return within 0\.05 s in the episode of query cur .*hook_deadline_s/);
  });

  it("does not count the hook's model calls", async () => {
    const slow = { ...backend, generate: () => new Promise((resolve) => setTimeout(() => resolve({ text: "ok", promptTokens: 1, outputTokens: 1, truncatedPromptTokens: 0, cached: false }), 80)) } as unknown as ChatBackend;
    const method = buildMethod({ name: "slow_model", description: "test", hooks: { calls: { distill: { most: 1 } }, memory: { name: "probe", heading: "PROBE", retrieve: () => [], write: async (_e, model) => [{ kind: "lesson", text: await model.generate("distill", "p") }] } } });
    const spec: EpisodeSpec = { dataset: "spider", method, streamSeed: 0, streamPosition: 0, example, schema: "", initial: { initial_sql: "SELECT x FROM singer", execution_status: "EXECUTION_ERROR", prompt_hash: null, prompt_tokens: null, output_tokens: null }, feedbackRegime: "denotation_confirmed", maxRepairSteps: 0, maxOutputTokens: 64, hookDeadlineS: 0.02 };
    const result = await runEpisode(spec, { backend: slow, score: async () => failed, memory: episodeMemoryOf(method, { notes: [] }) });
    expect(result.notes?.map((n) => n.text)).toEqual(["ok"]);
  });
});

describe("SQL rows as hooks get them", () => {
  it("are JSON-safe: 64-bit integers past 2^53 as strings, smaller ones as numbers, blobs as hex", () => {
    const rows = jsonRows([[2n ** 63n - 1n, 42n, 1.5, "a", null, Uint8Array.from([1, 255])]]);
    expect(JSON.stringify(rows)).toBe('[["9223372036854775807",42,1.5,"a",null,"x\'01ff\'"]]');
  });
});
