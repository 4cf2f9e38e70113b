/**
 * Retrieval stage, the ranker seam (METHOD.md §5.4, §5.6): a ranker orders one pool of legal
 * candidates and keeps the top `limit`. The retriever (retriever.ts) builds the pools and hands each
 * to the method's ranker with the score channels it may read; it never branches on a ranker's name,
 * so a new ranking is a new ranker part (lib/methods/parts.ts), not a new branch. The two rankers of
 * the paper live here: `hybrid` (min–max normalised dense + BM25, optional same-type bonus, rank.ts)
 * and `random` (random_same_type's seeded shuffle). Both are pure over the context they are given.
 * @module
 */
import { MeritError } from "../errors.ts";
import { PyRandom, randomSameTypeSeed } from "../random.ts";
import type { MemoryEntry, Polarity } from "../memory/entry.ts";
import { channelWeights, topRanked, type Channels } from "./rank.ts";
import type { PoolKey } from "./retrieval-log.ts";

/** One pool to rank: memory rows of its legal (or typed) candidates, in memory order. */
export interface RankPool {
  key: PoolKey;
  polarity: Polarity | null;
  /** Entries to keep. */
  limit: number;
  candidates: readonly number[];
}

/** Dense scores of some rows; `rows` may be an HNSW shortlist of the rows asked for (dense.ts). */
export interface DenseRows {
  rows: readonly number[];
  scores: ArrayLike<number>;
}

/**
 * What a ranker may read about the current repair step and the memory: the score channels, and
 * for rankers that need more than query-to-entry scores (a diversity reranker such as MMR) the
 * query's text and vector and each candidate's vector and entry. Everything is a read-only view of
 * what the retriever already holds (no copy per call); do not mutate what these return.
 */
export interface RankContext {
  queryId: string;
  repairIteration: number;
  /** The current error type (`Unknown` for null). */
  errorType: string;
  /** true when the planner's hard type filter applied at this step (a soft bonus then stays off). */
  typeFilterApplied: boolean;
  /** random_same_type's base seed (METHOD.md §5.6: 42; config `random_seed`). */
  randomSeed: number;
  /** Raw inner products with the query for `rows` (only when the ranker reads the dense channel). */
  denseScores(rows: readonly number[], keep: number): DenseRows;
  /** Raw BM25 scores over `rows` against the query text (§5.2). */
  bm25Scores(rows: readonly number[]): ArrayLike<number>;
  /** true when the entry of `row` has the current error type. */
  hasType(row: number): boolean;
  entryId(row: number): string;
  /** The query string both channels score against (METHOD.md §5.1: question, SQL, failure context, type). */
  queryText: string;
  /**
   * The L2-normalised query embedding. Only for a ranker that declares the dense channel: that
   * declaration is what makes the retriever embed the query (one embedding call), so a ranker
   * without it embeds nothing and this throws.
   */
  queryVector(): ArrayLike<number>;
  /** The L2-normalised stored vector of `row` (METHOD.md §4.6): the memory's own array (a view into its vector arena), not a copy. */
  vector(row: number): ArrayLike<number>;
  /**
   * The memory entry of `row` — its text fields (question, schema, failure_context,
   * attempted_sql_delta, successful_direction) and metadata (polarity, error_type, source_db_id,
   * source_stream_position, confirmation/success/failure counts): the store's immutable object, not a copy.
   */
  entry(row: number): Readonly<MemoryEntry>;
}

/** A kept candidate with the scores the retrieval log stores (0 where a ranker has none). */
export interface RankedRow {
  row: number;
  dense: number;
  bm25: number;
  typeMatch: 0 | 1;
  final: number;
}

/**
 * Orders one pool. `channels` says which score channels it reads: `dense` makes the retriever embed
 * the query. `vectors: false` declares that it reads no entry vectors either (`ctx.vector` then
 * throws): a method whose ranker reads neither stores no entry vectors and never calls the embedder
 * (issue 22 §1; `readsVectors`). A ranker that does not declare `vectors` gets them, as before.
 */
export interface Ranker {
  readonly channels: Channels;
  /** false: `rank` never calls `ctx.vector` (nor `queryVector`); absent or true: it may. Cannot be false with the dense channel. */
  readonly vectors?: boolean;
  /** Same-type bonus when no hard filter applied (0 = none); the log's type_match_used_as_soft_score. */
  readonly typeBonus: number;
  rank(pool: RankPool, ctx: RankContext): RankedRow[];
}

/**
 * `hybrid` (METHOD.md §5.4): per pool, min–max normalised dense and BM25 scores fused with the
 * channel weights renormalised over the channels in use (a weight of 0 turns a channel off and it is
 * never computed), plus `typeBonus` for same-type entries when no hard filter applied; Python-exact
 * rounding and the five-key sort of rank.ts.
 */
export class HybridRanker implements Ranker {
  readonly channels: Channels;
  /** Only the dense channel reads vectors: with dense_weight 0 (no_dense_rerank) none are stored. */
  readonly vectors: boolean;
  readonly weights: { dense: number; bm25: number };
  readonly typeBonus: number;
  constructor(base: { dense: number; bm25: number }, typeBonus: number) {
    this.typeBonus = typeBonus;
    this.channels = { dense: base.dense > 0, bm25: base.bm25 > 0 };
    this.vectors = this.channels.dense;
    this.weights = channelWeights(this.channels, base);
  }

  rank(pool: RankPool, ctx: RankContext): RankedRow[] {
    const dense: DenseRows = this.channels.dense ? ctx.denseScores(pool.candidates, pool.limit) : { rows: pool.candidates, scores: new Float64Array(pool.candidates.length) };
    const bm25 = this.channels.bm25 ? ctx.bm25Scores(dense.rows) : new Float64Array(dense.rows.length);
    const typeBonus = this.typeBonus > 0 && !ctx.typeFilterApplied ? this.typeBonus : 0;
    const columns = {
      dense: dense.scores,
      bm25,
      typeMatch: (i: number): 0 | 1 => (ctx.hasType(dense.rows[i]) ? 1 : 0),
      entryId: (i: number) => ctx.entryId(dense.rows[i]),
    };
    return topRanked(columns, { ...this.weights, typeBonus }, pool.limit).map((r) => ({ row: dense.rows[r.index], dense: r.dense, bm25: r.bm25, typeMatch: r.typeMatch, final: r.final }));
  }
}

/**
 * `random` (random_same_type, METHOD.md §5.6): the pool's rows shuffled with PyRandom seeded from
 * `random_seed|query_id|repair_iteration|polarity` (the combined pool uses `positive`); the first
 * `limit` are kept and every logged score is 0. Reads no channel and no vector, so nothing is embedded.
 */
export class RandomRanker implements Ranker {
  readonly channels: Channels = { dense: false, bm25: false };
  readonly vectors = false;
  readonly typeBonus = 0;

  rank(pool: RankPool, ctx: RankContext): RankedRow[] {
    const order = [...pool.candidates];
    new PyRandom(randomSameTypeSeed(ctx.randomSeed, ctx.queryId, ctx.repairIteration, pool.polarity ?? "positive")).shuffle(order);
    return order.slice(0, pool.limit).map((row) => ({ row, dense: 0, bm25: 0, typeMatch: 0, final: 0 }));
  }
}

/**
 * Whether a method with `ranker` needs entry vectors in its memory: the dense channel reads them, and
 * so may any ranker that does not declare `vectors: false`. Throws one line for the contradiction of
 * the dense channel with `vectors: false`.
 */
export function readsVectors(ranker: Ranker, who: string): boolean {
  if (ranker.channels.dense && ranker.vectors === false)
    throw new MeritError(`${who} declares the dense channel and vectors: false, but dense scores read the entry vectors; drop vectors: false or the dense channel`);
  return ranker.channels.dense || ranker.vectors !== false;
}
