/**
 * Retrieval stage (METHOD.md §5.5–5.6): a memory method's retrieval policy, as the retriever and the
 * episode loop read it — which entries are legal and how they are pooled (pools, type filter, limits,
 * legality), the ranker, and what a finished episode stores; `args` holds the memory factory's args
 * for the manifest. The policy is built by MERIT's memory factory (lib/methods/merit-memory.ts
 * `meritMemory`), above this stage.
 * @module
 */
import type { JsonValue } from "../hash.ts";
import type { MemoryWriteFlags } from "../memory/finalize.ts";
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

/** Which entries are legal and which pools are ranked. */
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

/** A memory method's retrieval and memory-writing policy. */
export interface RetrievalPolicy extends PoolPlan {
  /** Name as requested (an alias keeps its own name: `merit_full`); logged as method_name. */
  name: string;
  /** The registered method the name resolved to (`merit` for `merit_full`). */
  canonicalName: string;
  /** One line for manifests and the report. */
  description: string;
  /** The ranker's name (`hybrid`, `random`, …). */
  scorer: string;
  /** The ranker. */
  ranker: Ranker;
  /** Channels the ranker reads; a channel it does not read is never computed (retriever.ts). */
  channels: Channels;
  /**
   * Whether the memory stores entry vectors (ranker.ts `readsVectors`): false for a ranker that reads
   * no dense channel and declares `vectors: false` (no_dense_rerank, random_same_type) — its memory is
   * opened with dimension 0, so nothing is ever embedded.
   */
  vectors: boolean;
  /** Added to the final score of same-type entries when no hard filter applied (0 = off; config `type_bonus`). */
  typeBonus: number;
  /** What finalization writes (METHOD.md §4.3) and with which scope. */
  writes: MemoryWriteFlags;
  /** transductive_batch: a negative per initially failed query before the stream, episode entries after it. */
  transductivePrepass: boolean;
  /** The memory factory's args, every one (lib/methods/merit-memory.ts), as the manifest records them. */
  args: Record<string, JsonValue>;
}
