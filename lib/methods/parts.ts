/**
 * Methods, the part registries (DESIGN.md §1, METHOD.md §5.5–5.6, §6.2): a method is a named
 * composition of small parts, each recorded as `{ name, args }` and built by a factory registered
 * once per role — a pool planner (which entries are legal, which pools are used), a ranker (how
 * candidates are scored and ordered), a memory writer (what a finished episode stores) and optional
 * per-episode steps (Reflexion's reflections). A part's args are JSON: the manifest records them and
 * `lib/methods/record.ts` rebuilds the method from that record.
 * @module
 */
import { MeritError, nearestName } from "../errors.ts";
import { canonicalJson, type JsonValue } from "../hash.ts";
import type { PartRecord, PoolPlan } from "../retrieval/retrieval-policy.ts";
import type { Ranker } from "../retrieval/ranker.ts";
import type { MemoryWriter } from "../memory/writer.ts";
import { Registry } from "../registry.ts";

/** JSON arguments of one part. */
export type PartArgs = Record<string, JsonValue>;

/** One part of a method as a manifest records it (lib/retrieval/retrieval-policy.ts `PartRecord`). */
export type PartRef = PartRecord;

/** A per-episode step: what it adds to the episode loop (lib/repair/episode.ts). */
export interface EpisodeStep {
  /** Reflect after the initial failure and after every failed repair (Reflexion, METHOD.md §6.2). */
  reflects: boolean;
}

/**
 * Builds one part from its args. `defaults` lists every accepted arg with its default value (and
 * so its JSON type); `build` gets the defaults overlaid with the given args and checks their values.
 */
export interface PartFactory<T> {
  /** One line for `merit methods`. */
  summary: string;
  defaults: PartArgs;
  build(args: PartArgs): T;
}

/** What each role builds. */
export interface PartOf {
  planner: PoolPlan;
  ranker: Ranker;
  writer: MemoryWriter;
  step: EpisodeStep;
}

export type PartRole = keyof PartOf;

/** The part roles and their registries. */
export const PARTS: { [R in PartRole]: Registry<PartFactory<PartOf[R]>> } = {
  planner: new Registry("pool planner"),
  ranker: new Registry("ranker"),
  writer: new Registry("memory writer"),
  step: new Registry("episode step"),
};

/** A part given by name with only the args that differ from its defaults. */
export interface PartRequest {
  name: string;
  args?: PartArgs;
}

/**
 * The full ref of a requested part (every arg, defaults filled in, keys sorted) and the built part.
 * An unknown part name suggests the nearest one; an unknown arg, or one of another JSON type than
 * its default, fails with one line naming the part and the arg.
 */
export function resolvePart<R extends PartRole>(role: R, request: PartRequest): { ref: PartRef; part: PartOf[R] } {
  const factory = PARTS[role].get(request.name) as PartFactory<PartOf[R]>;
  const given = request.args ?? {};
  const known = Object.keys(factory.defaults);
  for (const [key, value] of Object.entries(given)) {
    if (!Object.hasOwn(factory.defaults, key)) {
      const near = nearestName(key, known);
      throw new MeritError(`${PARTS[role].kind} "${request.name}" has no arg "${key}"${near ? ` (did you mean "${near}"?)` : ""}; its args: ${known.join(", ") || "none"}`);
    }
    if (jsonType(value) !== jsonType(factory.defaults[key])) {
      throw new MeritError(`${PARTS[role].kind} "${request.name}": arg "${key}" must be a ${jsonType(factory.defaults[key])}, got ${canonicalJson(value)}`);
    }
  }
  const args = JSON.parse(canonicalJson({ ...factory.defaults, ...given })) as PartArgs;
  return { ref: { name: request.name, args }, part: factory.build(args) };
}

function jsonType(value: JsonValue): string {
  return value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
}

/** An arg that must be one of `allowed`; fails with the part's name. */
export function oneOf<T extends string>(part: string, key: string, value: JsonValue, allowed: readonly T[]): T {
  if (typeof value === "string" && (allowed as readonly string[]).includes(value)) return value as T;
  const near = typeof value === "string" ? nearestName(value, allowed) : null;
  throw new MeritError(`${part}: arg "${key}" must be one of ${allowed.join(", ")}, got ${canonicalJson(value)}${near ? ` (did you mean "${near}"?)` : ""}`);
}

/** A non-negative integer arg. */
export function count(part: string, key: string, value: JsonValue): number {
  if (typeof value === "number" && Number.isInteger(value) && value >= 0) return value;
  throw new MeritError(`${part}: arg "${key}" must be a non-negative integer, got ${canonicalJson(value)}`);
}

/** A finite non-negative number arg. */
export function nonNegative(part: string, key: string, value: JsonValue): number {
  if (typeof value === "number" && Number.isFinite(value) && value >= 0) return value;
  throw new MeritError(`${part}: arg "${key}" must be a non-negative number, got ${canonicalJson(value)}`);
}
