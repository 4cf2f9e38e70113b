/**
 * Memory stage (METHOD.md §4.4): a MemoryStore that lives only in the process — for tests,
 * notebooks and follow-up studies that do not need a run directory.
 * @module
 */
import type { Embedder } from "../llm/types.ts";
import type { MemoryEntry } from "./entry.ts";
import { MemoryTable } from "./memory-table.ts";
import type { InsertResult } from "./store.ts";
import { TableMemoryStore } from "./table-store.ts";

/** Non-persistent memory; same semantics as `JsonlMemoryStore` without the files. */
export class InMemoryMemoryStore extends TableMemoryStore {
  constructor(dimension: number) {
    super(new MemoryTable(dimension));
  }
  protected async insertNow(entry: MemoryEntry, embedder: Embedder): Promise<InsertResult> {
    const plan = this.table.plan(entry);
    const vector = await this.table.embedPlan(plan, embedder);
    this.table.apply(plan, vector);
    return this.table.resultOf(plan, entry);
  }
}
