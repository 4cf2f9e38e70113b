/**
 * Methods, the paper's parts (METHOD.md §4.3, §5.4–5.6, §6.2), registered once: the pool planner
 * `pools`, the rankers `hybrid` and `random`, the memory writer `episode_memory` and the episode step
 * `reflect`. Each factory's defaults are MERIT's values, so a method names only what differs.
 * @module
 */
import { APPLICABILITY_SCOPES } from "../memory/entry.ts";
import { BASE_WEIGHTS } from "../retrieval/rank.ts";
import { HybridRanker, RandomRanker } from "../retrieval/ranker.ts";
import type { PoolLayout, TypeFilterRule } from "../retrieval/retrieval-policy.ts";
import { count, nonNegative, oneOf, PARTS } from "./parts.ts";

const LAYOUTS: readonly PoolLayout[] = ["by_polarity", "positive_only", "combined"];
const TYPE_FILTERS: readonly TypeFilterRule[] = ["always", "never", "high_reliability"];

PARTS.planner.register("pools", {
  summary: "legal pools by polarity (or positives only, or one combined pool), hard type filter with fallback (METHOD.md §5.5)",
  defaults: { layout: "by_polarity", type_filter: "always", min_typed_pool: 3, max_positive: 3, max_negative: 1, exclude_same_database: false, causal: true },
  build: (a) => {
    const maxPositive = count("pools", "max_positive", a.max_positive);
    const maxNegative = count("pools", "max_negative", a.max_negative);
    return {
      pools: oneOf("pools", "layout", a.layout, LAYOUTS),
      typeFilter: oneOf("pools", "type_filter", a.type_filter, TYPE_FILTERS),
      minTypedPool: count("pools", "min_typed_pool", a.min_typed_pool),
      limits: { positive: maxPositive, negative: maxNegative, combined: maxPositive + maxNegative },
      excludeSameDatabase: a.exclude_same_database as boolean,
      causal: a.causal as boolean,
    };
  },
});

PARTS.ranker.register("hybrid", {
  summary: "min-max normalised dense and BM25 fused by weight (0 = channel off), optional same-type bonus (METHOD.md §5.4)",
  defaults: { dense_weight: BASE_WEIGHTS.dense, bm25_weight: BASE_WEIGHTS.bm25, type_bonus: 0 },
  build: (a) =>
    new HybridRanker(
      { dense: nonNegative("hybrid", "dense_weight", a.dense_weight), bm25: nonNegative("hybrid", "bm25_weight", a.bm25_weight) },
      nonNegative("hybrid", "type_bonus", a.type_bonus),
    ),
});

PARTS.ranker.register("random", {
  summary: "seeded shuffle of the pool, scores 0, no embedding (random_same_type, METHOD.md §5.6)",
  defaults: {},
  build: () => new RandomRanker(),
});

PARTS.writer.register("episode_memory", {
  summary: "one entry per finished episode: positive and/or negative, with a scope; optional transductive pre-pass (METHOD.md §4.3)",
  defaults: { positive: true, negative: true, scope: "global", transductive_prepass: false },
  build: (a) => ({
    writes: { updatesGlobalMemory: true, writesPositive: a.positive as boolean, writesNegative: a.negative as boolean, scope: oneOf("episode_memory", "scope", a.scope, APPLICABILITY_SCOPES) },
    transductivePrepass: a.transductive_prepass as boolean,
  }),
});

PARTS.step.register("reflect", {
  summary: "a verbal reflection after the initial failure and after every failed repair (Reflexion, METHOD.md §6.2)",
  defaults: {},
  build: () => ({ reflects: true }),
});
