/**
 * Memory stage (METHOD.md §4.4): what both MemoryStore implementations share — reads delegated to
 * the in-process MemoryTable, and insertions run one at a time (a plan must not go stale while its
 * text is embedded). Subclasses only say how one insertion is committed.
 * @module
 */
import type { Embedder } from "../llm/types.ts";
import type { MemoryEntry } from "./entry.ts";
import type { MemoryTable } from "./memory-table.ts";
import type { InsertResult, MemoryStore } from "./store.ts";

export abstract class TableMemoryStore implements MemoryStore {
  protected readonly table: MemoryTable;
  #queue: Promise<unknown> = Promise.resolve();

  protected constructor(table: MemoryTable) {
    this.table = table;
  }
  get dimension(): number {
    return this.table.dimension;
  }
  get size(): number {
    return this.table.size;
  }
  get revision(): number {
    return this.table.revision;
  }
  entries(): readonly MemoryEntry[] {
    return this.table.entries();
  }
  vectors(): readonly Float32Array[] {
    return this.table.vectors();
  }
  rowOf(entryId: string): number | undefined {
    return this.table.rowOf(entryId);
  }
  hasEpisode(episodeId: string): boolean {
    return this.table.hasEpisode(episodeId);
  }
  insert(entry: MemoryEntry, embedder: Embedder): Promise<InsertResult> {
    const next = this.#queue.then(() => this.insertNow(entry, embedder));
    this.#queue = next.catch(() => undefined);
    return next;
  }
  /** Plans, embeds and commits one insertion; called strictly one at a time. */
  protected abstract insertNow(entry: MemoryEntry, embedder: Embedder): Promise<InsertResult>;
}
