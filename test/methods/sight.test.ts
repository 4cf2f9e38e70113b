// What a method may see, enforced (issue 36 §3; lib/methods/sight.ts): a spy method's hooks record
// every attempt view they receive under each feedback regime. A method declaring no ground truth
// (sight "agent", the default) never receives the oracle's verdict — no view has a field for it — and
// reads only what the regime gave: under the paper's regime exactly the statuses the agent was shown,
// under dbms_only EXECUTED (never a mismatch) for SQL that ran, under llm_judge and noisy_oracle what
// the agent was told even where the oracle disagrees. A method declaring sight "oracle" gets the
// oracle's verdict beside it. ReasoningBank's judge sees no status.
import { describe, expect, it } from "vitest";
import type { Example } from "../../lib/data/types.ts";
import type { ChatBackend, GenerateRequest } from "../../lib/llm/types.ts";
import { buildMethod } from "../../lib/methods/method.ts";
import { getMethod, methodDefinition, registerMethod, sourcesTable, type AttemptView, type EpisodeView } from "../../lib/methods/index.ts";
import { judgePrompt as rbJudgePrompt } from "../../lib/methods/peers/reasoning-bank.ts";
import { methodSource } from "../../lib/analysis/table-peers.ts";
import type { Verdict } from "../../lib/oracle/oracle.ts";
import { runEpisode, type EpisodeResult } from "../../lib/repair/episode.ts";
import type { Sight } from "../../lib/methods/sight.ts";

const example: Example = { id: "q7", sourceIndex: 0, dbId: "concert_singer", question: "How many singers are there?", evidence: "", goldSql: "SELECT count(*) FROM singer", difficulty: "easy" };

// The SQL each step writes, and what the oracle says of it: an error, a wrong answer, a right one.
const VERDICTS: Record<string, Verdict> = {
  "SELECT x FROM singer": { status: "EXECUTION_ERROR", dbError: "no such column: x", predictedExecOk: false, oracleCorrect: false, dbExecutions: 1, predictedRows: null },
  "SELECT 5": { status: "DENOTATION_MISMATCH", dbError: null, predictedExecOk: true, oracleCorrect: false, dbExecutions: 1, predictedRows: [[5n]] },
  "SELECT count(*) FROM singer": { status: "CORRECT", dbError: null, predictedExecOk: true, oracleCorrect: true, dbExecutions: 1, predictedRows: [[6n]] },
};
const REPAIRS = ["SELECT 5", "SELECT count(*) FROM singer"];

/** Repairs in order; a judge (llm_judge) that calls everything that ran wrong but the first executed answer "correct". */
function backend(): ChatBackend {
  let repair = 0;
  return {
    identity: { kind: "test-spy", model: "spy", modelHash: "none", params: {} },
    async generate(request: GenerateRequest) {
      const judge = request.prompt.startsWith("PROMPT_VERSION: merit-judge-v1");
      const text = judge ? (request.prompt.includes("\nSELECT 5\n") ? "<verdict>incorrect</verdict>" : "<verdict>correct</verdict>") : `<answer>${REPAIRS[Math.min(repair++, REPAIRS.length - 1)]}</answer>`;
      return { text, promptTokens: 1, outputTokens: 1, truncatedPromptTokens: 0, cached: false };
    },
    async close() {},
  };
}

/** Runs one episode of a spy method with `sight` under `regime`; every view its hooks received. */
async function spy(sight: Sight | undefined, regime: string, noise?: number): Promise<{ views: AttemptView[]; episodes: EpisodeView[]; result: EpisodeResult }> {
  const views: AttemptView[] = [];
  const episodes: EpisodeView[] = [];
  const method = buildMethod({
    name: `sight_spy_${sight ?? "default"}`,
    description: "test",
    ...(sight ? { sight } : {}),
    hooks: {
      step: { name: "spy", afterFailure: (state) => (views.push(...state.attempts), null) },
      memory: {
        name: "spy",
        heading: "SPY",
        write: (episode) => (views.push(...episode.attempts), episodes.push(episode), []),
        retrieve: (request) => (views.push(...request.attempts), []),
      },
    },
  });
  const result = await runEpisode(
    { dataset: "spider", method, streamSeed: 0, streamPosition: 3, example, schema: "CREATE TABLE singer(x)", initial: { initial_sql: "SELECT x FROM singer", execution_status: "EXECUTION_ERROR", prompt_hash: null, prompt_tokens: null, output_tokens: null }, feedbackRegime: regime, ...(noise === undefined ? {} : { feedbackNoise: noise }), maxRepairSteps: 3, maxOutputTokens: 64 },
    { backend: backend(), score: async (_e, sql) => VERDICTS[sql] },
  );
  return { views, episodes, result };
}

const REGIMES: [string, number | undefined][] = [["denotation_confirmed", undefined], ["dbms_only", undefined], ["llm_judge", undefined], ["noisy_oracle", 0.5]];

describe("a method that declares no ground truth", () => {
  it.each(REGIMES)("never receives the oracle's verdict under %s", async (regime, noise) => {
    const { views, episodes } = await spy(undefined, regime, noise);
    expect(views.length).toBeGreaterThan(0);
    for (const v of views) {
      expect(Object.keys(v).sort()).toEqual(["dbError", "errorType", "executed", "rowsPreview", "sql", "status"]);
      expect(Object.isFrozen(v)).toBe(true);
    }
    expect(episodes).toHaveLength(1);
  });

  it("under the paper's regime receives exactly what the agent was told: the statuses of its prompts", async () => {
    const { views, result } = await spy(undefined, "denotation_confirmed");
    const told = result.attempts.map((a) => a.status);
    expect(told).toEqual(["EXECUTION_ERROR", "DENOTATION_MISMATCH", "CORRECT"]);
    for (const v of views) expect(v.status).toBe(told[result.attempts.findIndex((a) => a.sql === v.sql)]);
    expect(views.at(-1)).toEqual({ sql: "SELECT count(*) FROM singer", status: "CORRECT", dbError: null, executed: true, errorType: null, rowsPreview: "[6]" });
  });

  it("under dbms_only reads EXECUTED for SQL that ran, never a mismatch; the repair prompt keeps the paper's text", async () => {
    const { views, result } = await spy(undefined, "dbms_only");
    // The first repair executes: the loop stops there (dbms_only accepts what ran).
    expect(result.attempts.map((a) => [a.status, a.accepted])).toEqual([["EXECUTION_ERROR", false], ["DENOTATION_MISMATCH", true]]);
    expect([...new Set(views.map((v) => v.status))].sort()).toEqual(["EXECUTED", "EXECUTION_ERROR"]);
    expect(views.find((v) => v.sql === "SELECT 5")).toMatchObject({ status: "EXECUTED", executed: true, rowsPreview: "[5]" });
  });

  it("under llm_judge and noisy_oracle reads what the agent was told, where the oracle disagrees too", async () => {
    const judged = await spy(undefined, "llm_judge");
    expect(judged.result.attempts.map((a) => [a.status, a.confirmedCorrect])).toEqual([["EXECUTION_ERROR", false], ["DENOTATION_MISMATCH", false], ["CORRECT", true]]);
    for (const v of judged.views) expect(v.status).toBe(judged.result.attempts.find((a) => a.sql === v.sql)!.status);
    // Noise 1 flips every executed verdict: the wrong answer is told CORRECT, and that is what the hooks read.
    const noisy = await spy(undefined, "noisy_oracle", 1);
    expect(noisy.result.attempts.map((a) => [a.status, a.confirmedCorrect])).toEqual([["EXECUTION_ERROR", false], ["CORRECT", false]]);
    expect(noisy.views.find((v) => v.sql === "SELECT 5")!.status).toBe("CORRECT");
    expect(noisy.episodes[0].success).toBe(true);
  });
});

describe("a method that declares sight: \"oracle\"", () => {
  it.each(REGIMES)("receives the oracle's verdict of every attempt under %s", async (regime, noise) => {
    const { views, result } = await spy("oracle", regime, noise);
    for (const v of views) expect(v.oracleCorrect).toBe(result.attempts.find((a) => a.sql === v.sql)!.confirmedCorrect);
  });

  it("is refused in one line for another sight", () => {
    expect(() => buildMethod({ name: "bad_sight", description: "t", sight: "gold" as Sight })).toThrow(/method "bad_sight": sight must be "agent" .* or "oracle"/);
  });
});

describe("the declaration is what merit methods and the peers table print", () => {
  it("reads each peer's sight from the built method", () => {
    expect(getMethod("reasoning_bank").sight).toBe("agent");
    expect(getMethod("reasoning_bank_oracle").sight).toBe("oracle");
    expect(methodSource("reasoning_bank")).toEqual({ citation: methodDefinition("reasoning_bank").citation, groundTruth: false });
    expect(methodSource("awm").groundTruth).toBe(true);
    expect(sourcesTable(["reasoning_bank", "reasoning_bank_oracle"]).slice(2)).toEqual([
      `| \`reasoning_bank\` | ${methodDefinition("reasoning_bank").citation} | agent's view only |`,
      `| \`reasoning_bank_oracle\` | ${methodDefinition("reasoning_bank_oracle").citation} | oracle verdict (ground truth) |`,
    ]);
  });

  it("reads the sight of a method whose only hook is a propose hook (self-consistency's shape)", () => {
    for (const sight of ["agent", "oracle"] as const) {
      const name = `propose_only_${sight}`;
      registerMethod({ name, description: "t", sight, hooks: { propose: { name: "greedy", propose: (request) => request.greedy } } });
      expect(methodSource(name)).toEqual({ citation: null, groundTruth: sight === "oracle" });
      expect(sourcesTable([name]).slice(2)).toEqual([`| \`${name}\` |  | ${sight === "oracle" ? "oracle verdict (ground truth)" : "agent's view only"} |`]);
    }
  });
});

describe("ReasoningBank's judge", () => {
  const episode = (last: AttemptView): EpisodeView => ({ dataset: "spider", queryId: "q", dbId: "concert_singer", question: "How many singers are there?", evidence: "", schema: "CREATE TABLE singer(x)", streamPosition: 2, attempts: [last], success: true, reflections: [], retrieved: [] });
  it("sees the question, the schema, the SQL and its result rows, never a status; it reasons before its verdict", () => {
    const prompt = rbJudgePrompt(episode({ sql: "SELECT count(*) FROM singer", status: "CORRECT", dbError: null, executed: true, errorType: null, rowsPreview: "[6]" }));
    expect(prompt).toContain("How many singers are there?");
    expect(prompt).toContain("CREATE TABLE singer(x)");
    expect(prompt).toContain("SELECT count(*) FROM singer");
    expect(prompt).toContain("[6]");
    expect(prompt).not.toMatch(/CORRECT|MISMATCH/);
    expect(prompt).not.toMatch(/status|outcome|reported/i);
    expect(prompt.indexOf("<reasoning>")).toBeLessThan(prompt.indexOf("<verdict>"));
    const failed = rbJudgePrompt(episode({ sql: "SELECT x FROM singer", status: "EXECUTION_ERROR", dbError: "no such column: x", executed: false, errorType: "Schema Linking", rowsPreview: "" }));
    expect(failed).toContain("no such column: x");
    expect(failed).not.toMatch(/EXECUTION_ERROR|Schema Linking/);
  });
});
