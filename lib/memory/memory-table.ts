/**
 * Memory stage (METHOD.md §4.4): the in-process state every MemoryStore keeps — entries and vectors
 * in row order, the ID → row and episode → row lookups — and the one place an insertion plan is
 * applied. No I/O.
 * @module
 */
import type { Embedder } from "../llm/types.ts";
import { checkDimension, l2Normalize } from "../retrieval/vector.ts";
import type { MemoryEntry } from "./entry.ts";
import { denseText } from "./entry-text.ts";
import { planInsertion, type InsertionPlan, type MemoryView } from "./merge.ts";
import type { InsertResult } from "./store.ts";

/** Row-ordered entries and vectors with their lookups. */
export class MemoryTable implements MemoryView {
  readonly dimension: number;
  #entries: MemoryEntry[] = [];
  #vectors: Float32Array[] = [];
  #rowById = new Map<string, number>();
  #rowByEpisode = new Map<string, number>();

  constructor(dimension: number) {
    this.dimension = dimension;
  }

  get size(): number {
    return this.#entries.length;
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

  /** Embeds the planned entry's dense text (L2-normalised again, METHOD.md §5.3); null for a skip. */
  async embedPlan(plan: InsertionPlan, embedder: Embedder): Promise<Float32Array | null> {
    if (plan.kind === "skip") return null;
    const [raw] = await embedder.embed([denseText(plan.entry)]);
    checkDimension(raw, this.dimension, `embedding of entry ${plan.entry.entry_id}`);
    return l2Normalize(raw);
  }

  /** Applies a non-skip plan with its vector. */
  apply(plan: InsertionPlan, vector: Float32Array | null): void {
    if (plan.kind === "skip") return;
    if (vector === null) throw new TypeError("MemoryTable.apply: an insert or merge needs its vector");
    checkDimension(vector, this.dimension, `vector of entry ${plan.entry.entry_id}`);
    this.#entries[plan.row] = plan.entry;
    this.#vectors[plan.row] = vector;
    this.#rowById.set(plan.entry.entry_id, plan.row);
    for (const record of plan.entry.provenance_history) this.#rowByEpisode.set(record.source_episode_id, plan.row);
  }

  /** The InsertResult reported for an applied plan. */
  static resultOf(plan: InsertionPlan, incoming: MemoryEntry): InsertResult {
    if (plan.kind === "skip") return { kind: "skip", row: plan.row, entryId: incoming.entry_id, embeddingCalls: 0 };
    return { kind: plan.kind, row: plan.row, entryId: plan.entry.entry_id, embeddingCalls: 1 };
  }

  /** A copy holding the same rows (entries are immutable and shared; vectors are shared). */
  clone(): MemoryTable {
    const copy = new MemoryTable(this.dimension);
    this.#entries.forEach((entry, row) => copy.apply({ kind: "insert", row, entry }, this.#vectors[row]));
    return copy;
  }
}
