/**
 * Retrieval stage (METHOD.md §5.5–5.6): the ONE table of memory-method policies — pools, type
 * filter, score channels, bonus, limits, what each method writes to memory, and scope. The
 * retriever and the episode loop read a policy and never branch on a method's name. Memoryless
 * methods (zeroshot, iterative, vanilla, reflexion) have no retrieval policy.
 * @module
 */
import { MeritError, nearestName } from "../errors.ts";
import type { MemoryWriteFlags } from "../memory/finalize.ts";
import { TYPE_BONUS, type Channels } from "./rank.ts";

/**
 * How candidates are pooled: `by_polarity` (a positive and a negative pool), `positive_only`
 * (positive pool only), `combined` (one pool of all legal entries, no polarity check).
 */
export type PoolLayout = "by_polarity" | "positive_only" | "combined";

/**
 * The hard type filter: `always` (typed pool with fallback), `never` (legal pool), or
 * `high_reliability` (hard filter only when the current type is in HIGH_RELIABILITY_TYPES,
 * otherwise the legal pool with the type bonus).
 */
export type TypeFilterRule = "always" | "never" | "high_reliability";

/** A memory method's retrieval and memory-writing policy. */
export interface RetrievalPolicy {
  /** Name as requested (an alias keeps its own name: `merit_full`); logged as method_name. */
  name: string;
  /** Table key the name resolved to (`merit` for `merit_full`). */
  canonicalName: PolicyName;
  /** One line for manifests and the report. */
  description: string;
  pools: PoolLayout;
  typeFilter: TypeFilterRule;
  /** Typed pool is used only when it has at least this many entries (METHOD.md §5.5: 3; config `min_typed_pool`). */
  minTypedPool: number;
  /** `hybrid` = weighted dense + BM25; `random` = seeded shuffle of the pool (no embedding). */
  scorer: "hybrid" | "random";
  /** Channels in use; a disabled one is never computed (its scores are 0 everywhere, retriever.ts). */
  channels: Channels;
  /** Added to the final score of same-type entries when no hard filter applied (0 = off; config `type_bonus`). */
  typeBonus: number;
  /** Entries returned per pool: positive 3, negative 1, combined 4 (config `max_positive`, `max_negative`). */
  limits: { positive: number; negative: number; combined: number };
  /** What finalization writes (METHOD.md §4.3) and with which scope. */
  writes: MemoryWriteFlags;
  /** Reject entries from the current database (cross_database_only, METHOD.md §4.7 rule 5). */
  excludeSameDatabase: boolean;
  /** false only for transductive_batch: no causality checks (a non-causal control). */
  causal: boolean;
  /** transductive_batch: a negative per initially failed query before the stream, episode entries after it. */
  transductivePrepass: boolean;
}

const LIMITS = { positive: 3, negative: 1, combined: 4 };
const HYBRID: Channels = { dense: true, bm25: true };
const WRITES_BOTH: MemoryWriteFlags = { updatesGlobalMemory: true, writesPositive: true, writesNegative: true, scope: "global" };

/** `merit` — the full method; every other row states only what differs from it. */
const MERIT: Omit<RetrievalPolicy, "name" | "canonicalName" | "description"> = {
  pools: "by_polarity",
  typeFilter: "always",
  minTypedPool: 3,
  scorer: "hybrid",
  channels: HYBRID,
  typeBonus: 0,
  limits: LIMITS,
  writes: WRITES_BOTH,
  excludeSameDatabase: false,
  causal: true,
  transductivePrepass: false,
};

/** The policy table (METHOD.md §5.6). */
const POLICY_TABLE = {
  merit: { ...MERIT, description: "dual-polarity memory, hard type filter with fallback at 3, 0.75 dense + 0.25 BM25" },
  merit_typerel: {
    ...MERIT,
    typeFilter: "high_reliability",
    typeBonus: TYPE_BONUS,
    description: "type-reliability-aware: hard filter only for Syntax/Schema Linking/Execution, else +0.10 same-type bonus",
  },
  dynamic_rag: {
    ...MERIT,
    pools: "combined",
    typeFilter: "never",
    writes: { ...WRITES_BOTH, writesNegative: false },
    description: "one untyped pool of all legal entries, top 4, stores positives only",
  },
  positive_only: {
    ...MERIT,
    pools: "positive_only",
    writes: { ...WRITES_BOTH, writesNegative: false },
    description: "MERIT without negatives (positive pool only, stores positives only)",
  },
  no_type_filter: { ...MERIT, typeFilter: "never", description: "MERIT without the type filter (legal pools, no bonus)" },
  no_dense_rerank: { ...MERIT, channels: { dense: false, bm25: true }, description: "MERIT with BM25 only (weight 1.0)" },
  no_bm25: { ...MERIT, channels: { dense: true, bm25: false }, description: "MERIT with dense only (weight 1.0)" },
  random_same_type: {
    ...MERIT,
    scorer: "random",
    description: "MERIT pools, seeded shuffle instead of scoring (seed from random_seed|query|iteration|polarity)",
  },
  cross_database_only: {
    ...MERIT,
    excludeSameDatabase: true,
    writes: { ...WRITES_BOTH, scope: "cross_database" },
    description: "MERIT excluding entries from the current database; entries stored with scope cross_database",
  },
  transductive_batch: {
    ...MERIT,
    causal: false,
    transductivePrepass: true,
    description: "NON-CAUSAL control: MERIT without causality checks, negatives pre-seeded for every initial failure",
  },
} as const satisfies Record<string, Omit<RetrievalPolicy, "name" | "canonicalName">>;

/** Canonical policy names. */
export type PolicyName = keyof typeof POLICY_TABLE;

/** Other names for the same policy (METHOD.md §5.6: merit and merit_full are identical). */
export const POLICY_ALIASES: Readonly<Record<string, PolicyName>> = {
  merit_full: "merit",
  confidence_aware_type_filter: "merit_typerel",
};

/** Every accepted name, canonical names first. */
export const POLICY_NAMES: readonly string[] = [...Object.keys(POLICY_TABLE), ...Object.keys(POLICY_ALIASES)];

/** An unknown policy name; suggests the nearest known name and lists them all. */
export class UnknownPolicyError extends MeritError {
  readonly requested: string;
  constructor(requested: string) {
    const near = nearestName(requested, POLICY_NAMES);
    super(
      `unknown memory method ${JSON.stringify(requested)}.${near ? ` Did you mean ${JSON.stringify(near)}?` : ""} ` +
        `Known memory methods: ${POLICY_NAMES.join(", ")}`,
    );
    this.name = "UnknownPolicyError";
    this.requested = requested;
  }
}

/** true iff `name` is a memory method (canonical or alias). */
export function isPolicyName(name: string): boolean {
  return Object.hasOwn(POLICY_TABLE, name) || Object.hasOwn(POLICY_ALIASES, name);
}

/** The policy for a method name (aliases keep their own `name`); throws UnknownPolicyError. */
export function getPolicy(name: string): RetrievalPolicy {
  const canonical = (Object.hasOwn(POLICY_TABLE, name) ? name : POLICY_ALIASES[name]) as PolicyName | undefined;
  if (canonical === undefined || !Object.hasOwn(POLICY_TABLE, canonical)) throw new UnknownPolicyError(name);
  const row = POLICY_TABLE[canonical];
  return {
    ...row,
    name,
    canonicalName: canonical,
    channels: { ...row.channels },
    limits: { ...row.limits },
    writes: { ...row.writes },
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

/** METHOD.md's values; with them `configurePolicy` returns the table's policy unchanged. */
export const DEFAULT_RETRIEVAL_SETTINGS: Readonly<RetrievalSettings> = { max_positive: LIMITS.positive, max_negative: LIMITS.negative, min_typed_pool: 3, type_bonus: TYPE_BONUS };

/**
 * A policy with a config's retrieval settings applied (METHOD.md §5.5–5.6): the positive and
 * negative limits, the combined pool's limit max_positive + max_negative (dynamic_rag), the fallback
 * threshold of the hard type filter, and the same-type bonus of the policies that use one (only the
 * type-reliability-aware variant; the others never add a bonus, so the value does not reach them).
 * A setting that differs from METHOD.md is named in the description, which manifests record.
 */
export function configurePolicy(policy: RetrievalPolicy, settings: RetrievalSettings): RetrievalPolicy {
  const changed = (Object.keys(DEFAULT_RETRIEVAL_SETTINGS) as (keyof RetrievalSettings)[]).filter((k) => settings[k] !== DEFAULT_RETRIEVAL_SETTINGS[k]);
  return {
    ...policy,
    channels: { ...policy.channels },
    writes: { ...policy.writes },
    limits: { positive: settings.max_positive, negative: settings.max_negative, combined: settings.max_positive + settings.max_negative },
    minTypedPool: settings.min_typed_pool,
    typeBonus: policy.typeBonus > 0 ? settings.type_bonus : 0,
    description: changed.length === 0 ? policy.description : `${policy.description} (configured: ${changed.map((k) => `${k} ${settings[k]}`).join(", ")})`,
  };
}
