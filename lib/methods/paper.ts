/**
 * Methods, the paper's methods as compositions of parts (METHOD.md §5.6, §6.2): three memoryless
 * methods, MERIT and its type-reliability-aware variant, Dynamic RAG, the six ablations and the
 * non-causal control. Every memory method states only the args that differ from MERIT's (the parts'
 * defaults, lib/methods/builtin-parts.ts).
 * @module
 */
import { TYPE_BONUS } from "../retrieval/rank.ts";
import "./builtin-parts.ts";
import type { MethodPartsRequest } from "./method.ts";
import { registerAlias, registerMethod } from "./registry.ts";

/** MERIT's parts: dual-polarity pools with the hard type filter, 0.75 dense + 0.25 BM25, both polarities stored. */
export const MERIT_PARTS = { planner: { name: "pools" }, ranker: { name: "hybrid" }, writer: { name: "episode_memory" } } as const satisfies MethodPartsRequest;

/** MERIT's parts with some args changed. */
function merit(change: { planner?: Record<string, string | number | boolean>; ranker?: Record<string, string | number | boolean>; rankerName?: string; writer?: Record<string, string | number | boolean> }): MethodPartsRequest {
  return {
    planner: { name: "pools", args: change.planner },
    ranker: { name: change.rankerName ?? "hybrid", args: change.ranker },
    writer: { name: "episode_memory", args: change.writer },
  };
}

registerMethod({ name: "zeroshot", description: "no repair: the initial SQL is final", repairs: false, parts: {} });
registerMethod({ name: "iterative", description: "stateless iterative repair from local attempt history and feedback", parts: {} });
registerMethod({ name: "reflexion", description: "iterative repair with episode-local verbal reflections", parts: { steps: [{ name: "reflect" }] } });
registerMethod({ name: "merit", description: "dual-polarity memory, hard type filter with fallback at 3, 0.75 dense + 0.25 BM25", parts: MERIT_PARTS });
registerAlias("merit_full", "merit");
registerMethod({
  name: "merit_typerel",
  description: "type-reliability-aware: hard filter only for Syntax/Schema Linking/Execution, else +0.10 same-type bonus",
  parts: merit({ planner: { type_filter: "high_reliability" }, ranker: { type_bonus: TYPE_BONUS } }),
});
registerAlias("confidence_aware_type_filter", "merit_typerel");
registerMethod({ name: "dynamic_rag", description: "one untyped pool of all legal entries, top 4, stores positives only", parts: merit({ planner: { layout: "combined", type_filter: "never" }, writer: { negative: false } }) });
registerMethod({ name: "positive_only", description: "MERIT without negatives (positive pool only, stores positives only)", parts: merit({ planner: { layout: "positive_only" }, writer: { negative: false } }) });
registerMethod({ name: "no_type_filter", description: "MERIT without the type filter (legal pools, no bonus)", parts: merit({ planner: { type_filter: "never" } }) });
registerMethod({ name: "no_dense_rerank", description: "MERIT with BM25 only (weight 1.0)", parts: merit({ ranker: { dense_weight: 0 } }) });
registerMethod({ name: "no_bm25", description: "MERIT with dense only (weight 1.0)", parts: merit({ ranker: { bm25_weight: 0 } }) });
registerMethod({
  name: "random_same_type",
  description: "MERIT pools, seeded shuffle instead of scoring (seed from random_seed|query|iteration|polarity)",
  parts: merit({ rankerName: "random" }),
});
registerMethod({
  name: "cross_database_only",
  description: "MERIT excluding entries from the current database; entries stored with scope cross_database",
  parts: merit({ planner: { exclude_same_database: true }, writer: { scope: "cross_database" } }),
});
registerMethod({
  name: "transductive_batch",
  description: "NON-CAUSAL control: MERIT without causality checks, negatives pre-seeded for every initial failure",
  parts: merit({ planner: { causal: false }, writer: { transductive_prepass: true } }),
});
// `vanilla` (static few-shot, METHOD.md §6.2) needs four fixed Spider/BIRD *training* examples; the
// training splits are not bundled, so the method is not offered rather than faked.
