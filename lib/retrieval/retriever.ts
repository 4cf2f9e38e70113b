/**
 * Retrieval stage (METHOD.md §5.1, §5.5–5.7): for one repair step, builds the legal and typed
 * pools of each polarity (with the fallback at min_typed_pool) as the method's pool planner says,
 * hands each pool to the method's ranker part (ranker.ts: hybrid dense + BM25 with optional type
 * bonus, the seeded random shuffle, or a plugin's) with the score channels it declares and
 * read-only views of the query and the candidates' vectors and entries (ranker.ts), keeps what
 * the ranker keeps and writes the retrieval log record. It never branches on a ranker's name.
 * Reads the memory, never writes it.
 *
 * A channel a policy turns off (no_dense_rerank, no_bm25) is not computed at all: its scores are 0
 * for every candidate, for the fused score and for the tie-breaking keys alike (ties then fall
 * through to the next keys of METHOD.md §5.4), and it is logged as 0. So no_dense_rerank never
 * embeds the query and counts no embedding call, as random_same_type; the other policies embed the
 * query once (one embedding call) whenever some pool is non-empty (§5.3). A ranker that reads no
 * vectors (policy `vectors: false`: those two) gets none: `ctx.vector` throws (its memory stores none).
 *
 * Choice where METHOD.md is silent: `fallback_used` is true for a hard-filtered pool with fewer than
 * min_typed_pool typed entries even when that pool is empty.
 *
 * Per call the cost is one scan of the memory (memory-columns.ts: typed-array copies of the fields
 * eligibility reads), the dense scores (dense.ts; HNSW shards keyed by polarity|error_type above the
 * exact limit), BM25 over interned per-row documents, and the ranking, which rounds and sorts only
 * the candidates that can reach the top (rank.ts `topRanked`); none of it changes what is computed.
 * @module
 */
import { HIGH_RELIABILITY_TYPES, type ErrorType } from "../classify.ts";
import { MeritError } from "../errors.ts";
import type { Embedder } from "../llm/types.ts";
import type { MemoryEntry, Polarity } from "../memory/entry.ts";
import { ineligibilityReason, type EligibilityContext } from "../memory/eligibility.ts";
import type { MemoryStore } from "../memory/store.ts";
import { bm25Tokens } from "./bm25.ts";
import { DenseIndex, type DenseIndexOptions, type ShardKeyOf } from "./dense.ts";
import type { RetrievalPolicy } from "./retrieval-policy.ts";
import { MemoryColumns } from "./memory-columns.ts";
import type { RankContext } from "./ranker.ts";
import type { PoolKey, RetrievalLogRecord } from "./retrieval-log.ts";
import { checkDimension, l2Normalize } from "../vector.ts";

/** The current repair step as retrieval sees it. */
export interface RetrievalQuery {
  queryId: string;
  dbId: string;
  /** 0-based stream position of the current episode. */
  streamPosition: number;
  /** 1-based repair step. */
  repairIteration: number;
  /** Classifier type of the last outcome; null is treated as `Unknown` (METHOD.md §3). */
  currentErrorType: string | null;
  question: string;
  /** SQL of the last attempt. */
  currentSql: string;
  /** failure_context of the last attempt (`attempted_sql=…; status=…; db_error=…`). */
  failureContext: string;
}

/** One retrieved entry with its stored scores. */
export interface RankedEntry {
  entry: MemoryEntry;
  row: number;
  pool: PoolKey;
  /** Normalised, rounded dense component (0 for random). */
  dense: number;
  bm25: number;
  typeMatch: 0 | 1;
  final: number;
}

export interface RetrievalResult {
  /**
   * The positive pool, ranked; a combined pool (dynamic_rag) comes here whole, entries of both
   * polarities when its writer stores negatives (the episode shows each under its own heading).
   */
  positives: RankedEntry[];
  /** Entries for the negative prompt section, ranked. */
  negatives: RankedEntry[];
  log: RetrievalLogRecord;
  /** Query embeddings computed (0 or 1). */
  embeddingCalls: number;
}

export interface RetrieverOptions extends DenseIndexOptions {
  /** random_same_type base seed (METHOD.md §5.6: 42). */
  randomSeed?: number;
  /** Dense indexes to use (and fill) per memory, e.g. shared between retrievers; default: private. */
  denseIndexes?: WeakMap<MemoryStore, DenseIndex>;
}

/** Configured retrieval: keeps one dense index per memory and BM25 document stats per entry. */
export interface Retriever {
  retrieve(memory: MemoryStore, query: RetrievalQuery, policy: RetrievalPolicy, embedder: Embedder): Promise<RetrievalResult>;
}

/** A returned entry that breaks causal eligibility — a kit bug, never a user error. */
export class CausalityViolationError extends MeritError {
  constructor(entryId: string, queryId: string, reason: string) {
    super(`retrieval for query ${queryId} returned entry ${entryId}: ${reason}; this is a bug in the retriever, please report it`, { exitCode: 70 });
    this.name = "CausalityViolationError";
  }
}

/** HNSW shard of an entry (dense.ts): polarity and error type, so a typed pool is one shard. */
export function denseShardKey(entry: MemoryEntry): string {
  return `${entry.polarity}|${entry.error_type}`;
}

/** The query string for BM25 and dense (METHOD.md §5.1): question, SQL, failure context, type. */
export function retrievalQueryText(query: RetrievalQuery): string {
  return [query.question, query.currentSql, query.failureContext, query.currentErrorType ?? "Unknown"].join(" ").trim();
}

interface PoolSpec {
  key: PoolKey;
  polarity: Polarity | null;
  limit: number;
}

function poolSpecs(policy: RetrievalPolicy): PoolSpec[] {
  if (policy.pools === "combined") return [{ key: "combined", polarity: null, limit: policy.limits.combined }];
  const pools: PoolSpec[] = [{ key: "positive", polarity: "positive", limit: policy.limits.positive }];
  if (policy.pools === "by_polarity") pools.push({ key: "negative", polarity: "negative", limit: policy.limits.negative });
  return pools;
}

/** Builds a retriever (STYLE.md §2.4: configure once, then call per repair step). */
export function createRetriever(opts: RetrieverOptions = {}): Retriever {
  const randomSeed = opts.randomSeed ?? 42;
  const denseIndexes = opts.denseIndexes ?? new WeakMap<MemoryStore, DenseIndex>();
  const columnsByMemory = new WeakMap<MemoryStore, MemoryColumns>();
  const columnsOf = (memory: MemoryStore, entries: readonly MemoryEntry[]): MemoryColumns => {
    let columns = columnsByMemory.get(memory);
    if (columns === undefined) columnsByMemory.set(memory, (columns = new MemoryColumns()));
    columns.sync(entries, memory.revision);
    return columns;
  };
  const denseIndexOf = (memory: MemoryStore): DenseIndex => {
    let index = denseIndexes.get(memory);
    if (index === undefined) denseIndexes.set(memory, (index = new DenseIndex(memory.dimension, opts)));
    return index;
  };

  async function retrieve(memory: MemoryStore, query: RetrievalQuery, policy: RetrievalPolicy, embedder: Embedder): Promise<RetrievalResult> {
    const errorType = query.currentErrorType ?? "Unknown";
    const filterApplied =
      policy.typeFilter === "always" || (policy.typeFilter === "high_reliability" && HIGH_RELIABILITY_TYPES.has(errorType as ErrorType));
    const entries = memory.entries();
    const columns = columnsOf(memory, entries);
    const specs = poolSpecs(policy);
    const contexts = specs.map(
      (spec): EligibilityContext => ({
        streamPosition: query.streamPosition,
        queryId: query.queryId,
        dbId: query.dbId,
        polarity: spec.polarity,
        causal: policy.causal,
        excludeSameDatabase: policy.excludeSameDatabase,
      }),
    );
    const scanned = columns.pools(contexts, errorType, ({ typed }) => filterApplied && typed >= policy.minTypedPool);
    const pools = specs.map((spec, i) => {
      const { legal, typed, rows } = scanned[i];
      return { ...spec, ctx: contexts[i], legal, typed, fallback: filterApplied && typed < policy.minTypedPool, candidates: rows };
    });

    const queryText = retrievalQueryText(query);
    const ranker = policy.ranker;
    let queryVector: Float32Array | null = null;
    if (ranker.channels.dense && pools.some((p) => p.candidates.length > 0)) {
      const [raw] = await embedder.embed([queryText]);
      checkDimension(raw, memory.dimension, "query embedding");
      queryVector = l2Normalize(raw);
    }
    let queryTokens: string[] | null = null;
    let denseSearch: RetrievalLogRecord["dense_search"] = queryVector === null ? "none" : "exact";
    const shardKeyOf: ShardKeyOf = (row) => denseShardKey(entries[row]);
    let vectors: readonly Float32Array[] | null = null;
    const context: RankContext = {
      queryId: query.queryId,
      repairIteration: query.repairIteration,
      errorType,
      typeFilterApplied: filterApplied,
      randomSeed,
      denseScores: (rows, keep) => {
        if (queryVector === null) throw new MeritError(`ranker of method ${policy.name} asked for dense scores but does not declare the dense channel`, { exitCode: 70 });
        const dense = denseIndexOf(memory).scores(queryVector, (vectors ??= memory.vectors()), rows, keep, shardKeyOf, memory.revision);
        if (dense.mode === "hnsw") denseSearch = "hnsw";
        return dense;
      },
      bm25Scores: (rows) => columns.bm25Scores((queryTokens ??= bm25Tokens(queryText)), rows),
      hasType: (row) => columns.hasType(row, errorType),
      entryId: (row) => entries[row].entry_id,
      queryText,
      queryVector: () => {
        if (queryVector === null) throw new MeritError(`ranker of method ${policy.name} asked for the query vector but does not declare the dense channel`, { exitCode: 70 });
        return queryVector;
      },
      vector: (row) => {
        if (!policy.vectors) throw new MeritError(`ranker of method ${policy.name} asked for an entry vector but declares vectors: false, so its memory stores none; drop the declaration`, { exitCode: 70 });
        return (vectors ??= memory.vectors())[row];
      },
      entry: (row) => entries[row],
    };

    const results = pools.map((pool): RankedEntry[] =>
      pool.candidates.length === 0 ? [] : ranker.rank(pool, context).map((r) => ({ entry: entries[r.row], row: r.row, pool: pool.key, dense: r.dense, bm25: r.bm25, typeMatch: r.typeMatch, final: r.final })),
    );

    pools.forEach((pool, i) => {
      for (const ranked of results[i]) {
        const reason = ineligibilityReason(ranked.entry, pool.ctx);
        if (reason !== null) throw new CausalityViolationError(ranked.entry.entry_id, query.queryId, reason);
      }
    });
    const all = results.flat();
    const byPool = <T>(f: (p: (typeof pools)[number]) => T): Partial<Record<PoolKey, T>> => Object.fromEntries(pools.map((p) => [p.key, f(p)]));
    const log: RetrievalLogRecord = {
      query_id: query.queryId,
      repair_iteration: query.repairIteration,
      current_error_type: errorType,
      legal_pool_size: pools.reduce((s, p) => s + p.legal, 0),
      typed_pool_size: pools.reduce((s, p) => s + p.typed, 0),
      fallback_used: pools.some((p) => p.fallback),
      type_filter_applied: filterApplied,
      type_match_used_as_soft_score: ranker.typeBonus > 0 && !filterApplied,
      retrieved_entry_ids: all.map((r) => r.entry.entry_id),
      retrieved_polarities: all.map((r) => r.entry.polarity),
      retrieved_error_types: all.map((r) => r.entry.error_type),
      source_db_ids: all.map((r) => r.entry.source_db_id),
      source_stream_positions: all.map((r) => r.entry.source_stream_position),
      dense_scores: all.map((r) => r.dense),
      bm25_scores: all.map((r) => r.bm25),
      type_match_scores: all.map((r) => r.typeMatch),
      final_scores: all.map((r) => r.final),
      method_name: policy.name,
      legal_pool_size_by_polarity: byPool((p) => p.legal),
      typed_pool_size_by_polarity: byPool((p) => p.typed),
      fallback_used_by_polarity: byPool((p) => p.fallback),
      dense_search: denseSearch,
    };
    const negatives = policy.pools === "by_polarity" ? results[1] : [];
    return { positives: results[0], negatives, log, embeddingCalls: queryVector === null ? 0 : 1 };
  }
  return { retrieve };
}

let defaultRetriever: Retriever | null = null;

/**
 * Retrieval for one repair step with the default options (exact scoring up to 5,000 candidates,
 * random seed 42). Use `createRetriever` to change them.
 */
export function retrieve(memory: MemoryStore, query: RetrievalQuery, policy: RetrievalPolicy, embedder: Embedder): Promise<RetrievalResult> {
  defaultRetriever ??= createRetriever();
  return defaultRetriever.retrieve(memory, query, policy, embedder);
}
