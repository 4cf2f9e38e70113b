// A memory hook's write is given the eligible view of its own episode (lib/methods/hooks.ts,
// lib/repair/episode.ts): notes written at strictly earlier stream positions and not by the current
// query — the view retrieve saw — never notes at or after its position. A memory that revises its
// earlier state (a cheatsheet, a workflow set) reads it there, and stays causal.
import { describe, expect, it } from "vitest";
import type { Example } from "../../lib/data/types.ts";
import type { ChatBackend } from "../../lib/llm/types.ts";
import { buildMethod } from "../../lib/methods/method.ts";
import { stampNotes, type NoteView } from "../../lib/methods/hooks.ts";
import type { Verdict } from "../../lib/oracle/oracle.ts";
import { runEpisode } from "../../lib/repair/episode.ts";
import { episodeMemoryOf } from "../../lib/repair/episode-memory.ts";

const example: Example = { id: "cur", sourceIndex: 0, dbId: "concert_singer", question: "How many singers are there?", evidence: "", goldSql: "SELECT count(*) FROM singer", difficulty: "easy" };
const failed: Verdict = { status: "EXECUTION_ERROR", dbError: "no such column: x", predictedExecOk: false, oracleCorrect: false, dbExecutions: 1, predictedRows: null };
const backend = {
  identity: { kind: "test-capture", model: "capture", modelHash: "none", params: {} },
  generate: async () => ({ text: "<answer>SELECT x FROM singer</answer>", promptTokens: 1, outputTokens: 1, truncatedPromptTokens: 0, cached: false }),
} as unknown as ChatBackend;

/** One stamped note from `queryId` at `position`. */
const note = (queryId: string, position: number): NoteView =>
  Object.freeze({ ...stampNotes("probe", { queryId, dbId: "db", streamPosition: position, episodeId: `ep-${queryId}-${position}` }, [{ kind: "lesson", text: `from ${queryId}@${position}` }])[0], vector: null });

describe("memory.write's view", () => {
  it("holds the notes of strictly earlier positions from other queries — the view retrieve saw — and nothing at or after its position", async () => {
    const seen: { write: string[][]; retrieve: string[][] } = { write: [], retrieve: [] };
    const method = buildMethod({
      name: "write_view_probe",
      description: "test",
      hooks: {
        memory: {
          name: "probe",
          heading: "PROBE",
          write(_episode, _model, memory) {
            seen.write.push(memory.map((n) => n.text));
            expect(Object.isFrozen(memory)).toBe(true);
            return [];
          },
          retrieve(_request, memory) {
            seen.retrieve.push(memory.map((n) => n.text));
            return [];
          },
        },
      },
    });
    const notes = [note("q0", 0), note("q1", 4), note("cur", 3), note("q5", 5), note("q6", 6), note("q2", 2)];
    await runEpisode(
      { dataset: "spider", method, streamSeed: 0, streamPosition: 5, example, schema: "", initial: { initial_sql: "SELECT x FROM singer", execution_status: "EXECUTION_ERROR", prompt_hash: null, prompt_tokens: null, output_tokens: null }, feedbackRegime: "denotation_confirmed", maxRepairSteps: 2, maxOutputTokens: 64 },
      { backend, score: async () => failed, memory: episodeMemoryOf(method, { notes }) },
    );
    expect(seen.write).toEqual([["from q0@0", "from q1@4", "from q2@2"]]);
    expect(seen.retrieve).toEqual([seen.write[0], seen.write[0]]);
  });

  it("is given to write for an episode with no repairs too (an initially correct query), empty at position 0", async () => {
    const views: number[] = [];
    const method = buildMethod({
      name: "write_view_probe_0",
      description: "test",
      hooks: { memory: { name: "probe", heading: "PROBE", write: (_e, _m, memory) => (views.push(memory.length), []), retrieve: () => [] } },
    });
    const correct: Verdict = { ...failed, status: "CORRECT", dbError: null, predictedExecOk: true, oracleCorrect: true };
    const spec = { dataset: "spider" as const, method, streamSeed: 0, example, schema: "", initial: { initial_sql: "SELECT count(*) FROM singer", execution_status: "CORRECT" as const, prompt_hash: null, prompt_tokens: null, output_tokens: null }, feedbackRegime: "denotation_confirmed" as const, maxRepairSteps: 2, maxOutputTokens: 64 };
    await runEpisode({ ...spec, streamPosition: 0 }, { backend, score: async () => correct, memory: episodeMemoryOf(method, { notes: [note("q9", 0), note("q8", 1)] }) });
    await runEpisode({ ...spec, streamPosition: 2 }, { backend, score: async () => correct, memory: episodeMemoryOf(method, { notes: [note("q9", 0), note("q8", 1), note("q7", 2)] }) });
    expect(views).toEqual([0, 2]);
  });
});
