/**
 * Retrieval stage (METHOD.md §5.3): dense scores = inner product of L2-normalised vectors, over a
 * candidate pool given as memory rows.
 *
 * Choice: up to `exactPoolLimit` candidates (default 5,000) every candidate is scored exactly
 * (float64 dot over Float32Array), which is what the reference does and covers every paper run
 * (a pool never exceeds the number of episodes, ≤ 1,534). Above the limit the pool is first cut to
 * an HNSW shortlist (hnswlib-node, space "ip", distance = 1 − dot): `max(4·k, minShortlist)`
 * nearest eligible rows, searched with ef ≥ the shortlist size and filtered by pool membership
 * inside the search, then rescored exactly. The caller must then use the shortlist as the pool
 * (BM25 corpus and min–max included), so results above the limit are approximate by design and
 * reported as `mode: "hnsw"`. The index is built lazily the first time a pool exceeds the limit,
 * then kept in step with the memory on every call: new rows are added (resizeIndex, doubling) and
 * a merged row's new vector replaces the old one (addPoint on an existing label updates it).
 * Known limit: on unstructured random 1,024-dim vectors the default shortlist (64, ef 64) finds
 * few of the exact top 4 (recall@4 0.035 at 100,000 rows, bench/retrieval.ts); raise
 * `efSearch`/`minShortlist` or `exactPoolLimit` when exactness matters more than latency.
 * @module
 */
import hnswlib from "hnswlib-node";
import { dot } from "./vector.ts";

const { HierarchicalNSW } = hnswlib;
type Hnsw = InstanceType<typeof HierarchicalNSW>;

/** Options of the dense scorer; every field has a default. */
export interface DenseIndexOptions {
  /** Pools up to this size are scored exactly; larger pools go through HNSW. Default 5,000. */
  exactPoolLimit?: number;
  /** HNSW graph degree M. Default 16. */
  m?: number;
  /** HNSW construction beam. Default 200. */
  efConstruction?: number;
  /** Minimum HNSW search beam. Default 64 (raised to the shortlist size when larger). */
  efSearch?: number;
  /** Minimum shortlist size above the exact limit. Default 64. */
  minShortlist?: number;
  /** hnswlib level-generator seed (build is deterministic for a given insertion order). Default 100. */
  seed?: number;
}

/** Dense scores for (possibly a shortlist of) the candidate rows. */
export interface DenseScoring {
  /** Rows scored, in the order of the input candidate rows (a subset above the exact limit). */
  rows: number[];
  /** Inner products aligned with `rows`. */
  scores: number[];
  /** `exact` (whole pool) or `hnsw` (shortlist, approximate). */
  mode: "exact" | "hnsw";
}

/** Exact inner products of `query` with `vectors[row]` for each row. */
export function exactDenseScores(query: Float32Array, vectors: readonly Float32Array[], rows: readonly number[]): number[] {
  return rows.map((row) => dot(query, vectors[row]));
}

/** Dense scorer over one memory's vectors, with a lazily built HNSW index for large pools. */
export class DenseIndex {
  readonly dimension: number;
  readonly exactPoolLimit: number;
  readonly #opts: Required<Omit<DenseIndexOptions, "exactPoolLimit">>;
  #hnsw: Hnsw | null = null;
  /** The vector object indexed for each row (identity tells which rows changed). */
  #indexed: Float32Array[] = [];

  constructor(dimension: number, opts: DenseIndexOptions = {}) {
    this.dimension = dimension;
    this.exactPoolLimit = opts.exactPoolLimit ?? 5000;
    this.#opts = {
      m: opts.m ?? 16,
      efConstruction: opts.efConstruction ?? 200,
      efSearch: opts.efSearch ?? 64,
      minShortlist: opts.minShortlist ?? 64,
      seed: opts.seed ?? 100,
    };
  }

  /** Number of rows in the HNSW index (0 until a pool first exceeds the exact limit or `sync` is called). */
  get indexedCount(): number {
    return this.#indexed.length;
  }

  /** Brings the HNSW index up to date with `vectors` (row order): adds new rows, replaces changed ones. */
  sync(vectors: readonly Float32Array[]): void {
    if (this.#hnsw === null) {
      this.#hnsw = new HierarchicalNSW("ip", this.dimension);
      this.#hnsw.initIndex(Math.max(1024, vectors.length), this.#opts.m, this.#opts.efConstruction, this.#opts.seed);
    }
    const index = this.#hnsw;
    if (vectors.length > index.getMaxElements()) index.resizeIndex(Math.max(vectors.length, 2 * index.getMaxElements()));
    for (let row = 0; row < vectors.length; row++) {
      if (this.#indexed[row] === vectors[row]) continue;
      index.addPoint(Array.from(vectors[row]), row);
      this.#indexed[row] = vectors[row];
    }
  }

  /**
   * Dense scores of `candidateRows` for `query` (exact up to `exactPoolLimit`, else an HNSW
   * shortlist of max(4·k, minShortlist) rows rescored exactly). `k` = how many will be kept.
   */
  scores(query: Float32Array, vectors: readonly Float32Array[], candidateRows: readonly number[], k: number): DenseScoring {
    if (candidateRows.length <= this.exactPoolLimit)
      return { rows: [...candidateRows], scores: exactDenseScores(query, vectors, candidateRows), mode: "exact" };
    this.sync(vectors);
    const index = this.#hnsw as Hnsw;
    const shortlist = Math.min(candidateRows.length, Math.max(4 * k, this.#opts.minShortlist));
    index.setEf(Math.max(this.#opts.efSearch, shortlist));
    const inPool = new Set(candidateRows);
    const found = new Set(index.searchKnn(Array.from(query), shortlist, (label) => inPool.has(label)).neighbors);
    const rows = candidateRows.filter((row) => found.has(row));
    return { rows, scores: exactDenseScores(query, vectors, rows), mode: "hnsw" };
  }
}
