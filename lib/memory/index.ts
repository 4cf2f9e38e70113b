/**
 * Memory stage (METHOD.md §4): re-exports of entries, identity/merge, finalization, eligibility,
 * entry texts and the MemoryStore implementations.
 * @module
 */
export * from "./entry.ts";
export * from "./identity.ts";
export * from "./merge.ts";
export * from "./finalize.ts";
export * from "./entry-text.ts";
export * from "./eligibility.ts";
export * from "./store.ts";
export * from "./table-store.ts";
export * from "./memory-table.ts";
export * from "./in-memory-store.ts";
export * from "./jsonl-store.ts";
