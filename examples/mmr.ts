/**
 * Example plugin, the ranker seam with candidate vectors (issue 21 §1): maximal marginal relevance
 * (Carbonell & Goldstein, SIGIR 1998) as a ranker `mmr` (a factory in the RANKERS registry, named by MERIT's memory arg `ranker`) and two methods, `merit_mmr` (MERIT's
 * pools and memory) and `dynamic_rag_mmr` (Dynamic RAG's one combined top-4 pool), with nothing in
 * lib/ changed. It proves that a ranker can read what plain fusion cannot: each candidate's stored
 * vector (`ctx.vector(row)`), the query vector (`ctx.queryVector()`) and the entries (`ctx.entry(row)`).
 *
 * Per pool: the `hybrid` ranker (METHOD.md §5.4, the same args) orders the pool and its top
 * `max(fetch_k, limit)` are the candidates; then, greedily, the next pick is
 *   argmax_c  lambda · rel(c) − (1 − lambda) · max_{s picked} cos(c, s)
 * (the first pick is the most relevant), ties kept in hybrid's order. rel is the fused score
 * (`relevance: "fusion"`: hybrid's `final`, the weighted sum of min–max normalised channels, in [0, 1]) or the cosine with
 * the query (`relevance: "dense"`, the paper's Sim1). cos is the inner product of the stored
 * L2-normalised vectors. lambda = 0.7, not the balanced 0.5: relevance lies in [0, 1] but
 * candidates that are relevant are close to the query and so to each other, while an off-topic entry
 * orthogonal to the picks costs nothing; at 0.5 such an entry (score ≈ 0) beats every relevant one
 * whose relevance is below its similarity to the picks, so prompts fill with off-topic entries. At
 * 0.7 an exact duplicate of a pick (cos 1) still scores 0.7·rel − 0.3 > 0 when rel > 0.43, and a
 * candidate at cosine c to the picks beats a duplicate whose relevance is higher by less than
 * (3/7)·(1 − c). The logged dense / BM25 / type_match are
 * hybrid's; `final` is the MMR score at the step the entry was picked (rounded to 12 decimals).
 *
 * Run: `merit methods --plugin examples/mmr.ts`; `merit grid --config configs/spider.json --plugin
 * examples/mmr.ts --methods merit,merit_mmr --seeds 0`. Test: `npx vitest run examples/mmr.test.ts`.
 * @module
 */
import { count, meritMemory, MeritError, nonNegative, oneOf, pyRound, RANKERS, registerMethod, type RankContext, type RankedRow, type RankPool, type Ranker } from "../lib/plugin.ts";

/** Inner product in float64, summed in index order. */
function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** MMR's greedy selection over `fused` (hybrid's ranked candidates, best first); keeps `limit`. */
export function mmrSelect(fused: readonly RankedRow[], ctx: RankContext, limit: number, lambda: number, relevance: "fusion" | "dense"): RankedRow[] {
  const query = relevance === "dense" ? ctx.queryVector() : null;
  const rel = fused.map((r) => (query === null ? r.final : cosine(query, ctx.vector(r.row))));
  const vectors = fused.map((r) => ctx.vector(r.row)); // views of the memory's vectors, no copies
  const maxSim = new Float64Array(fused.length).fill(-Infinity);
  const taken = new Uint8Array(fused.length);
  const picked: RankedRow[] = [];
  while (picked.length < Math.min(limit, fused.length)) {
    let best = -1;
    let bestScore = -Infinity;
    for (let i = 0; i < fused.length; i++) {
      if (taken[i]) continue;
      const score = picked.length === 0 ? lambda * rel[i] : lambda * rel[i] - (1 - lambda) * maxSim[i];
      if (score > bestScore) [best, bestScore] = [i, score];
    }
    taken[best] = 1;
    picked.push({ ...fused[best], final: pyRound(bestScore) });
    for (let i = 0; i < fused.length; i++) if (!taken[i]) maxSim[i] = Math.max(maxSim[i], cosine(vectors[i], vectors[best]));
  }
  return picked;
}

RANKERS.register("mmr", {
  summary: "maximal marginal relevance over hybrid's top fetch_k: lambda·relevance − (1−lambda)·max cosine to the picks (examples/mmr.ts)",
  defaults: { lambda: 0.7, fetch_k: 20, relevance: "fusion", dense_weight: 0.75, bm25_weight: 0.25, type_bonus: 0 },
  build: (args): Ranker => {
    const lambda = nonNegative("mmr", "lambda", args.lambda);
    if (lambda > 1) throw new MeritError(`mmr: arg "lambda" must be in [0, 1], got ${lambda}`);
    const fetchK = count("mmr", "fetch_k", args.fetch_k);
    const relevance = oneOf("mmr", "relevance", args.relevance, ["fusion", "dense"] as const);
    const hybrid = RANKERS.get("hybrid").build({ dense_weight: args.dense_weight, bm25_weight: args.bm25_weight, type_bonus: args.type_bonus });
    if (relevance === "dense" && !hybrid.channels.dense) throw new MeritError(`mmr: relevance "dense" needs the query vector, so dense_weight must be > 0`);
    return {
      channels: hybrid.channels,
      typeBonus: hybrid.typeBonus,
      rank: (pool: RankPool, ctx: RankContext) => mmrSelect(hybrid.rank({ ...pool, limit: Math.max(fetchK, pool.limit) }, ctx), ctx, pool.limit, lambda, relevance),
    };
  },
});

registerMethod({
  name: "merit_mmr",
  description: "MERIT pools and memory, each pool's picks diversified by MMR (lambda 0.7 over hybrid's top 20)",
  hooks: { memory: meritMemory({ ranker: "mmr" }) },
});

registerMethod({
  name: "dynamic_rag_mmr",
  description: "Dynamic RAG's combined top-4 pool diversified by MMR (lambda 0.7 over hybrid's top 20)",
  hooks: { memory: meritMemory({ layout: "combined", type_filter: "never", negative: false, ranker: "mmr" }) },
});
