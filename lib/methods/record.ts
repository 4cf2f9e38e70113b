/**
 * Methods, the manifest's record of a method (METHOD.md §11; DESIGN.md §1): `method_parts` (the
 * on-disk name kept from earlier kits) holds whether the method repairs, its hooks — each built by a
 * factory with its name and every arg (MERIT's memory after the config's retrieval settings were
 * applied), a plugin's with its name, vocabulary and declared calls — its sight and its settings, as
 * canonical JSON, so a run directory says exactly which method produced it. `methodFromManifest`
 * rebuilds the method from that record: a method whose hooks are all the kit's factories' (MERIT's
 * memory, Reflexion's step) is rebuilt from the args; a method with a plugin's hooks (functions) is the
 * registered method of that name, whose record must equal the manifest's.
 * @module
 */
import { InputFileError, MeritError } from "../errors.ts";
import { canonicalJson, type JsonValue } from "../hash.ts";
import type { HooksRecord } from "./hooks.ts";
import type { MethodHooks } from "./hooks.ts";
import { buildMethod, type MethodRecord, type MethodSpec } from "./method.ts";
import { MERIT_MEMORY, meritMemory } from "./merit-memory.ts";
import { REFLECT, reflect } from "./reflect.ts";
import { getMethod, isMethodName } from "./registry.ts";

/** The record of a method, canonical JSON values only. */
export function methodRecord(method: MethodSpec): JsonValue {
  return JSON.parse(canonicalJson(method.record as unknown as JsonValue)) as JsonValue;
}

/** The method a manifest's `method`, `method_description` and `method_parts` describe. */
export function methodFromManifest(manifest: Record<string, unknown>, file = "manifest.json"): MethodSpec {
  const { method: name, method_description: description, method_parts: record } = manifest;
  if (typeof name !== "string" || typeof description !== "string") throw new InputFileError(file, "lacks method or method_description", "pass the manifest.json of a run directory");
  if (!isRecord(record)) throw new InputFileError(file, "has no method_parts record of this kit (written by an older kit?)", "rebuild the method by its name with `merit methods`");
  let hooks: MethodHooks | null;
  try {
    hooks = kitHooksOf(record.hooks);
  } catch (error) {
    if (error instanceof MeritError) throw new InputFileError(file, `records a method that cannot be rebuilt here: ${error.message}`, "load the plugin that registers its ranker (--plugin)");
    throw error;
  }
  if (hooks === null) {
    // Hooks are functions: only the registered method has them, and its record must be the manifest's.
    const registered = isMethodName(name) ? getMethod(name) : null;
    if (registered === null || canonicalJson(methodRecord(registered)) !== canonicalJson(record as unknown as JsonValue)) {
      throw new InputFileError(file, `records method "${name}" with hooks ${registered === null ? "but no method of that name is registered" : "that differ from the registered method's"}`, "load the plugin that registers it (--plugin), in the version the run used");
    }
    return registered;
  }
  try {
    return buildMethod({ name, description, repairs: record.repairs, hooks }, name);
  } catch (error) {
    if (error instanceof MeritError) throw new InputFileError(file, `records a method that cannot be rebuilt here: ${error.message}`, "load the plugin that registers its ranker (--plugin)");
    throw error;
  }
}

/** The kit's hooks a record names (MERIT's memory, Reflexion's step), or null when it names another (a plugin's: functions). */
function kitHooksOf(record: HooksRecord | undefined): MethodHooks | null {
  if (record === undefined) return {};
  if (record.classify !== undefined) return null;
  const hooks: MethodHooks = {};
  if (record.memory !== undefined) {
    if (record.memory.name !== MERIT_MEMORY || !("args" in record.memory)) return null;
    hooks.memory = meritMemory(record.memory.args);
  }
  if (record.step !== undefined) {
    if (record.step.name !== REFLECT) return null;
    hooks.step = reflect();
  }
  const stepKinds = hooks.step ? Object.keys(hooks.step.calls ?? {}) : [];
  if (Object.keys(record.calls).some((k) => !stepKinds.includes(k))) return null;
  return hooks;
}

function isRecord(value: unknown): value is MethodRecord {
  if (typeof value !== "object" || value === null) return false;
  const p = value as Record<string, unknown>;
  // An earlier kit's record names parts (planner, ranker, writer, steps): not this kit's.
  if (["planner", "ranker", "writer", "steps"].some((k) => k in p)) return false;
  return typeof p.repairs === "boolean" && (p.hooks === undefined || (typeof p.hooks === "object" && p.hooks !== null && typeof (p.hooks as { calls?: unknown }).calls === "object"));
}
