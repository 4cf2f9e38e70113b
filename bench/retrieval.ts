/**
 * Benchmark of the retrieval stage (METHOD.md §5): p50/p95 latency of one retrieval call (both
 * polarities) over memories of 1,000 and 100,000 entries with 1,024-dim random unit vectors from a
 * seeded PyRandom, and recall@4 of the HNSW path against exact scoring at 100,000. Prints medians;
 * never asserted in tests. Run: `npx tsx bench/retrieval.ts [--large N] [--queries Q] [--ef-construction E]`.
 * Most of the runtime is the one-off HNSW build at N = 100,000 (13 of 17 minutes on a shared
 * 2-core machine at load average ~10); `--large 20000` gives a run of about three minutes.
 */
import { PyRandom } from "../lib/experiment/random.ts";
import type { Embedder } from "../lib/llm/types.ts";
import { observationOf, type MemoryEntry } from "../lib/memory/entry.ts";
import { entryId } from "../lib/memory/identity.ts";
import type { InsertResult, MemoryStore } from "../lib/memory/store.ts";
import { DenseIndex, exactDenseScores } from "../lib/retrieval/dense.ts";
import { getPolicy } from "../lib/retrieval/policies.ts";
import { createRetriever, type RetrievalQuery } from "../lib/retrieval/retriever.ts";

const DIM = 1024;
const TYPES = ["Schema Linking", "Syntax", "Aggregation", "Filter/Value", "Execution", "Result Mismatch", "Unknown"];
const WORDS = "singer concert stadium name age year capacity country song count average max min join group order".split(" ");
const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const LARGE = flag("large", 100_000);
const QUERIES = flag("queries", 50);
/** HNSW construction beam for the large memory (the library default is 200; 100 keeps the build to minutes). */
const EF_CONSTRUCTION = flag("ef-construction", 100);

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

function syntheticEntry(rng: PyRandom, i: number): MemoryEntry {
  const w = () => WORDS[rng.randbelow(WORDS.length)];
  const positive = rng.random() < 0.7;
  const delta = `SELECT ${w()} FROM ${w()} => SELECT ${w()}, ${w()} FROM ${w()} WHERE id = ${i}`;
  const errorType = TYPES[rng.randbelow(TYPES.length)];
  const base = {
    source_query_id: `q${i}`,
    source_db_id: `db${rng.randbelow(20)}`,
    source_episode_id: `episode-${i}`,
    source_stream_position: i,
    source_iteration: 1 + rng.randbelow(7),
    polarity: positive ? ("positive" as const) : ("negative" as const),
    provenance: { method_name: "merit", feedback_regime: "denotation_confirmed" as const, retrieved_entry_ids: [] },
    question: `How many ${w()} have ${w()} above the ${w()} ${w()}?`,
    schema: "(schema omitted in the benchmark)",
    failure_context: `attempted_sql=SELECT ${w()} FROM ${w()}; status=${positive ? "EXECUTION_ERROR" : "DENOTATION_MISMATCH"}; db_error=(none)`,
    attempted_sql_delta: delta,
    successful_direction: positive ? `Observed successful transition: ${delta}` : "",
    observed_outcome: positive ? ("CORRECT" as const) : ("DENOTATION_MISMATCH" as const),
    observed_db_error: null,
  };
  return {
    ...base,
    entry_id: entryId(errorType, delta),
    error_type: errorType,
    applicability_scope: "global",
    confirmation_count: 1,
    success_count: positive ? 1 : 0,
    failure_count: positive ? 0 : 1,
    provenance_history: [observationOf(base)],
  };
}

/** Read-only memory filled directly (the benchmark times retrieval, not insertion). */
class FixedMemory implements MemoryStore {
  readonly dimension = DIM;
  constructor(readonly rows: MemoryEntry[], readonly vecs: Float32Array[]) {}
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
  constructor(readonly queue: Float32Array[]) {}
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

function buildMemory(n: number, seed: number): FixedMemory {
  const rng = new PyRandom(seed);
  const rows: MemoryEntry[] = [];
  const vecs: Float32Array[] = [];
  for (let i = 0; i < n; i++) {
    rows.push(syntheticEntry(rng, i));
    vecs.push(unitVector(rng));
  }
  return new FixedMemory(rows, vecs);
}

function queryAt(rng: PyRandom, n: number, k: number): RetrievalQuery {
  return {
    queryId: `current-${k}`,
    dbId: "db0",
    streamPosition: n, // every entry is earlier: the whole memory is legal
    repairIteration: 1,
    currentErrorType: TYPES[rng.randbelow(TYPES.length)],
    question: `How many ${WORDS[rng.randbelow(WORDS.length)]} are there?`,
    currentSql: `SELECT count(*) FROM ${WORDS[rng.randbelow(WORDS.length)]}`,
    failureContext: "attempted_sql=SELECT 1; status=EXECUTION_ERROR; db_error=no such column: x",
  };
}

async function timeRetrievals(
  memory: FixedMemory,
  policyName: string,
  exactPoolLimit: number,
  queries: number,
  label: string,
  denseIndexes?: WeakMap<MemoryStore, DenseIndex>,
) {
  const rng = new PyRandom(99);
  const embedder = new QueueEmbedder(Array.from({ length: queries }, () => unitVector(rng)));
  const retriever = createRetriever({ exactPoolLimit, denseIndexes });
  const policy = getPolicy(policyName);
  const warm = performance.now();
  await retriever.retrieve(memory, queryAt(rng, memory.size, -1), policy, embedder); // builds caches (tokens, HNSW)
  const warmup = performance.now() - warm;
  const times: number[] = [];
  let pools = 0;
  let mode = "";
  for (let k = 0; k < queries; k++) {
    const q = queryAt(rng, memory.size, k);
    const t0 = performance.now();
    const r = await retriever.retrieve(memory, q, policy, embedder);
    times.push(performance.now() - t0);
    pools += r.log.legal_pool_size_by_polarity.positive ?? 0;
    mode = r.log.dense_search;
  }
  console.log(
    `${label.padEnd(44)} p50 ${ms(percentile(times, 0.5)).padStart(10)}  p95 ${ms(percentile(times, 0.95)).padStart(10)}  ` +
      `(${queries} calls, dense ${mode}, first call incl. caches ${ms(warmup)})`,
  );
}

function recallAt4(memory: FixedMemory, queries: number, index: DenseIndex) {
  const rng = new PyRandom(1234);
  const all = memory.vecs.map((_, i) => i);
  const byScore = (scores: number[]) => (a: number, b: number) => scores[b] - scores[a] || a - b;
  const t0 = performance.now();
  index.sync(memory.vecs);
  console.log(`HNSW build (M 16, efConstruction ${EF_CONSTRUCTION}) over ${memory.size} vectors: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  let hits = 0;
  const times: number[] = [];
  for (let k = 0; k < queries; k++) {
    const q = unitVector(rng);
    const exact = exactDenseScores(q, memory.vecs, all); // exact[row], since all[row] = row
    const truth = new Set([...all].sort(byScore(exact)).slice(0, 4));
    const t = performance.now();
    const r = index.scores(q, memory.vecs, all, 4);
    times.push(performance.now() - t);
    const top = r.rows.map((row, i) => [row, r.scores[i]] as const).sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, 4);
    hits += top.filter(([row]) => truth.has(row)).length;
  }
  console.log(`HNSW shortlist (64, ef 64) + exact rescoring: recall@4 vs exact = ${(hits / (4 * queries)).toFixed(3)} over ${queries} queries; dense step p50 ${ms(percentile(times, 0.5))}`);
}

async function main() {
  const started = performance.now();
  console.log(`retrieval benchmark: dim ${DIM}, seeded PyRandom, 70% positives, 7 error types, every entry legal`);
  const small = buildMemory(1000, 1);
  await timeRetrievals(small, "merit", 5000, 200, "N=1,000   merit (typed pools, exact)");
  await timeRetrievals(small, "no_type_filter", 5000, 200, "N=1,000   no_type_filter (~700/300, exact)");
  const t = performance.now();
  const large = buildMemory(LARGE, 2);
  console.log(`built ${LARGE} synthetic entries + vectors in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const index = new DenseIndex(DIM, { efConstruction: EF_CONSTRUCTION });
  const shared = new WeakMap<MemoryStore, DenseIndex>([[large, index]]);
  recallAt4(large, QUERIES, index);
  await timeRetrievals(large, "merit", 5000, QUERIES, `N=${LARGE.toLocaleString("en")} merit (pos pool ~10k HNSW, neg ~4.3k exact)`, shared);
  await timeRetrievals(large, "no_type_filter", 5000, QUERIES, `N=${LARGE.toLocaleString("en")} no_type_filter (HNSW)`, shared);
  await timeRetrievals(large, "merit", Infinity, Math.min(QUERIES, 10), `N=${LARGE.toLocaleString("en")} merit, exact forced`);
  console.log(`total ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

await main();
