/**
 * Methods (DESIGN.md §1): the one method registry with the paper's methods and the peers registered,
 * the hook factories (MERIT's memory, Reflexion's reflection, rankers), the manifest record and the
 * plugin loader. Import this module (not its files) to get the registries filled.
 * @module
 */
import "./paper.ts";
import "./peers/index.ts";

export * from "./factory.ts";
export * from "./hooks.ts";
export * from "./merit-memory.ts";
export * from "./method.ts";
export * from "./plugin-use.ts";
export * from "./record.ts";
export * from "./reflect.ts";
export * from "./registry.ts";
export * from "./table.ts";
export { meritMethod } from "./paper.ts";
export type { Ranker, RankContext, RankPool, RankedRow, DenseRows } from "../retrieval/ranker.ts";
export type { PoolPlan } from "../retrieval/retrieval-policy.ts";
