/**
 * Memory stage, MERIT's memory with a read-only source in front (issue 36 §6; METHOD.md §12.4,
 * "A memory from another run"): the run's own store (memory/, written as before) and the entries of
 * another run's memory, as retrieval sees them together. The source entries come first, each under
 * an id of its own (a hash of the source run's trajectories and the entry's id, so an own entry with
 * the same id never merges into one) and at stream position −1 — before every position, so eligible
 * from the first episode on (METHOD.md §4.7 rule 1) — and are never written, merged or stored in the
 * run's files; every insertion goes to the own store.
 * @module
 */
import { sha256Hex } from "../hash.ts";
import type { Embedder } from "../llm/types.ts";
import type { MemoryEntry } from "./entry.ts";
import type { InsertResult, MemoryStore } from "./store.ts";

/** The id a source entry is retrieved (and logged) under: its own id, qualified by the source run. */
export function sourceEntryId(sourceTrajectoriesSha: string, entryId: string): string {
  return sha256Hex(`memory_source|${sourceTrajectoriesSha}|${entryId}`);
}

/** Another run's entries as a read-only source: re-identified and placed before the stream. */
export function asSourceEntries(entries: readonly MemoryEntry[], sourceTrajectoriesSha: string): MemoryEntry[] {
  return entries.map((e) => Object.freeze({ ...e, entry_id: sourceEntryId(sourceTrajectoriesSha, e.entry_id), source_stream_position: -1 }));
}

/** The own store with the source's entries (and their vectors) in front. */
export class SourcedMemoryStore implements MemoryStore {
  readonly own: MemoryStore;
  readonly #entries: readonly MemoryEntry[];
  readonly #vectors: readonly Float32Array[];
  readonly #rows: ReadonlyMap<string, number>;
  #cache: { revision: number | undefined; size: number; entries: readonly MemoryEntry[]; vectors: readonly Float32Array[] } | null = null;

  constructor(own: MemoryStore, entries: readonly MemoryEntry[], vectors: readonly Float32Array[]) {
    this.own = own;
    this.#entries = entries;
    this.#vectors = vectors;
    this.#rows = new Map(entries.map((e, row) => [e.entry_id, row]));
  }

  get dimension(): number {
    return this.own.dimension;
  }

  get size(): number {
    return this.#entries.length + this.own.size;
  }

  get revision(): number | undefined {
    return this.own.revision;
  }

  entries(): readonly MemoryEntry[] {
    return this.#snapshot().entries;
  }

  vectors(): readonly Float32Array[] {
    return this.#snapshot().vectors;
  }

  rowOf(entryId: string): number | undefined {
    const row = this.#rows.get(entryId);
    if (row !== undefined) return row;
    const own = this.own.rowOf(entryId);
    return own === undefined ? undefined : own + this.#entries.length;
  }

  hasEpisode(episodeId: string): boolean {
    return this.own.hasEpisode(episodeId);
  }

  async insert(entry: MemoryEntry, embedder: Embedder): Promise<InsertResult> {
    const result = await this.own.insert(entry, embedder);
    return { ...result, row: result.row === null ? null : result.row + this.#entries.length };
  }

  /** Source rows then own rows, rebuilt only when the own store changed. */
  #snapshot(): { entries: readonly MemoryEntry[]; vectors: readonly Float32Array[] } {
    const revision = this.own.revision;
    const size = this.own.size;
    if (this.#cache === null || revision === undefined || this.#cache.revision !== revision || this.#cache.size !== size) {
      this.#cache = { revision, size, entries: [...this.#entries, ...this.own.entries()], vectors: [...this.#vectors, ...this.own.vectors()] };
    }
    return this.#cache;
  }
}
