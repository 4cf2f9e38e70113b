/**
 * Methods, a method built from a factory of settings (issue 37 §1): a peer's top-k, caps, windows
 * and list sizes are what its paper ablates, so each is an argument of the function that builds the
 * method's definition, with the original's value as its default. The registered definition is the
 * factory's at the defaults; `withArgs` builds it again with some settings changed (a study arm's
 * `args`, lib/experiment/study.ts — the one way a method's args are overridden), refusing an unknown or out-of-range one in one line. The
 * settings in force are recorded in the manifest (`method_parts.settings`), as a registry records a
 * factory's arguments.
 * @module
 */
import { MeritError, nearestName } from "../errors.ts";
import type { MethodDefinition } from "./method.ts";

/** One setting: an integer in `min..max`, the original's value as `default`, and what it means. */
export interface SettingSpec {
  default: number;
  min: number;
  max: number;
  /** One line: what it bounds, and where the original sets it. */
  doc: string;
}

/** The settings of one method, by name (lower_snake_case). */
export type SettingSpecs = Readonly<Record<string, SettingSpec>>;

/** Settings in force, by name. */
export type SettingValues = Readonly<Record<string, number>>;

/** The defaults of `specs`. */
export function defaultSettings(specs: SettingSpecs): SettingValues {
  return Object.fromEntries(Object.entries(specs).map(([k, s]) => [k, s.default]));
}

/** `base` with `overrides` laid over it; an unknown name, a non-integer or a value out of range fails with one line naming the method. */
export function resolveSettings(method: string, specs: SettingSpecs, base: SettingValues, overrides: Readonly<Record<string, unknown>>): SettingValues {
  const known = Object.keys(specs);
  const out: Record<string, number> = { ...base };
  for (const [name, value] of Object.entries(overrides)) {
    const spec = specs[name];
    if (spec === undefined) {
      const near = nearestName(name, known);
      throw new MeritError(`method "${method}" has no setting "${name}"${near ? ` (did you mean "${near}"?)` : ""}; its settings: ${known.length ? known.join(", ") : "none"}`);
    }
    if (typeof value !== "number" || !Number.isInteger(value) || value < spec.min || value > spec.max) {
      throw new MeritError(`method "${method}": setting ${name} must be an integer in ${spec.min}..${spec.max} (${spec.doc}), got ${JSON.stringify(value)}`);
    }
    out[name] = value;
  }
  return out;
}

/**
 * The definition `build` gives at the defaults of `specs`, carrying its settings and a `withArgs`
 * that builds it again with some changed. `build` must close over the values it is given (a fresh
 * hooks object per call), so two arms with different settings share no state.
 */
export function fromFactory(name: string, specs: SettingSpecs, build: (settings: SettingValues) => MethodDefinition): MethodDefinition {
  for (const [k, s] of Object.entries(specs)) {
    if (!/^[a-z][a-z0-9_]{0,39}$/.test(k)) throw new MeritError(`method "${name}": setting name "${k}" must be lower_snake_case`);
    if (!Number.isInteger(s.default) || s.default < s.min || s.default > s.max) throw new MeritError(`method "${name}": setting ${k}'s default ${s.default} is not an integer in ${s.min}..${s.max}`);
  }
  const make = (values: SettingValues): MethodDefinition => ({
    ...build(values),
    settings: values,
    settingSpecs: specs,
    withArgs: (overrides) => make(resolveSettings(name, specs, values, overrides)),
  });
  return make(defaultSettings(specs));
}
