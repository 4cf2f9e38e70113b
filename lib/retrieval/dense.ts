/**
 * Retrieval stage (METHOD.md §5.3): dense scores = inner product of L2-normalised vectors, over a
 * candidate pool given as memory rows.
 *
 * Choice: up to `exactPoolLimit` candidates (default 5,000) every candidate is scored exactly
 * (float64 dot over Float32Array, summed in index order), which is what the reference does and
 * covers every paper run (a pool never exceeds the number of episodes, ≤ 1,534). Above the limit
 * the pool is first cut to a shortlist of `max(4·k, minShortlist)` rows by HNSW (hnswlib-node,
 * space "ip", distance = 1 − dot) and the shortlist is rescored exactly; the caller then uses the
 * shortlist as the pool (BM25 corpus and min–max included), so results above the limit are
 * approximate by design and reported as `mode: "hnsw"`.
 *
 * The HNSW graph is sharded by a key the caller gives per row (the retriever uses polarity +
 * error type), because every pool of §5.5–5.6 is a union of such shards minus a few ineligible
 * rows: a typed pool is one shard searched without a filter. The previous single graph over the
 * whole memory needed a filter callback into JS for every visited node (filtered searches ran
 * several times slower in a 10,000-row test) and, at ef 64, found few true neighbours (recall@4
 * 0.035 at 100,000 rows); it also had to be built over every row, not just the shards a pool needs.
 * Each shard returns its shortlist (a filter callback only drops the shard's rows outside the
 * pool); a shard with no more pool rows than the shortlist is taken whole, and the union is cut to
 * the best `shortlist` rows by exact score. Search beam ef = max(efSearch, shortlist).
 * Defaults (M 16, efConstruction 64, efSearch 4,096) were chosen with bench/retrieval.ts on random
 * unit vectors in 1,024 dims, the hardest case for HNSW (real embeddings are clustered): on the
 * ~10,000-row shards of a 100,000-row memory, dense recall@4 of the 64-row shortlist was
 * 0.28–0.29 / 0.85–0.87 / 0.985–0.990 / 1.000 at ef 64 / 512 / 1,024 / 2,048 (two runs). At
 * 2,048 the search already visits most of such a shard, so 4,096 (≥ 4,000, the search width the
 * spec asks for under either reading of "ef ≥ 4k") cost ~0.5 ms more per retrieval call. A denser
 * graph (M 32, efConstruction 200) reached 1.000 at ef 1,024 but searched no faster and took twice
 * as long to build (one 10,000-row shard: 5.7 vs 7.1 ms per search, 12 vs 26 s to build).
 * A shard's graph is built the first time a pool needs it, then kept in step with the memory:
 * rows whose vector object changed (an append, or a merge that re-embedded a row) are re-read on
 * the next call (not re-checked at all while the memory's `revision` is unchanged); a row whose
 * key changed is deleted from its old shard. The graph (hence the
 * shortlist) depends only on the sequence of memory states retrieval saw, never on timing.
 * @module
 */
import { createRequire } from "node:module";
import type hnswlibModule from "hnswlib-node";

type Hnsw = InstanceType<typeof hnswlibModule.HierarchicalNSW>;
let hnswlib: typeof hnswlibModule | null = null;

/**
 * hnswlib-node, loaded on first use rather than on import: its native add-on is then not loaded by
 * commands that never search (`merit report`, `merit run --help`), and a missing add-on (an
 * interrupted `npm ci`) fails inside the command, where the CLI turns it into one line.
 */
function newHnswIndex(space: "ip", dimension: number): Hnsw {
  hnswlib ??= createRequire(import.meta.url)("hnswlib-node") as typeof hnswlibModule;
  return new hnswlib.HierarchicalNSW(space, dimension);
}

/** Default HNSW search beam (module comment). */
export const DEFAULT_EF_SEARCH = 4096;

/** Options of the dense scorer; every field has a default. */
export interface DenseIndexOptions {
  /** Pools up to this size are scored exactly; larger pools go through HNSW. Default 5,000. */
  exactPoolLimit?: number;
  /** HNSW graph degree M. Default 16. */
  m?: number;
  /** HNSW construction beam. Default 64. */
  efConstruction?: number;
  /** Minimum HNSW search beam. Default 4,096 (raised to the shortlist size when larger). */
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

/** Shard key of a row (rows with equal keys share one HNSW graph). */
export type ShardKeyOf = (row: number) => string;

/**
 * Inner product summed in index order in float64 — the same additions in the same order as
 * `dot` in vector.ts (so bit-identical), unrolled by four with a single accumulator for speed.
 */
export function dotInOrder(a: Float32Array, b: Float32Array): number {
  const n = a.length;
  let s = 0;
  let i = 0;
  for (; i + 3 < n; i += 4) {
    s += a[i] * b[i];
    s += a[i + 1] * b[i + 1];
    s += a[i + 2] * b[i + 2];
    s += a[i + 3] * b[i + 3];
  }
  for (; i < n; i++) s += a[i] * b[i];
  return s;
}

/**
 * Exact inner products of `query` with `vectors[row]` for each row: each score is `dotInOrder`'s
 * (bit-identical), but four rows are summed side by side, so four independent chains of float64
 * additions keep the CPU busy where one chain waits on each addition's latency.
 */
export function exactDenseScores(query: Float32Array, vectors: readonly Float32Array[], rows: ArrayLike<number>): number[] {
  const n = query.length;
  const out = new Array<number>(rows.length);
  let i = 0;
  for (; i + 3 < rows.length; i += 4) {
    const a = vectors[rows[i]];
    const b = vectors[rows[i + 1]];
    const c = vectors[rows[i + 2]];
    const d = vectors[rows[i + 3]];
    if (a.length !== n || b.length !== n || c.length !== n || d.length !== n) {
      for (let j = i; j < i + 4; j++) out[j] = dotInOrder(query, vectors[rows[j]]);
      continue;
    }
    let sa = 0;
    let sb = 0;
    let sc = 0;
    let sd = 0;
    for (let k = 0; k < n; k++) {
      const q = query[k];
      sa += q * a[k];
      sb += q * b[k];
      sc += q * c[k];
      sd += q * d[k];
    }
    out[i] = sa;
    out[i + 1] = sb;
    out[i + 2] = sc;
    out[i + 3] = sd;
  }
  for (; i < rows.length; i++) out[i] = dotInOrder(query, vectors[rows[i]]);
  return out;
}

/** One HNSW graph over the rows of one shard key. */
interface Shard {
  index: Hnsw | null;
  /** Rows of this shard whose current vector is not yet in `index`. */
  pending: number[];
  /** Rows whose current key is this shard's. */
  size: number;
}

/** Dense scorer over one memory's vectors, with lazily built sharded HNSW graphs for large pools. */
export class DenseIndex {
  readonly dimension: number;
  readonly exactPoolLimit: number;
  readonly #opts: Required<Omit<DenseIndexOptions, "exactPoolLimit">>;
  readonly #shards = new Map<string, Shard>();
  /** Current shard of each row. */
  #shardOf: Shard[] = [];
  /** The shard whose graph holds each row's current vector as a live point (null: none). */
  #heldBy: (Shard | null)[] = [];
  /** The vector object last seen for each row (identity tells which rows changed). */
  #seen: Float32Array[] = [];
  #indexed = 0;
  /** The memory revision of the last sync (undefined: compare rows). */
  #revision: number | undefined = undefined;
  /** 1 at the current pool's rows during a filtered search, else all 0 (kept: fresh large buffers are slow). */
  #poolMask = new Uint8Array(0);

  constructor(dimension: number, opts: DenseIndexOptions = {}) {
    this.dimension = dimension;
    this.exactPoolLimit = opts.exactPoolLimit ?? 5000;
    this.#opts = {
      m: opts.m ?? 16,
      efConstruction: opts.efConstruction ?? 64,
      efSearch: opts.efSearch ?? DEFAULT_EF_SEARCH,
      minShortlist: opts.minShortlist ?? 64,
      seed: opts.seed ?? 100,
    };
  }

  /** Number of row vectors held by the HNSW graphs (0 until a pool first needs one). */
  get indexedCount(): number {
    return this.#indexed;
  }

  /** Sets the HNSW search beam of later searches (the bench sweeps it). */
  setEfSearch(ef: number): void {
    this.#opts.efSearch = ef;
  }

  /**
   * Records which rows changed since the last call (new rows, replaced vector objects) and their
   * shard keys; graphs are updated lazily when a search needs them. `build` = shard keys whose
   * graphs to bring up to date now (default none). `revision` = the memory's change counter, if it
   * has one: rows are not re-checked while it is unchanged.
   */
  sync(vectors: readonly Float32Array[], keyOf: ShardKeyOf = () => "", build: (key: string) => boolean = () => false, revision?: number): void {
    const seen = this.#seen;
    const unchanged = revision !== undefined && revision === this.#revision && vectors.length === seen.length;
    this.#revision = revision;
    for (let row = 0; !unchanged && row < vectors.length; row++) {
      if (seen[row] === vectors[row]) continue;
      seen[row] = vectors[row];
      const key = keyOf(row);
      let shard = this.#shards.get(key);
      if (shard === undefined) this.#shards.set(key, (shard = { index: null, pending: [], size: 0 }));
      const old = this.#shardOf[row];
      if (old !== shard) {
        if (old !== undefined) old.size -= 1;
        shard.size += 1;
        this.#shardOf[row] = shard;
      }
      const holder = this.#heldBy[row];
      if (holder !== null && holder !== undefined && holder !== shard) {
        (holder.index as Hnsw).markDelete(row);
        this.#heldBy[row] = null;
        this.#indexed -= 1;
      }
      shard.pending.push(row);
    }
    for (const [key, shard] of this.#shards) if (build(key)) this.#flush(shard, vectors);
  }

  /** Sets the pool rows of the mask to `value` (growing it to `size` rows first). */
  #markPool(rows: readonly number[], size: number, value: 0 | 1): void {
    if (this.#poolMask.length < size) this.#poolMask = new Uint8Array(Math.max(size, 2 * this.#poolMask.length));
    const mask = this.#poolMask;
    for (const row of rows) mask[row] = value;
  }

  /** Adds the shard's pending rows to its graph (creating or growing it). */
  #flush(shard: Shard, vectors: readonly Float32Array[]): Hnsw {
    let index = shard.index;
    if (index === null) {
      index = newHnswIndex("ip", this.dimension);
      index.initIndex(Math.max(1024, shard.size), this.#opts.m, this.#opts.efConstruction, this.#opts.seed);
      shard.index = index;
    }
    for (const row of shard.pending) {
      if (this.#shardOf[row] !== shard) continue; // moved on since
      if (this.#heldBy[row] !== shard) {
        if (index.getCurrentCount() >= index.getMaxElements()) index.resizeIndex(2 * index.getMaxElements());
        this.#indexed += 1;
      }
      index.addPoint(Array.from(vectors[row]), row); // an existing label is updated (and undeleted)
      this.#heldBy[row] = shard;
    }
    shard.pending = [];
    return index;
  }

  /**
   * Dense scores of `candidateRows` for `query` (exact up to `exactPoolLimit`, else an HNSW
   * shortlist of max(4·k, minShortlist) rows rescored exactly). `k` = how many will be kept;
   * `keyOf` = shard key per row (default: one shard); `revision` as for `sync`.
   */
  scores(query: Float32Array, vectors: readonly Float32Array[], candidateRows: readonly number[], k: number, keyOf?: ShardKeyOf, revision?: number): DenseScoring {
    if (candidateRows.length <= this.exactPoolLimit)
      return { rows: [...candidateRows], scores: exactDenseScores(query, vectors, candidateRows), mode: "exact" };
    this.sync(vectors, keyOf, undefined, revision);
    const shortlist = Math.min(candidateRows.length, Math.max(4 * k, this.#opts.minShortlist));
    const groups = this.#groupByShard(candidateRows);
    const found: number[] = [];
    const queryArray = Array.from(query);
    let masked = false;
    try {
      for (const [shard, group] of groups) {
        if (group.length <= shortlist) {
          found.push(...group);
          continue;
        }
        const index = this.#flush(shard, vectors);
        index.setEf(Math.max(this.#opts.efSearch, shortlist));
        let filter: ((label: number) => boolean) | undefined;
        if (group.length < shard.size) {
          if (!masked) this.#markPool(candidateRows, vectors.length, 1);
          masked = true;
          const mask = this.#poolMask;
          filter = (label) => mask[label] === 1;
        }
        found.push(...index.searchKnn(queryArray, shortlist, filter).neighbors);
      }
    } finally {
      if (masked) this.#markPool(candidateRows, vectors.length, 0);
    }
    const foundScores = exactDenseScores(query, vectors, found);
    let kept = found.map((_, i) => i);
    if (found.length > shortlist) kept = kept.sort((a, b) => foundScores[b] - foundScores[a] || found[a] - found[b]).slice(0, shortlist);
    const scoreOf = new Map(kept.map((i) => [found[i], foundScores[i]]));
    // The kept rows in candidate order: mark them, walk the candidates once, unmark.
    const keptRows = [...scoreOf.keys()];
    this.#markPool(keptRows, vectors.length, 1);
    const mask = this.#poolMask;
    const rows: number[] = [];
    try {
      for (let i = 0; i < candidateRows.length; i++) if (mask[candidateRows[i]] === 1) rows.push(candidateRows[i]);
    } finally {
      this.#markPool(keptRows, vectors.length, 0);
    }
    return { rows, scores: rows.map((row) => scoreOf.get(row) as number), mode: "hnsw" };
  }

  /** Candidate rows grouped by current shard, in first-seen order (one group, no copy, when all share a shard). */
  #groupByShard(candidateRows: readonly number[]): Map<Shard, readonly number[]> {
    const shardOf = this.#shardOf;
    const first = shardOf[candidateRows[0]];
    let single = true;
    for (let i = 1; i < candidateRows.length && single; i++) single = shardOf[candidateRows[i]] === first;
    if (single) return new Map([[first, candidateRows]]);
    const groups = new Map<Shard, number[]>();
    for (const row of candidateRows) {
      const shard = shardOf[row];
      const group = groups.get(shard);
      if (group === undefined) groups.set(shard, [row]);
      else group.push(row);
    }
    return groups;
  }
}

