/**
 * Memory stage (METHOD.md §4.4–4.5): the `MemoryStore` seam — a row-ordered memory of entries and
 * their embeddings that retrieval reads and the runner inserts into after each episode. Two
 * implementations: `InMemoryMemoryStore` (tests, notebooks) and `JsonlMemoryStore` (run directories).
 * @module
 */
import type { Embedder } from "../llm/types.ts";
import type { MemoryEntry } from "./entry.ts";

/** What one `insert` did (METHOD.md §4.4). */
export interface InsertResult {
  /** `insert`: new row; `merge`: existing row replaced and re-embedded; `skip`: episode already stored. */
  kind: "insert" | "merge" | "skip";
  /** Row touched (insert/merge), the row holding the episode (skip). */
  row: number | null;
  /** ID of the inserted/merged entry (the incoming entry's ID for a skip). */
  entryId: string;
  /** Number of texts embedded by this insertion (1, or 0 for a skip). */
  embeddingCalls: number;
}

/**
 * A memory of entries in row (insertion) order with one L2-normalised vector per row. Rows never
 * move: a merge replaces the entry and vector at its existing row. Entries are immutable objects
 * (a merge creates a new object), so callers may cache per-object derived data.
 */
export interface MemoryStore {
  /** Length of every stored vector (fixed when the store is created). */
  readonly dimension: number;
  /** Number of rows. */
  readonly size: number;
  /**
   * Optional change counter: a value that changes whenever a row is added or replaced. Readers that
   * cache per-row data (the retriever's columns and HNSW shards) skip re-checking every row while it
   * is unchanged; without it they compare row objects on every call.
   */
  readonly revision?: number;
  /** Entries in row order (a snapshot array; do not mutate). */
  entries(): readonly MemoryEntry[];
  /** Vectors in row order, aligned with `entries()`. */
  vectors(): readonly Float32Array[];
  /** Row of an entry ID, undefined when absent. */
  rowOf(entryId: string): number | undefined;
  /** true if some entry's provenance history holds this episode id. */
  hasEpisode(episodeId: string): boolean;
  /**
   * Inserts one finalized entry: skip if its episode is already stored, merge if its ID exists,
   * else append. Embeds the resulting entry's dense text (METHOD.md §4.6) with `embedder`, and for
   * persistent stores resolves only after the new state is durable.
   */
  insert(entry: MemoryEntry, embedder: Embedder): Promise<InsertResult>;
}
