/**
 * Methods, a memory method's retrieval policy built from its registered parts (METHOD.md §5.5–5.6):
 * `buildPolicy` resolves the pool planner, the ranker and the memory writer and flattens their
 * settings into the RetrievalPolicy the retriever and the episode loop read (lib/retrieval/retrieval-policy.ts);
 * `configurePolicy` applies an experiment config's retrieval settings where the method leaves the arg
 * at METHOD.md's value, and refuses a setting that conflicts with the method's own arg.
 * @module
 */
import { MeritError } from "../errors.ts";
import { canonicalJson, type JsonValue } from "../hash.ts";
import type { RetrievalPolicy } from "../retrieval/retrieval-policy.ts";
import { readsVectors } from "../retrieval/ranker.ts";
import { resolvePart, type PartRef } from "./parts.ts";

/** The policy of a method's memory parts (built afresh: nothing is shared between two policies). */
export function buildPolicy(name: string, canonicalName: string, description: string, parts: { planner: { name: string; args?: PartRef["args"] }; ranker: { name: string; args?: PartRef["args"] }; writer: { name: string; args?: PartRef["args"] } }): RetrievalPolicy {
  const planner = resolvePart("planner", parts.planner);
  const ranker = resolvePart("ranker", parts.ranker);
  const writer = resolvePart("writer", parts.writer);
  return {
    name,
    canonicalName,
    description,
    ...planner.part,
    limits: { ...planner.part.limits },
    scorer: ranker.ref.name,
    ranker: ranker.part,
    channels: { ...ranker.part.channels },
    vectors: readsVectors(ranker.part, name),
    typeBonus: ranker.part.typeBonus,
    writes: { ...writer.part.writes },
    transductivePrepass: writer.part.transductivePrepass,
    parts: { planner: planner.ref, ranker: ranker.ref, writer: writer.ref },
  };
}

/**
 * The retrieval settings of an experiment config (lib/experiment/config.ts `retrieval`), in the
 * units METHOD.md §5.4–5.6 uses.
 */
export interface RetrievalSettings {
  /** Entries from the positive pool (§5.5: 3). */
  max_positive: number;
  /** Entries from the negative pool (§5.5: 1). */
  max_negative: number;
  /** Smallest typed pool the hard filter ranks instead of falling back (§5.5: 3). */
  min_typed_pool: number;
  /** The type-reliability-aware variant's same-type bonus (§5.4: 0.10). */
  type_bonus: number;
}

/** METHOD.md's values; with them `configurePolicy` returns the policy unchanged. */
export const DEFAULT_RETRIEVAL_SETTINGS: Readonly<RetrievalSettings> = { max_positive: 3, max_negative: 1, min_typed_pool: 3, type_bonus: 0.1 };

/** The settings a planner's args take, by arg name. */
const PLANNER_SETTINGS = ["max_positive", "max_negative", "min_typed_pool"] as const;

/**
 * A policy with a config's retrieval settings applied (METHOD.md §5.5–5.6): the planner's positive
 * and negative limits (the combined pool takes max_positive + max_negative: dynamic_rag) and the
 * fallback threshold of the hard type filter, and the same-type bonus of a ranker that uses one
 * (a positive `type_bonus`: the type-reliability-aware variant; a ranker without a bonus keeps none).
 *
 * A setting never silently overrides the method (issue: identical sweep arms). Per arg:
 * - the method leaves the arg at METHOD.md's value (the config's default, `DEFAULT_RETRIEVAL_SETTINGS`;
 *   for the planner args also the `pools` part's default): the config's value applies;
 * - the method sets the arg to its own value and the config is at METHOD.md's value (or equal to the
 *   method's): the method's value stays;
 * - the method sets its own value and the config sets another non-default one: refused, one line
 *   naming the method, the arg, both values and the fix.
 * The parts' args carry the values used, so the manifest records them. A setting that differs from
 * METHOD.md is named in the description, which manifests record.
 */
export function configurePolicy(policy: RetrievalPolicy, settings: RetrievalSettings): RetrievalPolicy {
  const changed = (Object.keys(DEFAULT_RETRIEVAL_SETTINGS) as (keyof RetrievalSettings)[]).filter((k) => settings[k] !== DEFAULT_RETRIEVAL_SETTINGS[k]);
  const { planner, ranker, writer } = policy.parts;
  const bonus = ranker.args.type_bonus;
  const rankerArgs = typeof bonus === "number" && bonus > 0 ? { ...ranker.args, type_bonus: settled(policy, "ranker", ranker.name, "type_bonus", bonus, settings.type_bonus) } : ranker.args;
  const description = changed.length === 0 ? policy.description : `${policy.description} (configured: ${changed.map((k) => `${k} ${settings[k]}`).join(", ")})`;
  const plannerArgs = { ...planner.args };
  for (const key of PLANNER_SETTINGS) {
    if (Object.hasOwn(planner.args, key)) plannerArgs[key] = settled(policy, "planner", planner.name, key, planner.args[key], settings[key]);
  }
  return buildPolicy(policy.name, policy.canonicalName, description, {
    planner: { name: planner.name, args: plannerArgs },
    ranker: { name: ranker.name, args: rankerArgs },
    writer,
  });
}

/** The value of one arg under one config setting (configurePolicy's rule); throws one line on a conflict. */
function settled(policy: RetrievalPolicy, role: "planner" | "ranker", part: string, key: keyof RetrievalSettings, own: JsonValue, setting: number): JsonValue {
  const paper = DEFAULT_RETRIEVAL_SETTINGS[key];
  if (own === paper) return setting;
  if (setting === paper || setting === own) return own;
  throw new MeritError(
    `method ${policy.name} sets ${key} ${canonicalJson(own)} itself (its ${role} "${part}") but the config's retrieval.${key} is ${setting}; ` +
      `drop retrieval.${key} from the config (or set it to METHOD.md's ${paper}) to run the method as registered, or register a method whose ${role} sets ${key} ${setting}`,
  );
}
