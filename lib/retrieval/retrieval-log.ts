/**
 * Retrieval stage (METHOD.md §5.7): the shape of one `retrieval_log.jsonl` record — one line per
 * repair step of a memory method, with aligned per-entry arrays (positives first, then negatives).
 * @module
 */

/** Pool keys of the per-polarity dicts; dynamic_rag uses `combined`. */
export type PoolKey = "positive" | "negative" | "combined";

/** One retrieval log record; field names are written to disk as they are. */
export interface RetrievalLogRecord {
  query_id: string;
  /** 1-based repair step. */
  repair_iteration: number;
  /** Current error type (`Unknown` when the classification is null). */
  current_error_type: string;
  /** Legal entries, summed over pools. */
  legal_pool_size: number;
  /** Legal entries of the current error type, summed over pools (counted even without a filter). */
  typed_pool_size: number;
  /** Some pool fell back to all legal entries (hard filter applied, typed pool < min_typed_pool). */
  fallback_used: boolean;
  /** The hard type filter applied at this step. */
  type_filter_applied: boolean;
  /** The same-type bonus was part of the final score (type-reliability-aware, filter not applied). */
  type_match_used_as_soft_score: boolean;
  retrieved_entry_ids: string[];
  retrieved_polarities: string[];
  retrieved_error_types: string[];
  source_db_ids: string[];
  source_stream_positions: number[];
  /** Normalised dense components, rounded to 12 decimals (0.0 for random_same_type). */
  dense_scores: number[];
  /** Normalised BM25 components, rounded to 12 decimals. */
  bm25_scores: number[];
  type_match_scores: number[];
  final_scores: number[];
  method_name: string;
  legal_pool_size_by_polarity: Partial<Record<PoolKey, number>>;
  typed_pool_size_by_polarity: Partial<Record<PoolKey, number>>;
  fallback_used_by_polarity: Partial<Record<PoolKey, boolean>>;
  /** Kit addition: `exact`, or `hnsw` when some pool exceeded the exact limit (approximate), or `none`. */
  dense_search: "exact" | "hnsw" | "none";
}
