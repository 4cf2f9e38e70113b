/**
 * Methods, a memory method's retrieval policy built from its registered parts (METHOD.md §5.5–5.6):
 * `buildPolicy` resolves the pool planner, the ranker and the memory writer and flattens their
 * settings into the RetrievalPolicy the retriever and the episode loop read (lib/retrieval/policy.ts);
 * `configurePolicy` applies an experiment config's retrieval settings.
 * @module
 */
import type { RetrievalPolicy } from "../retrieval/policy.ts";
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

/**
 * A policy with a config's retrieval settings applied (METHOD.md §5.5–5.6): the planner's positive
 * and negative limits (the combined pool takes max_positive + max_negative: dynamic_rag) and the
 * fallback threshold of the hard type filter, and the same-type bonus of a ranker that uses one
 * (only the type-reliability-aware variant; a ranker without a bonus keeps none). The parts' args
 * carry the applied values, so the manifest records them. A setting that differs from METHOD.md is
 * named in the description, which manifests record.
 */
export function configurePolicy(policy: RetrievalPolicy, settings: RetrievalSettings): RetrievalPolicy {
  const changed = (Object.keys(DEFAULT_RETRIEVAL_SETTINGS) as (keyof RetrievalSettings)[]).filter((k) => settings[k] !== DEFAULT_RETRIEVAL_SETTINGS[k]);
  const { planner, ranker, writer } = policy.parts;
  const rankerArgs = typeof ranker.args.type_bonus === "number" && ranker.args.type_bonus > 0 ? { ...ranker.args, type_bonus: settings.type_bonus } : ranker.args;
  const description = changed.length === 0 ? policy.description : `${policy.description} (configured: ${changed.map((k) => `${k} ${settings[k]}`).join(", ")})`;
  const planned = { max_positive: settings.max_positive, max_negative: settings.max_negative, min_typed_pool: settings.min_typed_pool };
  const plannerArgs = { ...planner.args, ...Object.fromEntries(Object.entries(planned).filter(([k]) => Object.hasOwn(planner.args, k))) };
  return buildPolicy(policy.name, policy.canonicalName, description, {
    planner: { name: planner.name, args: plannerArgs },
    ranker: { name: ranker.name, args: rankerArgs },
    writer,
  });
}
