/**
 * Memory stage (METHOD.md §4.7): the causal eligibility (legality) predicate applied to every
 * candidate before any scoring. Pure; the retriever and the causal audit both call it.
 * @module
 */
import type { MemoryEntry, Polarity } from "./entry.ts";

/** The retrieving episode and the pool being filled. */
export interface EligibilityContext {
  /** Stream position of the current episode (0-based). */
  streamPosition: number;
  queryId: string;
  dbId: string;
  /** Polarity of the pool; null for a combined pool (dynamic_rag: no polarity check). */
  polarity: Polarity | null;
  /** false only for the non-causal control `transductive_batch` (rules 1–2 off). */
  causal: boolean;
  /** `cross_database_only`: reject entries from the current database (rule 5). */
  excludeSameDatabase: boolean;
  /** Optional allow list of source db ids (rule 4; unused by the runner). */
  allowDbIds?: ReadonlySet<string>;
  /** Optional deny list of source db ids (rule 4; unused by the runner). */
  denyDbIds?: ReadonlySet<string>;
}

/** Why an entry is not eligible, or null when it is (the order is METHOD.md §4.7's). */
export function ineligibilityReason(entry: MemoryEntry, ctx: EligibilityContext): string | null {
  if (ctx.causal && !(entry.source_stream_position < ctx.streamPosition))
    return `source_stream_position ${entry.source_stream_position} is not before the current position ${ctx.streamPosition}`;
  if (ctx.causal && entry.source_query_id === ctx.queryId) return `entry comes from the current query ${ctx.queryId}`;
  if (ctx.polarity !== null && entry.polarity !== ctx.polarity) return `polarity ${entry.polarity} is not the pool's ${ctx.polarity}`;
  if (ctx.allowDbIds !== undefined && !ctx.allowDbIds.has(entry.source_db_id)) return `database ${entry.source_db_id} is not on the allow list`;
  if (ctx.denyDbIds !== undefined && ctx.denyDbIds.has(entry.source_db_id)) return `database ${entry.source_db_id} is on the deny list`;
  if (ctx.excludeSameDatabase && entry.source_db_id === ctx.dbId) return `entry comes from the current database ${ctx.dbId} (cross_database_only)`;
  if (entry.applicability_scope === "same_database" && entry.source_db_id !== ctx.dbId) return "same_database scope but a different database";
  if (entry.applicability_scope === "cross_database" && entry.source_db_id === ctx.dbId) return "cross_database scope but the same database";
  return null;
}

/**
 * true iff `entry` may be retrieved by the episode described in `ctx` (METHOD.md §4.7 rules 1–6).
 * Same rules as `ineligibilityReason` without building messages: the retriever calls it for every
 * memory row on every repair step.
 */
export function isEligible(entry: MemoryEntry, ctx: EligibilityContext): boolean {
  if (ctx.causal && (!(entry.source_stream_position < ctx.streamPosition) || entry.source_query_id === ctx.queryId)) return false;
  if (ctx.polarity !== null && entry.polarity !== ctx.polarity) return false;
  if (ctx.allowDbIds !== undefined && !ctx.allowDbIds.has(entry.source_db_id)) return false;
  if (ctx.denyDbIds !== undefined && ctx.denyDbIds.has(entry.source_db_id)) return false;
  const sameDb = entry.source_db_id === ctx.dbId;
  if (ctx.excludeSameDatabase && sameDb) return false;
  if (entry.applicability_scope === "same_database" && !sameDb) return false;
  if (entry.applicability_scope === "cross_database" && sameDb) return false;
  return true;
}
