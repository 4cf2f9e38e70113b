// Tests Reflexion's reflection as a step hook (lib/methods/reflect.ts; issue 36 §1, METHOD.md §6.2):
// `reflect()` records its name and args, declares its call kind `reflection` (K + 1 per repair
// episode), which buildMethod merges into the method's calls (a kind declared twice is refused);
// an episode of reflexion that never succeeds makes 2K + 1 calls — a reflection after the initial
// failure and after every failed repair, the last one too — rendered from the attempts as the agent
// saw them; a step hook's string is recorded trimmed (an empty one too), null records nothing; and a
// definition in the retired `parts` form is refused in one line.
import { describe, expect, it } from "vitest";
import type { Example } from "../../lib/data/types.ts";
import type { ChatBackend, GenerateRequest } from "../../lib/llm/types.ts";
import { buildMethod, getMethod, hookCallBound, reflect, type MethodDefinition, type StepState } from "../../lib/methods/index.ts";
import { kitBound } from "../../lib/experiment/grid-plan.ts";
import type { Verdict } from "../../lib/oracle/oracle.ts";
import { runEpisode, type EpisodeSpec } from "../../lib/repair/episode.ts";

const example: Example = { id: "r1", sourceIndex: 0, dbId: "concert_singer", question: "How many singers are there?", evidence: "", goldSql: "SELECT count(*) FROM singer", difficulty: "easy" };
const failed: Verdict = { status: "EXECUTION_ERROR", dbError: "no such column: x", predictedExecOk: false, oracleCorrect: false, dbExecutions: 1, predictedRows: null };

/** Answers a reflection prompt with a numbered reflection, any other prompt with a numbered (failing) repair. */
function scripted(): ChatBackend & { requests: GenerateRequest[] } {
  const requests: GenerateRequest[] = [];
  let reflections = 0;
  let repairs = 0;
  return {
    requests,
    identity: { kind: "test-script", model: "s", modelHash: "none", params: {} },
    async generate(request) {
      requests.push(request);
      const text = request.prompt.includes("PROMPT_VERSION: spider-reflection") || request.prompt.includes("debugging reflection") ? `<reflection>  R${++reflections}  </reflection>` : `<answer>SELECT x${++repairs} FROM singer</answer>`;
      return { text, promptTokens: 10, outputTokens: 5, truncatedPromptTokens: 0, cached: false };
    },
    async close() {},
  };
}

const spec = (method = getMethod("reflexion"), k = 2): EpisodeSpec => ({ dataset: "spider", method, streamSeed: 0, streamPosition: 3, example, schema: "", initial: { initial_sql: "SELECT x FROM singer", execution_status: "EXECUTION_ERROR", prompt_hash: null, prompt_tokens: 1, output_tokens: 1 }, feedbackRegime: "denotation_confirmed", maxRepairSteps: k, maxOutputTokens: 64 });

describe("reflect()", () => {
  it("is a step named reflect with no args, run after the last failure too, declaring K + 1 reflections per repair episode", () => {
    const step = reflect();
    expect(step).toMatchObject({ name: "reflect", args: {}, afterLast: true, calls: { reflection: { most: { per_repair: 1, plus: 1 }, per: "repair_episode" } } });
    const reflexion = getMethod("reflexion");
    expect(reflexion.hooks.step?.name).toBe("reflect");
    expect(reflexion.hooks.calls).toEqual({ reflection: { most: { per_repair: 1, plus: 1 }, per: "repair_episode" } });
    expect(hookCallBound(reflexion, 7)).toBe(8);
    expect(hookCallBound(reflexion, 7, { initiallyAccepted: true, finallyAccepted: true })).toBe(0);
    expect(kitBound(reflexion, 7)).toBe(15);
  });

  it("its calls merge into the method's; a kind declared by the step and the calls is refused in one line", () => {
    const both = buildMethod({ name: "reflect_judge_t", description: "x", hooks: { calls: { judge: { most: 1 } }, step: reflect() } });
    expect(Object.keys(both.hooks.calls ?? {}).sort()).toEqual(["judge", "reflection"]);
    expect(both.record.hooks?.calls).toEqual({ judge: { most: 1 }, reflection: { most: { per_repair: 1, plus: 1 }, per: "repair_episode" } });
    expect(() => buildMethod({ name: "reflect_twice_t", description: "x", hooks: { calls: { reflection: { most: 3 } }, step: reflect() } })).toThrow(/^method "reflect_twice_t": call kind "reflection" is declared by its step "reflect" and by its calls; declare it once$/);
  });

  it("a definition with parts is refused in one line naming the method and the fix", () => {
    const old = { name: "old_parts_t", description: "x", parts: { steps: [{ name: "reflect" }] } } as unknown as MethodDefinition;
    expect(() => buildMethod(old)).toThrow(/^method "old_parts_t": methods are hooks now, not parts \(planner, ranker, writer, steps\); give hooks: \{ memory: meritMemory\(.*hooks: \{ step: reflect\(\) \} for Reflexion/);
  });
});

describe("a reflexion episode", () => {
  it("that never succeeds makes 2K + 1 calls: a reflection after the initial failure and after every failed repair, rendered from what the agent saw", async () => {
    const backend = scripted();
    const result = await runEpisode(spec(), { backend, score: async () => failed });
    expect(result.calls.map((c) => c.kind)).toEqual(["initial_cache", "reflection", "repair", "reflection", "repair", "reflection"]);
    expect(result.reflections).toEqual(["R1", "R2", "R3"]);
    // the last reflection reads all three attempts, as shown to the agent
    const last = backend.requests[backend.requests.length - 1].prompt;
    expect(last).toContain("[Attempt 1]\nSQL: SELECT x FROM singer\nOutcome: status=EXECUTION_ERROR; db_error=no such column: x");
    expect(last).toContain("[Attempt 3]\nSQL: SELECT x2 FROM singer");
    // the second repair prompt carries the reflections so far
    const repair2 = backend.requests[3].prompt;
    expect(repair2).toContain("R1");
    expect(repair2).toContain("R2");
  });

  it("at K = 0 makes no reflection", async () => {
    const result = await runEpisode(spec(getMethod("reflexion"), 0), { backend: scripted(), score: async () => failed });
    expect(result.calls.map((c) => c.kind)).toEqual(["initial_cache"]);
    expect(result.reflections).toEqual([]);
  });
});

describe("a step hook's return", () => {
  it("records a string trimmed (an empty one too) and nothing for null; it reads the shown attempts and the prompts folder", async () => {
    const seen: { shown: number; notes: number; promptsDir: string | undefined }[] = [];
    const answers = ["  first  ", "", null];
    const method = buildMethod({
      name: "step_return_t",
      description: "x",
      hooks: {
        step: {
          name: "probe",
          afterLast: true,
          afterFailure: (state: StepState) => {
            seen.push({ shown: state.shown.length, notes: state.notes.length, promptsDir: state.promptsDir });
            expect(state.shown[state.shown.length - 1]).toMatchObject({ status: "EXECUTION_ERROR", dbError: "no such column: x" });
            return answers.shift() ?? null;
          },
        },
      },
    });
    const result = await runEpisode(spec(method), { backend: scripted(), score: async () => failed });
    expect(result.reflections).toEqual(["first", ""]);
    expect(seen).toEqual([
      { shown: 1, notes: 0, promptsDir: undefined },
      { shown: 2, notes: 1, promptsDir: undefined },
      { shown: 3, notes: 2, promptsDir: undefined },
    ]);
  });

  it("without afterLast, the step is not run after the last failed repair", async () => {
    let runs = 0;
    const method = buildMethod({ name: "step_not_last_t", description: "x", hooks: { step: { name: "probe", afterFailure: () => (runs++, "note") } } });
    const result = await runEpisode(spec(method), { backend: scripted(), score: async () => failed });
    expect(runs).toBe(2); // after the initial failure and after repair 1 (K = 2)
    expect(result.reflections).toEqual(["note", "note"]);
  });
});
