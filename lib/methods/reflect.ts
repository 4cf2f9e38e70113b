/**
 * Methods, Reflexion's reflection as a step hook (METHOD.md §6.2; issue 36 §1): `reflect()` builds the
 * step that, after the initial failure and after every failed repair (the last one too: 2K + 1 calls
 * in an episode that never succeeds, as the reference does), asks the model for a verbal reflection on
 * the attempts so far and adds it to this episode's later repair prompts. It renders the kit's
 * reflection template (prompts/reflection.txt, or the run's `prompts_dir`) from what the agent was
 * shown, and calls the model under the kind `reflection`, which it declares.
 * @module
 */
import { extractReflection, reflectionPrompt } from "../prompts.ts";
import { markKitHook, type StepHook } from "./hooks.ts";

/** The name a manifest records the reflection step under. */
export const REFLECT = "reflect";

/** Reflexion's step: one reflection after every failed attempt, kind `reflection`, at most K + 1 per episode. */
export function reflect(): StepHook {
  return markKitHook(Object.freeze({
    name: REFLECT,
    args: {},
    afterLast: true,
    calls: { reflection: { most: { per_repair: 1, plus: 1 }, per: "repair_episode" as const } },
    async afterFailure(state, model) {
      const last = state.shown[state.shown.length - 1];
      const prompt = reflectionPrompt(
        { dataset: state.dataset, schema: state.schema, question: state.question, evidence: state.evidence, attempts: state.shown.map((a) => ({ sql: a.sql, status: a.status, dbError: a.dbError })), currentErrorType: last.errorType ?? "Unknown" },
        state.promptsDir,
      );
      return extractReflection(await model.generate("reflection", prompt));
    },
  } satisfies StepHook));
}
