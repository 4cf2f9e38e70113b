/**
 * Methods, the manifest's record of a method (METHOD.md §11; DESIGN.md §1): `method_parts` holds
 * whether the method repairs and each part as `{ name, args }` with every arg (after the config's
 * retrieval settings were applied), as canonical JSON, so a run directory says exactly which method
 * produced it. `methodFromManifest` rebuilds the method from that record — the parts must be
 * registered (a plugin's parts: load the plugin first).
 * @module
 */
import { InputFileError, MeritError } from "../errors.ts";
import { canonicalJson, type JsonValue } from "../hash.ts";
import { hooksRecord } from "./hooks.ts";
import { buildMethod, type MethodParts, type MethodSpec } from "./method.ts";
import { isMethodName, methodDefinition } from "./registry.ts";
import type { PartRef } from "./parts.ts";

/** The record of a method's parts, canonical JSON values only. */
export function methodRecord(method: MethodSpec): JsonValue {
  return JSON.parse(canonicalJson(method.parts as unknown as JsonValue)) as JsonValue;
}

/** The method a manifest's `method`, `method_description` and `method_parts` describe. */
export function methodFromManifest(manifest: Record<string, unknown>, file = "manifest.json"): MethodSpec {
  const { method: name, method_description: description, method_parts: parts } = manifest;
  if (typeof name !== "string" || typeof description !== "string") throw new InputFileError(file, "lacks method or method_description", "pass the manifest.json of a run directory");
  if (!isParts(parts)) throw new InputFileError(file, "has no method_parts record (written by an older kit?)", "rebuild the method by its name with `merit methods`");
  const { repairs, planner, ranker, writer, steps } = parts;
  // Hooks are functions, not data: they come from the registered method of that name when its hooks
  // are the ones recorded (a built-in peer method, or a loaded plugin's).
  const registered = parts.hooks && isMethodName(name) ? methodDefinition(name).hooks : undefined;
  const hooks = registered && canonicalJson(hooksRecord(registered) as unknown as JsonValue) === canonicalJson(parts.hooks as unknown as JsonValue) ? registered : undefined;
  try {
    return buildMethod({ name, description, repairs, parts: { planner, ranker, writer, steps }, ...(hooks ? { hooks } : {}) }, name);
  } catch (error) {
    if (error instanceof MeritError) throw new InputFileError(file, `records a method that cannot be rebuilt here: ${error.message}`, "load the plugin that registers its parts (--plugin)");
    throw error;
  }
}

function isRef(value: unknown): value is PartRef {
  return typeof value === "object" && value !== null && typeof (value as PartRef).name === "string" && typeof (value as PartRef).args === "object" && (value as PartRef).args !== null;
}

function isParts(value: unknown): value is MethodParts {
  if (typeof value !== "object" || value === null) return false;
  const p = value as Record<string, unknown>;
  return typeof p.repairs === "boolean" && Array.isArray(p.steps) && p.steps.every(isRef) && ["planner", "ranker", "writer"].every((k) => p[k] === undefined || isRef(p[k]));
}
