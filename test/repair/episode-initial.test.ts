// Repair stage, attempt 0 (METHOD.md §6.6, §6.5): the episode reads only the narrow InitialAttempt
// (SQL, cached label, token accounting) — not an initial-cache record — re-scores it and checks the
// label under denotation_confirmed.
import { describe, expect, it } from "vitest";
import type { Example } from "../../lib/data/types.ts";
import type { InitialRecord } from "../../lib/experiment/initial-cache.ts";
import type { ChatBackend } from "../../lib/llm/types.ts";
import type { Verdict } from "../../lib/oracle/oracle.ts";
import { InitialLabelMismatchError, runEpisode, type EpisodeSpec, type InitialAttempt } from "../../lib/repair/episode.ts";
import { getMethod } from "../../lib/methods/index.ts";

const example: Example = { id: "7", sourceIndex: 7, dbId: "concert_singer", question: "How many singers are there?", evidence: "", goldSql: "SELECT count(*) FROM singer", difficulty: "easy" };
const noModel: ChatBackend = {
  identity: { kind: "test-none", model: "none", modelHash: "none", params: {} },
  generate: () => Promise.reject(new Error("zeroshot must not call the model")),
} as unknown as ChatBackend;
const correct: Verdict = { status: "CORRECT", dbError: null, predictedExecOk: true, oracleCorrect: true, dbExecutions: 1, predictedRows: [[6n]] };

function spec(initial: InitialAttempt): EpisodeSpec {
  return { dataset: "spider", method: getMethod("zeroshot"), streamSeed: 0, streamPosition: 0, example, schema: "", initial, feedbackRegime: "denotation_confirmed", maxRepairSteps: 7, maxOutputTokens: 64 };
}

describe("attempt 0 from an InitialAttempt", () => {
  it("scores the cached SQL and accounts its cached tokens and prompt hash", async () => {
    const scored: string[] = [];
    const initial: InitialAttempt = { initial_sql: "SELECT count(*) FROM singer", execution_status: "CORRECT", prompt_hash: "abc", prompt_tokens: 120, output_tokens: 9 };
    const result = await runEpisode(spec(initial), { backend: noModel, score: async (_e, sql) => (scored.push(sql), correct) });
    expect(scored).toEqual(["SELECT count(*) FROM singer"]);
    expect(result.attempts.map((a) => [a.sql, a.status, a.confirmedCorrect])).toEqual([["SELECT count(*) FROM singer", "CORRECT", true]]);
    expect(result.calls).toEqual([{ kind: "initial_cache", promptTokens: 120, outputTokens: 9, truncatedPromptTokens: 0, cached: true, promptHash: "abc", failure: null, outputTruncated: false }]);
  });

  it("counts unknown token counts as 0 and refuses a stale cached label", async () => {
    const imported: InitialAttempt = { initial_sql: "SELECT 1", execution_status: "CORRECT", prompt_hash: null, prompt_tokens: null, output_tokens: null };
    const result = await runEpisode(spec(imported), { backend: noModel, score: async () => correct });
    expect([result.calls[0].promptTokens, result.calls[0].outputTokens, result.calls[0].promptHash]).toEqual([0, 0, null]);
    const stale: InitialAttempt = { ...imported, execution_status: "EXECUTION_ERROR" };
    await expect(runEpisode(spec(stale), { backend: noModel, score: async () => correct })).rejects.toThrow(InitialLabelMismatchError);
  });

  it("an initial-cache record is an InitialAttempt as it is (the caller passes it unchanged)", () => {
    const record: InitialRecord = { query_id: "7", db_id: "concert_singer", prompt_hash: null, initial_sql: "SELECT 1", prompt_tokens: null, output_tokens: null, execution_status: "CORRECT", oracle_correct: true, db_error: null };
    const asAttempt: InitialAttempt = record; // compile-time check: tsc fails here if the two drift apart
    expect(spec(asAttempt).initial).toBe(record);
  });
});
