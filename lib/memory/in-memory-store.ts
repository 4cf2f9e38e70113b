/**
 * Memory stage (METHOD.md §4.4): a MemoryStore that lives only in the process — for tests,
 * notebooks and follow-up studies that do not need a run directory.
 * @module
 */
import type { Embedder } from "../llm/types.ts";
import type { MemoryEntry } from "./entry.ts";
import { MemoryTable } from "./memory-table.ts";
import type { InsertResult, MemoryStore } from "./store.ts";

/** Non-persistent memory; same semantics as `JsonlMemoryStore` without the files. */
export class InMemoryMemoryStore implements MemoryStore {
  readonly #table: MemoryTable;
  /** Insertions run one at a time (a plan must not go stale while its text is embedded). */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(dimension: number) {
    this.#table = new MemoryTable(dimension);
  }
  get dimension(): number {
    return this.#table.dimension;
  }
  get size(): number {
    return this.#table.size;
  }
  entries(): readonly MemoryEntry[] {
    return this.#table.entries();
  }
  vectors(): readonly Float32Array[] {
    return this.#table.vectors();
  }
  rowOf(entryId: string): number | undefined {
    return this.#table.rowOf(entryId);
  }
  hasEpisode(episodeId: string): boolean {
    return this.#table.hasEpisode(episodeId);
  }
  insert(entry: MemoryEntry, embedder: Embedder): Promise<InsertResult> {
    const next = this.#queue.then(() => this.#insertNow(entry, embedder));
    this.#queue = next.catch(() => undefined);
    return next;
  }
  async #insertNow(entry: MemoryEntry, embedder: Embedder): Promise<InsertResult> {
    const plan = this.#table.plan(entry);
    const vector = await this.#table.embedPlan(plan, embedder);
    this.#table.apply(plan, vector);
    return MemoryTable.resultOf(plan, entry);
  }
}
