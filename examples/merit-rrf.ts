/**
 * A follow-up method as one plugin file (`merit grid --plugin examples/merit-rrf.ts --methods
 * merit_rrf`): MERIT's memory (its pools and what it stores) with reciprocal-rank fusion of the dense and
 * BM25 channels instead of the weighted sum of METHOD.md §5.4. Each channel ranks the whole pool on
 * its own (raw score descending, ties by entry id ascending: ordinal ranks 1..n), and
 * final = 1/(k + rank_dense) + 1/(k + rank_bm25) with k = 60, rounded to 12 decimals. The stored
 * dense and BM25 components are the pool's min–max normalised scores (§5.4), so the order after
 * `final` is §5.4's: dense, BM25, type_match (always 0: no bonus), then entry id ascending.
 * @module
 */
import { compareRanked, count, meritMemory, minMaxNormalize, pyRound, RANKERS, registerMethod, type RankContext, type RankedRow, type RankPool } from "../lib/plugin.ts";

/** Ordinal 1-based ranks of `scores` (descending; ties by entry id ascending). */
function channelRanks(scores: ArrayLike<number>, ids: readonly string[]): number[] {
  const order = Array.from({ length: ids.length }, (_, i) => i).sort((a, b) => scores[b] - scores[a] || (ids[a] < ids[b] ? -1 : ids[a] > ids[b] ? 1 : 0));
  const ranks = new Array<number>(ids.length);
  order.forEach((i, position) => (ranks[i] = position + 1));
  return ranks;
}

/** Reciprocal-rank fusion of dense and BM25 over one pool, keeping the top `pool.limit`. */
export function rrfRank(pool: RankPool, ctx: RankContext, k: number): RankedRow[] {
  const dense = ctx.denseScores(pool.candidates, pool.candidates.length); // every row: ranks need the whole pool
  const bm25 = ctx.bm25Scores(dense.rows);
  const ids = dense.rows.map((row) => ctx.entryId(row));
  const denseRank = channelRanks(dense.scores, ids);
  const bm25Rank = channelRanks(bm25, ids);
  const denseNorm = minMaxNormalize(Array.from(dense.scores));
  const bm25Norm = minMaxNormalize(Array.from(bm25));
  const scored = dense.rows.map((row, i) => ({ index: i, row, entryId: ids[i], dense: pyRound(denseNorm[i]), bm25: pyRound(bm25Norm[i]), typeMatch: 0 as const, final: pyRound(1 / (k + denseRank[i]) + 1 / (k + bm25Rank[i])) }));
  return scored.sort(compareRanked).slice(0, pool.limit).map(({ row, dense, bm25, typeMatch, final }) => ({ row, dense, bm25, typeMatch, final }));
}

RANKERS.register("rrf", {
  summary: "reciprocal-rank fusion of dense and BM25: sum of 1/(k + rank) per channel (examples/merit-rrf.ts)",
  defaults: { k: 60 },
  build: (args) => {
    const k = count("rrf", "k", args.k);
    return { channels: { dense: true, bm25: true }, typeBonus: 0, rank: (pool: RankPool, ctx: RankContext) => rrfRank(pool, ctx, k) };
  },
});

registerMethod({
  name: "merit_rrf",
  description: "MERIT pools and memory, reciprocal-rank fusion of dense and BM25 (k = 60) instead of 0.75/0.25",
  hooks: { memory: meritMemory({ ranker: "rrf" }) },
});
