/**
 * Retrieval stage (METHOD.md §5): re-exports of BM25, dense scoring, ranking, the policy type and the retriever.
 * @module
 */
export * from "./bm25.ts";
export * from "../vector.ts";
export * from "./dense.ts";
export * from "./rank.ts";
export * from "./retrieval-policy.ts";
export * from "./ranker.ts";
export * from "./retrieval-log.ts";
export * from "./retriever.ts";
