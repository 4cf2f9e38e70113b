/**
 * Retrieval stage (METHOD.md §5.5–5.6): a memory method's retrieval policy, as the retriever and the
 * episode loop read it — built from the method's three memory parts (lib/methods/parts.ts): the
 * pool planner (pools, type filter, limits, legality), the ranker and the memory writer. The flat
 * fields are those parts' settings; `parts` holds the parts as `{ name, args }` for the manifest.
 * The config's retrieval settings are applied by `configurePolicy`.
 * @module
 */
import type { MemoryWriteFlags } from "../memory/finalize.ts";
import { resolvePart, type PartRef } from "../methods/parts.ts";
import type { Channels } from "./rank.ts";
import type { Ranker } from "./ranker.ts";

/**
 * How candidates are pooled: `by_polarity` (a positive and a negative pool), `positive_only`
 * (positive pool only), `combined` (one pool of all legal entries, no polarity check).
 */
export type PoolLayout = "by_polarity" | "positive_only" | "combined";

/**
 * The hard type filter: `always` (typed pool with fallback), `never` (legal pool), or
 * `high_reliability` (hard filter only when the current type is in HIGH_RELIABILITY_TYPES,
 * otherwise the legal pool with the ranker's type bonus).
 */
export type TypeFilterRule = "always" | "never" | "high_reliability";

/** What a pool planner decides: which entries are legal and which pools are ranked. */
export interface PoolPlan {
  pools: PoolLayout;
  typeFilter: TypeFilterRule;
  /** Typed pool is used only when it has at least this many entries (METHOD.md §5.5: 3; config `min_typed_pool`). */
  minTypedPool: number;
  /** Entries returned per pool: positive 3, negative 1, combined their sum (config `max_positive`, `max_negative`). */
  limits: { positive: number; negative: number; combined: number };
  /** Reject entries from the current database (cross_database_only, METHOD.md §4.7 rule 5). */
  excludeSameDatabase: boolean;
  /** false only for transductive_batch: no causality checks (a non-causal control). */
  causal: boolean;
}

/** The memory parts of a method, each as `{ name, args }` with every arg. */
export interface MemoryParts {
  planner: PartRef;
  ranker: PartRef;
  writer: PartRef;
}

/** A memory method's retrieval and memory-writing policy. */
export interface RetrievalPolicy extends PoolPlan {
  /** Name as requested (an alias keeps its own name: `merit_full`); logged as method_name. */
  name: string;
  /** The registered method the name resolved to (`merit` for `merit_full`). */
  canonicalName: string;
  /** One line for manifests and the report. */
  description: string;
  /** The ranker part's name (`hybrid`, `random`, …). */
  scorer: string;
  /** The ranker. */
  ranker: Ranker;
  /** Channels the ranker reads; a channel it does not read is never computed (retriever.ts). */
  channels: Channels;
  /** Added to the final score of same-type entries when no hard filter applied (0 = off; config `type_bonus`). */
  typeBonus: number;
  /** What finalization writes (METHOD.md §4.3) and with which scope. */
  writes: MemoryWriteFlags;
  /** transductive_batch: a negative per initially failed query before the stream, episode entries after it. */
  transductivePrepass: boolean;
  parts: MemoryParts;
}

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
