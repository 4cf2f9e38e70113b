/**
 * Benchmark of the retrieval stage (METHOD.md §5): p50/p95 latency of one retrieval call (both
 * polarities) over memories of 1,000 and 100,000 entries with 1,024-dim random unit vectors from a
 * seeded PyRandom (the hardest case for HNSW), and at 100,000 the HNSW recall@4 against exact
 * scoring, measured two ways on the same queries: (1) dense recall@4 — the exact top 4 of the
 * merit positive pool (one shard, ~10,000 rows) found in the HNSW shortlist, swept over ef; (2)
 * agreement of the retrieval's final 4 entries (3 positives + 1 negative) with the exact-forced
 * retrieval. (1) is what the HNSW is responsible for; (2) also moves because above the exact limit
 * the shortlist is the BM25 corpus and the min–max range (dense.ts). Prints medians; never
 * asserted in tests. The one-off HNSW build over the positive shards is timed separately; before
 * timing, one warm-up call per error type fills the caches, as a long run would. Side by side in
 * the same run: exact dense scoring with `dot` per row vs `exactDenseScores` (four rows at a time),
 * the pool scan with isEligible over entry objects vs the retriever's typed-array columns, and the
 * old search beam (ef 64) in the sweep, and after it the same dense step with a native brute-force
 * shortlist (hnswlib's BruteforceSearch) in place of HNSW. About 3–4
 * minutes at load average ~5 on 2 shared cores.
 * Run: `node bench/retrieval.ts [--large N] [--queries Q] [--ef-construction E] [--m M]
 * [--ef-sweep 64,512,1024] [--exact-limit L] [--no-type-filter]` (the last also times
 * no_type_filter at N, which builds the negative shards too).
 */
import { createRequire } from "node:module";
import { PyRandom } from "../lib/random.ts";
import type { Embedder } from "../lib/llm/types.ts";
import type { MemoryEntry } from "../lib/memory/entry.ts";
import { isEligible } from "../lib/memory/eligibility.ts";
import { SYNTHETIC_TYPES as TYPES, syntheticEntry } from "./synthetic-memory.ts";
import { VectorArena } from "../lib/memory/memory-table.ts";
import type { InsertResult, MemoryStore } from "../lib/memory/store.ts";
import { DEFAULT_EF_SEARCH, DenseIndex, exactDenseScores } from "../lib/retrieval/dense.ts";
import { MemoryColumns } from "../lib/retrieval/memory-columns.ts";
import { getMethod } from "../lib/methods/index.ts";

/** The retrieval policy of a registered memory method (MERIT's memory, lib/methods/merit-memory.ts). */
const getPolicy = (name: string) => getMethod(name).memory!;
import { createRetriever, denseShardKey, type RetrievalQuery, type RetrievalResult } from "../lib/retrieval/retriever.ts";
import { dot } from "../lib/vector.ts";

const DIM = 1024;
const WORDS = "singer concert stadium name age year capacity country song count average max min join group order".split(" ");
const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const LARGE = flag("large", 100_000);
const QUERIES = flag("queries", 50);
/** HNSW construction beam and degree (dense.ts defaults). */
const EF_CONSTRUCTION = flag("ef-construction", 64);
const M = flag("m", 16);
/** Exact pool limit (dense.ts default 5,000; lower it for a quick smoke run at a small --large). */
const EXACT_LIMIT = flag("exact-limit", 5000);
const sweepAt = args.indexOf("--ef-sweep");
const EF_SWEEP = sweepAt >= 0 ? args[sweepAt + 1].split(",").map(Number) : [64, 512, 1024, 2048, DEFAULT_EF_SEARCH];

function unitVector(rng: PyRandom): Float32Array {
  const v = new Float32Array(DIM);
  let s = 0;
  for (let i = 0; i < DIM; i++) {
    const x = rng.nextUint32() / 2 ** 31 - 1;
    v[i] = x;
    s += x * x;
  }
  const n = Math.sqrt(s);
  for (let i = 0; i < DIM; i++) v[i] /= n;
  return v;
}

/** Entry `i` of the synthetic memory (bench/synthetic-memory.ts). */
const entryAt = (rng: PyRandom, i: number): MemoryEntry => syntheticEntry(rng, i, { words: WORDS, queryId: (k) => `q${k}`, schema: "(schema omitted in the benchmark)" });

/** Read-only memory filled directly (the benchmark times retrieval, not insertion); never changes, so one revision. */
class FixedMemory implements MemoryStore {
  readonly dimension = DIM;
  readonly revision = 0;
  readonly rows: MemoryEntry[];
  readonly vecs: Float32Array[];
  constructor(rows: MemoryEntry[], vecs: Float32Array[]) {
    this.rows = rows;
    this.vecs = vecs;
  }
  get size() {
    return this.rows.length;
  }
  entries() {
    return this.rows;
  }
  vectors() {
    return this.vecs;
  }
  rowOf(id: string) {
    const i = this.rows.findIndex((e) => e.entry_id === id);
    return i < 0 ? undefined : i;
  }
  hasEpisode() {
    return false;
  }
  insert(): Promise<InsertResult> {
    throw new Error("FixedMemory is read-only");
  }
}

/** Returns pre-drawn query vectors in order. */
class QueueEmbedder implements Embedder {
  readonly identity = { kind: "bench-queue", model: "random", modelHash: "none", params: {} };
  readonly dimension = DIM;
  next = 0;
  readonly queue: Float32Array[];
  constructor(queue: Float32Array[]) {
    this.queue = queue;
  }
  async embed(texts: readonly string[]) {
    return texts.map(() => this.queue[this.next++ % this.queue.length]);
  }
  async close() {}
}

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};
const ms = (x: number) => `${x.toFixed(2)} ms`;
const secs = (t0: number) => `${((performance.now() - t0) / 1000).toFixed(1)} s`;

/** Vectors are stored as the memory stores store them (MemoryTable's VectorArena). */
function buildMemory(n: number, seed: number): FixedMemory {
  const rng = new PyRandom(seed);
  const arena = new VectorArena(DIM);
  const rows: MemoryEntry[] = [];
  const vecs: Float32Array[] = [];
  for (let i = 0; i < n; i++) {
    rows.push(entryAt(rng, i));
    vecs.push(arena.store(unitVector(rng)));
  }
  return new FixedMemory(rows, vecs);
}

interface BenchQuery {
  query: RetrievalQuery;
  vector: Float32Array;
}

/** Warm-up calls: one per error type, so every pool's BM25 stats (and HNSW shard) exist, as in a long run. */
const WARMUP = TYPES.length;

/** WARMUP + `count` queries (warm-up first, with types in TYPES order), each with its query vector. */
function benchQueries(n: number, count: number): BenchQuery[] {
  const rng = new PyRandom(99);
  return Array.from({ length: WARMUP + count }, (_, k) => ({
    query: {
      queryId: `current-${k}`,
      dbId: "db0",
      streamPosition: n, // every entry is earlier: the whole memory is legal
      repairIteration: 1,
      currentErrorType: k < WARMUP ? TYPES[k] : TYPES[rng.randbelow(TYPES.length)],
      question: `How many ${WORDS[rng.randbelow(WORDS.length)]} are there?`,
      currentSql: `SELECT count(*) FROM ${WORDS[rng.randbelow(WORDS.length)]}`,
      failureContext: "attempted_sql=SELECT 1; status=EXECUTION_ERROR; db_error=no such column: x",
    },
    vector: unitVector(rng),
  }));
}

/** Times one retrieval call per query after the warm-up calls; returns the timed results. */
async function timeRetrievals(memory: FixedMemory, policyName: string, exactPoolLimit: number, queries: BenchQuery[], label: string, denseIndexes?: WeakMap<MemoryStore, DenseIndex>) {
  const embedder = new QueueEmbedder(queries.map((q) => q.vector));
  const retriever = createRetriever({ exactPoolLimit, denseIndexes, efConstruction: EF_CONSTRUCTION, m: M });
  const policy = getPolicy(policyName);
  const warm = performance.now();
  for (const q of queries.slice(0, WARMUP)) await retriever.retrieve(memory, q.query, policy, embedder); // fills caches
  const warmup = performance.now() - warm;
  const times: number[] = [];
  const results: RetrievalResult[] = [];
  for (const q of queries.slice(WARMUP)) {
    const t0 = performance.now();
    results.push(await retriever.retrieve(memory, q.query, policy, embedder));
    times.push(performance.now() - t0);
  }
  const mode = results.at(-1)?.log.dense_search;
  console.log(
    `${label.padEnd(50)} p50 ${ms(percentile(times, 0.5)).padStart(10)}  p95 ${ms(percentile(times, 0.95)).padStart(10)}  ` +
      `(${times.length} calls, dense ${mode}; ${WARMUP} warm-up calls filling caches ${ms(warmup)})`,
  );
  return results;
}

/** Exact dense scores of a 100,000-row pool: `dot` per row (before) vs `exactDenseScores` (after). */
function timeIt(f: () => number[]) {
  const ts: number[] = [];
  let out: number[] = [];
  for (let k = 0; k < 5; k++) {
    const t0 = performance.now();
    out = f();
    ts.push(performance.now() - t0);
  }
  return { p50: percentile(ts, 0.5), out };
}

function exactDenseTiming(memory: FixedMemory, query: Float32Array) {
  const rows = memory.vecs.map((_, i) => i);
  const before = timeIt(() => rows.map((row) => dot(query, memory.vecs[row])));
  const after = timeIt(() => exactDenseScores(query, memory.vecs, rows));
  const same = before.out.every((s, i) => s === after.out[i]);
  console.log(`exact dense scores of all ${rows.length} rows: dot per row ${ms(before.p50)}, exactDenseScores ${ms(after.p50)} (bit-identical: ${same})`);
}

/** The per-call pool scan, both polarities: isEligible on every entry object (before) vs the retriever's typed-array columns (after). */
function scanTiming(memory: FixedMemory) {
  const ctx = (polarity: "positive" | "negative") => ({ streamPosition: memory.size, queryId: "cur", dbId: "db0", polarity, causal: true, excludeSameDatabase: false });
  const pools = [ctx("positive"), ctx("negative")];
  const before = timeIt(() => {
    let legal = 0;
    for (const e of memory.rows) for (const c of pools) if (isEligible(e, c)) legal += 1;
    return [legal];
  });
  const columns = new MemoryColumns();
  columns.sync(memory.rows);
  const after = timeIt(() => [pools.reduce((sum, c) => sum + columns.count(c, "Syntax").legal, 0)]);
  console.log(`pool scan of ${memory.size} rows (both polarities): isEligible on entry objects ${ms(before.p50)}, memory columns ${ms(after.p50)} (same count: ${before.out[0] === after.out[0]})`);
}

/** The 4 best rows by `scores` (ties: the lower row first). */
function top4(rows: readonly number[], scores: ArrayLike<number>): number[] {
  return rows.map((row, i) => [row, scores[i]] as const).sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, 4).map(([row]) => row);
}

/** A query's merit positive pool (the entries of its current type) and its exact top 4: what recall@4 is measured against. */
function exactTop4(memory: FixedMemory, errorType: string | null, vector: Float32Array): { pool: number[]; truth: Set<number> } {
  const pool = memory.rows.flatMap((e, row) => (e.polarity === "positive" && e.error_type === errorType ? [row] : []));
  return { pool, truth: new Set(top4(pool, exactDenseScores(vector, memory.vecs, pool))) };
}

/** Dense recall@4 on each query's merit positive pool (one shard), for each ef of the sweep. */
function denseRecallSweep(memory: FixedMemory, queries: BenchQuery[], index: DenseIndex) {
  const keyOf = (row: number) => denseShardKey(memory.rows[row]);
  for (const ef of EF_SWEEP) {
    index.setEfSearch(ef);
    let hits = 0;
    const times: number[] = [];
    for (const { query, vector } of queries) {
      const { pool, truth } = exactTop4(memory, query.currentErrorType, vector);
      const t0 = performance.now();
      const r = index.scores(vector, memory.vecs, pool, 4, keyOf);
      times.push(performance.now() - t0);
      hits += top4(r.rows, r.scores).filter((row) => truth.has(row)).length;
    }
    console.log(`  ef ${String(ef).padStart(5)}: dense recall@4 = ${(hits / (4 * queries.length)).toFixed(3)}, dense step p50 ${ms(percentile(times, 0.5))}, p95 ${ms(percentile(times, 0.95))}`);
  }
}

/**
 * The same dense step with the shortlist cut by native brute force instead (hnswlib-node's
 * BruteforceSearch over each positive shard, float32 inner products with the library's SIMD, then
 * the same exact rescoring): its one-off build, p50 and recall@4 on the same queries. Not what the
 * retriever does; measured to show what the search costs when every shard row is visited.
 */
function bruteForceShortlist(memory: FixedMemory, queries: BenchQuery[]) {
  const hnswlib = createRequire(import.meta.url)("hnswlib-node") as typeof import("hnswlib-node");
  const t = performance.now();
  const shards = new Map<string, InstanceType<typeof hnswlib.BruteforceSearch>>();
  const sizes = new Map<string, number>();
  memory.rows.forEach((e) => e.polarity === "positive" && sizes.set(e.error_type, (sizes.get(e.error_type) ?? 0) + 1));
  memory.rows.forEach((e, row) => {
    if (e.polarity !== "positive") return;
    let shard = shards.get(e.error_type);
    if (shard === undefined) {
      shards.set(e.error_type, (shard = new hnswlib.BruteforceSearch("ip", DIM)));
      shard.initIndex(sizes.get(e.error_type) as number);
    }
    shard.addPoint(Array.from(memory.vecs[row]), row);
  });
  const build = performance.now() - t;
  let hits = 0;
  const times: number[] = [];
  for (const { query, vector } of queries) {
    const { truth } = exactTop4(memory, query.currentErrorType, vector);
    const t0 = performance.now();
    const found = (shards.get(query.currentErrorType ?? "") as InstanceType<typeof hnswlib.BruteforceSearch>).searchKnn(Array.from(vector), 64).neighbors;
    const scores = exactDenseScores(vector, memory.vecs, found);
    times.push(performance.now() - t0);
    hits += top4(found, scores).filter((row) => truth.has(row)).length;
  }
  console.log(`  native brute force (hnswlib BruteforceSearch, 64-row shortlist + exact rescoring; build of the 7 positive shards ${ms(build)}): dense recall@4 = ${(hits / (4 * queries.length)).toFixed(3)}, dense step p50 ${ms(percentile(times, 0.5))}, p95 ${ms(percentile(times, 0.95))}`);
}

/** Share of the final retrieved entries (positives + negatives) that the exact retrieval also returns. */
function finalAgreement(approx: RetrievalResult[], exact: RetrievalResult[]): string {
  let hits = 0;
  let total = 0;
  approx.forEach((a, i) => {
    const truth = new Set(exact[i].log.retrieved_entry_ids);
    total += truth.size;
    hits += a.log.retrieved_entry_ids.filter((id) => truth.has(id)).length;
  });
  return (hits / total).toFixed(3);
}

async function main() {
  const started = performance.now();
  console.log(`retrieval benchmark: dim ${DIM}, seeded PyRandom, 70% positives, 7 error types, every entry legal`);
  const small = buildMemory(1000, 1);
  const smallQueries = benchQueries(small.size, 200);
  await timeRetrievals(small, "merit", 5000, smallQueries, "N=1,000   merit (typed pools, exact)");
  await timeRetrievals(small, "no_type_filter", 5000, smallQueries, "N=1,000   no_type_filter (~700/300, exact)");
  let t = performance.now();
  const large = buildMemory(LARGE, 2);
  const n = LARGE.toLocaleString("en");
  console.log(`built ${n} synthetic entries + vectors in ${secs(t)}`);
  const queries = benchQueries(LARGE, QUERIES);
  exactDenseTiming(large, queries[0].vector);
  scanTiming(large);
  const index = new DenseIndex(DIM, { efConstruction: EF_CONSTRUCTION, m: M, exactPoolLimit: EXACT_LIMIT });
  const shared = new WeakMap<MemoryStore, DenseIndex>([[large, index]]);
  t = performance.now();
  index.sync(large.vecs, (row) => denseShardKey(large.rows[row]), (key) => key.startsWith("positive|"));
  console.log(`HNSW build (M ${M}, efConstruction ${EF_CONSTRUCTION}) of the 7 positive shards, ${index.indexedCount} vectors: ${secs(t)}`);
  const approx = await timeRetrievals(large, "merit", EXACT_LIMIT, queries, `N=${n} merit (pos ~10k: HNSW ef ${DEFAULT_EF_SEARCH}; neg ~4.3k: exact)`, shared);
  const exact = await timeRetrievals(large, "merit", Infinity, queries, `N=${n} merit, exact forced`);
  console.log(`final 4 entries (3 positives + 1 negative) shared with the exact retrieval: ${finalAgreement(approx, exact)} over ${QUERIES} queries`);
  console.log(`HNSW shortlist (64 rows) + exact rescoring on the merit positive pools, ${QUERIES} queries:`);
  denseRecallSweep(large, queries.slice(WARMUP), index);
  bruteForceShortlist(large, queries.slice(WARMUP));
  index.setEfSearch(DEFAULT_EF_SEARCH);
  if (args.includes("--no-type-filter")) {
    await timeRetrievals(large, "no_type_filter", EXACT_LIMIT, queries, `N=${n} no_type_filter (70k/30k pools, HNSW)`, shared);
  }
  console.log(`total ${secs(started)}`);
}

await main();
