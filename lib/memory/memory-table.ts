/**
 * Memory stage (METHOD.md §4.4): the in-process state every MemoryStore keeps — entries and vectors
 * in row order, the ID → row and episode → row lookups — and the one place an insertion plan is
 * applied. No I/O.
 * @module
 */
import type { Embedder } from "../llm/types.ts";
import { checkDimension, l2Normalize } from "../vector.ts";
import type { MemoryEntry } from "./entry.ts";
import { denseText } from "./entry-text.ts";
import { planInsertion, type InsertionPlan, type MemoryView } from "./merge.ts";
import type { InsertResult } from "./store.ts";

/**
 * Append-only storage for vectors of one dimension in large shared buffers: `store` copies a vector
 * into the next free slot and returns a view of it. Slots are never overwritten, so a returned
 * view never changes. Scoring a pool reads many vectors in a row; neighbouring slots in one buffer
 * make that about twice as fast as separately allocated arrays (bench/retrieval.ts at 100,000 rows).
 */
export class VectorArena {
  readonly dimension: number;
  readonly #slotsPerBuffer: number;
  #buffer: Float32Array | null = null;
  #used = 0;

  constructor(dimension: number, slotsPerBuffer = 256) {
    this.dimension = dimension;
    this.#slotsPerBuffer = slotsPerBuffer;
  }

  /** A copy of `vector` in the arena (length must equal the dimension). */
  store(vector: ArrayLike<number>): Float32Array {
    checkDimension(vector, this.dimension, "vector");
    if (this.#buffer === null || this.#used === this.#slotsPerBuffer) {
      this.#buffer = new Float32Array(this.#slotsPerBuffer * this.dimension);
      this.#used = 0;
    }
    const start = this.#used * this.dimension;
    const view = this.#buffer.subarray(start, start + this.dimension);
    view.set(vector);
    this.#used += 1;
    return view;
  }
}

/** Row-ordered entries and vectors with their lookups. */
export class MemoryTable implements MemoryView {
  readonly dimension: number;
  #entries: MemoryEntry[] = [];
  #vectors: Float32Array[] = [];
  #rowById = new Map<string, number>();
  #rowByEpisode = new Map<string, number>();
  #revision = 0;
  readonly #arena: VectorArena;

  constructor(dimension: number) {
    this.dimension = dimension;
    this.#arena = new VectorArena(dimension);
  }

  get size(): number {
    return this.#entries.length;
  }
  /** Incremented by every applied insert or merge. */
  get revision(): number {
    return this.#revision;
  }
  entries(): readonly MemoryEntry[] {
    return this.#entries;
  }
  vectors(): readonly Float32Array[] {
    return this.#vectors;
  }
  entryAt(row: number): MemoryEntry {
    return this.#entries[row];
  }
  rowOf(entryId: string): number | undefined {
    return this.#rowById.get(entryId);
  }
  rowOfEpisode(episodeId: string): number | undefined {
    return this.#rowByEpisode.get(episodeId);
  }
  hasEpisode(episodeId: string): boolean {
    return this.#rowByEpisode.has(episodeId);
  }

  /** Decides what inserting `entry` does (see `planInsertion`). */
  plan(entry: MemoryEntry): InsertionPlan {
    return planInsertion(this, entry);
  }

  /**
   * Embeds the planned entry's dense text (L2-normalised again, METHOD.md §5.3); null for a skip. A
   * table of dimension 0 (a method whose ranker reads no vectors) stores an empty vector and never
   * calls the embedder.
   */
  async embedPlan(plan: InsertionPlan, embedder: Embedder): Promise<Float32Array | null> {
    if (plan.kind === "skip") return null;
    if (this.dimension === 0) return new Float32Array(0);
    const [raw] = await embedder.embed([denseText(plan.entry)]);
    checkDimension(raw, this.dimension, `embedding of entry ${plan.entry.entry_id}`);
    return l2Normalize(raw);
  }

  /** Applies a non-skip plan with its vector. */
  apply(plan: InsertionPlan, vector: Float32Array | null): void {
    if (plan.kind === "skip") return;
    if (vector === null) throw new TypeError("MemoryTable.apply: an insert or merge needs its vector");
    checkDimension(vector, this.dimension, `vector of entry ${plan.entry.entry_id}`);
    this.#revision += 1;
    this.#entries[plan.row] = plan.entry;
    this.#vectors[plan.row] = this.#arena.store(vector); // a new object per insert or merge
    this.#rowById.set(plan.entry.entry_id, plan.row);
    for (const record of plan.entry.provenance_history) this.#rowByEpisode.set(record.source_episode_id, plan.row);
  }

  /** The InsertResult reported for a plan applied to this table (no embedding call at dimension 0). */
  resultOf(plan: InsertionPlan, incoming: MemoryEntry): InsertResult {
    if (plan.kind === "skip") return { kind: "skip", row: plan.row, entryId: incoming.entry_id, embeddingCalls: 0 };
    return { kind: plan.kind, row: plan.row, entryId: plan.entry.entry_id, embeddingCalls: this.dimension === 0 ? 0 : 1 };
  }
}
