/**
 * Methods, hook factories (issue 36 §1): every hook the kit ships — MERIT's memory, Reflexion's
 * reflection, a ranker inside MERIT's memory — is built by a factory from JSON arguments, and the
 * built hook carries `{ name, args }` with every argument (defaults filled in, keys sorted), so a
 * manifest, `merit methods` and a run's identity say exactly what ran. An argument the factory lacks,
 * or one of another JSON type than its default, is refused in one line naming the factory and the
 * argument (and the nearest known one).
 * @module
 */
import { MeritError, nearestName } from "../errors.ts";
import { canonicalJson, type JsonValue } from "../hash.ts";

/** JSON arguments of one factory. */
export type FactoryArgs = Record<string, JsonValue>;

/**
 * Builds one thing from its args. `defaults` lists every accepted arg with its default value (and
 * so its JSON type); `build` gets the defaults overlaid with the given args and checks their values.
 */
export interface Factory<T> {
  /** One line for `merit methods`. */
  summary: string;
  defaults: FactoryArgs;
  build(args: FactoryArgs): T;
}

/**
 * `given` laid over `defaults`, every key checked (`what`: the factory as errors name it, e.g.
 * `memory "merit_memory"`): canonical JSON with sorted keys.
 */
export function resolveArgs(what: string, defaults: FactoryArgs, given: Readonly<Record<string, unknown>> = {}): FactoryArgs {
  const known = Object.keys(defaults);
  for (const [key, value] of Object.entries(given)) {
    if (!Object.hasOwn(defaults, key)) {
      const near = nearestName(key, known);
      throw new MeritError(`${what} has no arg "${key}"${near ? ` (did you mean "${near}"?)` : ""}; its args: ${known.join(", ") || "none"}`);
    }
    if (jsonType(value as JsonValue) !== jsonType(defaults[key])) {
      throw new MeritError(`${what}: arg "${key}" must be a ${jsonType(defaults[key])}, got ${canonicalJson(value as JsonValue)}`);
    }
  }
  return JSON.parse(canonicalJson({ ...defaults, ...given } as JsonValue)) as FactoryArgs;
}

function jsonType(value: JsonValue | undefined): string {
  return value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
}

/** An arg that must be one of `allowed`; fails with the factory's name. */
export function oneOf<T extends string>(factory: string, key: string, value: JsonValue, allowed: readonly T[]): T {
  if (typeof value === "string" && (allowed as readonly string[]).includes(value)) return value as T;
  const near = typeof value === "string" ? nearestName(value, allowed) : null;
  throw new MeritError(`${factory}: arg "${key}" must be one of ${allowed.join(", ")}, got ${canonicalJson(value)}${near ? ` (did you mean "${near}"?)` : ""}`);
}

/** A non-negative integer arg. */
export function count(factory: string, key: string, value: JsonValue): number {
  if (typeof value === "number" && Number.isInteger(value) && value >= 0) return value;
  throw new MeritError(`${factory}: arg "${key}" must be a non-negative integer, got ${canonicalJson(value)}`);
}

/** A finite non-negative number arg. */
export function nonNegative(factory: string, key: string, value: JsonValue): number {
  if (typeof value === "number" && Number.isFinite(value) && value >= 0) return value;
  throw new MeritError(`${factory}: arg "${key}" must be a non-negative number, got ${canonicalJson(value)}`);
}
