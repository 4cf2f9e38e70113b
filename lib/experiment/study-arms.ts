/**
 * Experiment runs, a study's arms (issue 29 §5, issue 36 §1): each arm is registered as a method of its
 * own name — its method's definition built again with the arm's args as overrides of its factory's
 * args (the one way a method is varied) — under the conditions it sets (feedback, noise, K); two arms
 * that are the same run are refused.
 * @module
 */
import { MeritError } from "../errors.ts";
import { canonicalJson, type JsonValue } from "../hash.ts";
import { DEFAULT_FEEDBACK_NOISE, getFeedback } from "../methods/feedback.ts";
import { getMethod, isMethodName, methodDefinition, registerMethod, withArgs } from "../methods/index.ts";
import { armOverrides, type Arm, type Study } from "./study-schema.ts";

/** The config fields an arm sets (its conditions), for the runs of `method` ({} for a method that is not an arm). */
export function armConditions(study: Study, method: string): { feedback_regime?: string; feedback_noise?: number; max_repair_steps?: number } {
  const arm = study.arms[method];
  if (arm === undefined) return {};
  return {
    ...(arm.feedback !== undefined ? { feedback_regime: arm.feedback } : {}),
    ...(arm.feedback_noise !== undefined ? { feedback_noise: arm.feedback_noise } : {}),
    ...(arm.max_repair_steps !== undefined ? { max_repair_steps: arm.max_repair_steps } : {}),
  };
}

/** The config fields the study's arms vary (what `merit report --conditions` lets differ). */
export function studyConditions(study: Study): ("feedback_regime" | "feedback_noise" | "max_repair_steps")[] {
  const fields = new Set(study.methods.flatMap((m) => Object.keys(armConditions(study, m))));
  return (["feedback_regime", "feedback_noise", "max_repair_steps"] as const).filter((f) => fields.has(f));
}

/** Arms registered in this process, by name: where each came from and its definition (registered twice from one place: once). */
const REGISTERED_ARMS = new Map<string, string>();

/**
 * Registers each arm of the study as a method (after the study's plugins are loaded): the arm's
 * method's definition with the arm's args laid over its factory's, under the arm's name. An arg the
 * factory does not have, or a name already taken, fails with one line.
 */
export function registerStudyArms(study: Study): void {
  for (const [name, arm] of Object.entries(study.arms)) registerArm(name, arm, `study ${study.name}`, armConditions(study, name));
}

/**
 * Registers one arm as a method named `name`: `arm.method`'s definition built again with `arm.args`
 * as overrides of its factory's args; `conditions` (the config fields its runs set) go into its description. `origin` names where
 * the arm is defined, in errors ("study NAME", "merit grid --arm"). Registering the same arm from the
 * same origin again is a no-op; any other clash with a registered name fails with one line.
 */
export function registerArm(name: string, arm: Arm, origin: string, conditions: Record<string, string | number> = {}): void {
  const key = canonicalJson({ origin, arm } as unknown as JsonValue);
  if (REGISTERED_ARMS.get(name) === key) return;
  if (isMethodName(name)) throw new MeritError(`${origin}: arm "${name}" has the name of a registered method; name the arm otherwise`);
  let def = methodDefinition(arm.method);
  const overrides = armOverrides(arm.args);
  if (Object.keys(overrides).length > 0) {
    try {
      def = withArgs(getMethod(arm.method), overrides).definition; // the one way a method is varied (lib/methods/method.ts)
    } catch (error) {
      if (error instanceof MeritError) throw new MeritError(`${origin}: arm "${name}": ${error.message}`);
      throw error;
    }
  }
  const changed = [...Object.entries(conditions).map(([k, v]) => `${k} ${v}`), ...Object.entries(overrides).map(([k, v]) => `${k}=${canonicalJson(v as JsonValue)}`)];
  try {
    registerMethod({ ...def, name, armOf: arm.method, description: arm.description ?? `${def.description} [arm of ${arm.method}: ${changed.join(", ")}]` });
  } catch (error) {
    if (error instanceof MeritError) throw new MeritError(`${origin}: arm "${name}": ${error.message}`);
    throw error;
  }
  REGISTERED_ARMS.set(name, key);
}

/** The kit's regimes that do not read `feedback_noise` (a plugin's regime may: its noise is a change). */
const NOISELESS_REGIMES = ["denotation_confirmed", "dbms_only", "llm_judge"];

/** What a run of `method` in the study is: its hooks with every factory arg, its feedback regime (and noise, where the regime reads it) and K. */
function runIdentity(study: Study, method: string, conditions: ReturnType<typeof armConditions>): string {
  const regime = conditions.feedback_regime ?? study.feedback ?? "denotation_confirmed";
  const noise = NOISELESS_REGIMES.includes(regime) ? null : (conditions.feedback_noise ?? study.feedback_noise ?? DEFAULT_FEEDBACK_NOISE);
  return canonicalJson({ method: getMethod(method).record, regime, noise, k: conditions.max_repair_steps ?? study.max_repair_steps } as unknown as JsonValue);
}

/**
 * The study's arms measure something (after they are registered; `merit study plan` and `run` call
 * it before any compute): each arm's feedback regime exists, each arm differs from the method it runs
 * (a change equal to the method's own value, or a noise its regime does not read, is none), and no
 * two arms are the same run. One line naming the arm and the fix.
 */
export function checkStudyArms(study: Study): void {
  if (study.feedback !== undefined) {
    try {
      getFeedback(study.feedback);
    } catch (error) {
      throw new MeritError(`study ${study.name}: feedback: ${(error as Error).message}`);
    }
  }
  const seen = new Map<string, string>();
  for (const [name, arm] of Object.entries(study.arms)) {
    const conditions = armConditions(study, name);
    const regime = conditions.feedback_regime ?? study.feedback ?? "denotation_confirmed";
    try {
      getFeedback(regime);
    } catch (error) {
      throw new MeritError(`study ${study.name}: arm "${name}": ${(error as Error).message}`);
    }
    if (arm.feedback_noise !== undefined && NOISELESS_REGIMES.includes(regime)) {
      throw new MeritError(`study ${study.name}: arm "${name}" sets feedback_noise, which feedback regime ${regime} does not read (only noisy_oracle and plugins' regimes do); drop it or set feedback: "noisy_oracle"`);
    }
    const identity = runIdentity(study, name, conditions);
    if (identity === runIdentity(study, arm.method, {})) {
      throw new MeritError(`study ${study.name}: arm "${name}" runs exactly what "${arm.method}" runs (each change it gives is already "${arm.method}"'s in this study); change something, or list "${arm.method}" in methods instead`);
    }
    const twin = seen.get(identity);
    if (twin !== undefined) throw new MeritError(`study ${study.name}: arms "${twin}" and "${name}" are the same run (same method, args, feedback and K); their Δ would be 0 by construction: drop one`);
    seen.set(identity, name);
  }
}

