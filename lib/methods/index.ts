/**
 * Methods (DESIGN.md §1): the part registries, the one method registry with the paper's methods
 * registered, the manifest record and the plugin loader. Import this module (not its files) to get
 * the registries filled.
 * @module
 */
import "./builtin-parts.ts";
import "./paper.ts";
import "./peers/index.ts";

export * from "./hooks.ts";
export * from "./method.ts";
export * from "./parts.ts";
export * from "./plugin-use.ts";
export * from "./record.ts";
export * from "./registry.ts";
export * from "./table.ts";
export { MERIT_PARTS } from "./paper.ts";
export type { Ranker, RankContext, RankPool, RankedRow, DenseRows } from "../retrieval/ranker.ts";
export type { MemoryWriter } from "../memory/writer.ts";
export type { PoolPlan } from "../retrieval/retrieval-policy.ts";
