/**
 * Experiment runs, the per-episode call bounds a plan replays (issue 36 §1): the kit's own step
 * (Reflexion's `reflect()`), whose calls the plan replays with the repairs, apart from a method's own
 * declared calls, counted in full.
 * @module
 */
import { callMost, episodeCallBound, isKitHook, type MethodHooks, type MethodSpec, type StepHook } from "../methods/index.ts";

/** The method's step when it is the kit's own (Reflexion's `reflect()`), whose calls the plan replays like repairs; undefined otherwise. */
export function kitStep(method: Pick<MethodSpec, "hooks">): StepHook | undefined {
  const step = method.hooks.step;
  return step !== undefined && isKitHook(step) ? step : undefined;
}

/** The method's hooks with the kit step's call kinds left out (the hooks' own declared calls, counted apart from the replayed ones). */
export function ownHooks(method: Pick<MethodSpec, "hooks">): MethodHooks {
  const kinds = new Set(Object.keys(kitStep(method)?.calls ?? {}));
  return { ...method.hooks, calls: Object.fromEntries(Object.entries(method.hooks.calls ?? {}).filter(([kind]) => !kinds.has(kind))) };
}

/**
 * The most calls of one episode whose initial attempt is not terminal that the plan replays: K
 * repairs, and the kit step's calls (Reflexion: K + 1 reflections, 2K + 1 in all); none for a
 * method that does not repair or when K = 0.
 */
export function kitBound(method: Pick<MethodSpec, "repairs" | "hooks">, k: number): number {
  const repairs = episodeCallBound(method, k);
  if (repairs === 0) return 0;
  return repairs + Object.values(kitStep(method)?.calls ?? {}).reduce((n, d) => n + callMost(d, k), 0);
}

