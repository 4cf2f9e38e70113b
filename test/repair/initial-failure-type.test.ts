// Table 5 under feedback that accepts an initial failure (issue 39 item 1): the initial failure's type
// comes from the initial attempt, whatever the feedback said. Before, an accepted failure had no
// error type and the breakdown counted the null as Result Mismatch (87.50 / 12.50 where the truth
// was 75.00 / 25.00).
import { describe, expect, it } from "vitest";
import type { Example } from "../../lib/data/types.ts";
import { runMetrics } from "../../lib/experiment/run-metrics.ts";
import type { ChatBackend } from "../../lib/llm/types.ts";
import { registerFeedback } from "../../lib/methods/feedback.ts";
import { buildMethod } from "../../lib/methods/method.ts";
import { getMethod } from "../../lib/methods/index.ts";
import type { Verdict } from "../../lib/oracle/oracle.ts";
import { runEpisode, type EpisodeSpec } from "../../lib/repair/episode.ts";
import { toTrajectory } from "../../lib/repair/trajectory-record.ts";
import { TrajectorySchema } from "../../lib/repair/trajectory.ts";

registerFeedback("accepts_all_t39", { summary: "test: accepts every attempt", usesOracle: false, accept: () => true });

const backend = { identity: { kind: "t", model: "m", modelHash: "h", params: {} }, generate: async () => ({ text: "<answer>SELECT 1</answer>", promptTokens: 1, outputTokens: 1, truncatedPromptTokens: 0, cached: false }), close: async () => {} } as unknown as ChatBackend;
const example = (id: string): Example => ({ id, sourceIndex: Number(id), dbId: "concert_singer", question: `q${id}`, evidence: "", goldSql: "SELECT count(*) FROM singer", difficulty: "easy" });
const VERDICTS: Record<string, Verdict> = {
  "SELECT x FROM singer": { status: "EXECUTION_ERROR", dbError: "no such column: x", predictedExecOk: false, oracleCorrect: false, dbExecutions: 1, predictedRows: null },
  "SELECT name FROM singer JOIN concert": { status: "DENOTATION_MISMATCH", dbError: null, predictedExecOk: true, oracleCorrect: false, dbExecutions: 1, predictedRows: [[1n]] },
  "SELECT count(*) FROM singer": { status: "CORRECT", dbError: null, predictedExecOk: true, oracleCorrect: true, dbExecutions: 1, predictedRows: [[6n]] },
};

async function trajectory(method: ReturnType<typeof getMethod>, regime: string, id: string, sql: string, noise?: number) {
  const spec: EpisodeSpec = { dataset: "spider", method, streamSeed: 0, streamPosition: Number(id), example: example(id), schema: "", initial: { initial_sql: sql, execution_status: VERDICTS[sql].status, prompt_hash: null, prompt_tokens: null, output_tokens: null }, feedbackRegime: regime, ...(noise === undefined ? {} : { feedbackNoise: noise }), maxRepairSteps: 1, maxOutputTokens: 64 };
  const result = await runEpisode(spec, { backend, score: async (_e, s) => VERDICTS[s] ?? VERDICTS["SELECT x FROM singer"] });
  return TrajectorySchema.parse(JSON.parse(JSON.stringify(toTrajectory(spec, result, 0))));
}

describe("the initial failure breakdown under feedback that accepts an initial failure", () => {
  it("types an accepted initial failure from the initial attempt (a regime accepting SQL that did not run)", async () => {
    const iterative = getMethod("iterative");
    const ts = [
      await trajectory(iterative, "accepts_all_t39", "0", "SELECT x FROM singer"),
      await trajectory(iterative, "accepts_all_t39", "1", "SELECT x FROM singer"),
      await trajectory(iterative, "accepts_all_t39", "2", "SELECT name FROM singer JOIN concert"),
      await trajectory(iterative, "accepts_all_t39", "3", "SELECT x FROM singer"),
    ];
    expect(ts.map((t) => [t.statuses[0], t.error_types[0], t.initial_correct])).toEqual(Array.from({ length: 4 }, () => ["CORRECT", null, false]));
    expect(ts.map((t) => t.initial_failure_type)).toEqual(["Schema Linking", "Schema Linking", "Result Mismatch", "Schema Linking"]);
    expect(runMetrics(ts, { maxRepairSteps: 1 }).initial_failure_breakdown).toEqual({ "Result Mismatch": 1, "Schema Linking": 3 });
  });

  it("uses the method's classify hook for it (noisy_oracle accepting an executed wrong answer)", async () => {
    const fine = buildMethod({ name: "fine_t39", description: "t", hooks: { classify: { name: "fine", types: ["Mismatch: join", "Other"], classify: (a) => (a.executed ? "Mismatch: join" : "Other") } } });
    const t = await trajectory(fine, "noisy_oracle", "4", "SELECT name FROM singer JOIN concert", 1);
    expect([t.statuses[0], t.initial_correct, t.initial_failure_type]).toEqual(["CORRECT", false, "Mismatch: join"]);
    expect(runMetrics([t], { maxRepairSteps: 1 }).initial_failure_breakdown).toEqual({ "Mismatch: join": 1 });
  });

  it("leaves every other trajectory as it was (no field)", async () => {
    const t = await trajectory(getMethod("iterative"), "denotation_confirmed", "5", "SELECT x FROM singer");
    expect(t.initial_failure_type).toBeUndefined();
    expect(t.error_types[0]).toBe("Schema Linking");
  });
});
