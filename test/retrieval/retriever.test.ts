// Tests lib/retrieval/retriever.ts: typed pools with fallback at 3 (pool sizes equal to isEligible counted per polarity), one HNSW shard per typed pool above the exact limit, type bonus only in merit_typerel, dynamic_rag's combined pool, cross-database and causal exclusion, random_same_type, hand-computed dense ranking, and the §5.7 log.
import { describe, expect, it } from "vitest";
import { PyRandom, randomSameTypeSeed } from "../../lib/random.ts";
import type { MemoryEntry } from "../../lib/memory/entry.ts";
import { bm25Document } from "../../lib/memory/entry-text.ts";
import { InMemoryMemoryStore } from "../../lib/memory/in-memory-store.ts";
import type { MemoryStore } from "../../lib/memory/store.ts";
import { bm25Scores } from "../../lib/retrieval/bm25.ts";
import { policyOf as getPolicy } from "../helpers/policies.ts";
import { minMaxNormalize, pyRound } from "../../lib/retrieval/rank.ts";
import { isEligible } from "../../lib/memory/eligibility.ts";
import { createRetriever, denseShardKey, retrievalQueryText, retrieve, type RetrievalQuery } from "../../lib/retrieval/retriever.ts";
import { ScriptedEmbedder, storeOf, type EntrySpec } from "../memory/fixtures.ts";

/** Vectors are written into questions as v[a,b,c,d]; anything else embeds to (0,0,0,1). */
const embedder = () =>
  new ScriptedEmbedder(4, (text) => {
    const m = /v\[([^\]]+)\]/.exec(text);
    return m ? m[1].split(",").map(Number) : [0, 0, 0, 1];
  });

const memoryOf = (specs: EntrySpec[]): Promise<InMemoryMemoryStore> => storeOf(specs, embedder());

const query = (over: Partial<RetrievalQuery> = {}): RetrievalQuery => ({
  queryId: "cur",
  dbId: "db_cur",
  streamPosition: 100,
  repairIteration: 1,
  currentErrorType: "Syntax",
  question: "v[1,0,0,0] how many singers",
  currentSql: "SELECT count(*) FROM singer",
  failureContext: "attempted_sql=SELECT count(*) FROM singer; status=EXECUTION_ERROR; db_error=near x: syntax error",
  ...over,
});

const types = (entries: { entry: MemoryEntry }[]) => entries.map((r) => r.entry.error_type);

describe("typed pools and the fallback at min_typed_pool = 3", () => {
  const base: EntrySpec[] = [
    { errorType: "Syntax" },
    { errorType: "Syntax" },
    { errorType: "Schema Linking" },
    { errorType: "Schema Linking" },
    { errorType: "Syntax", polarity: "negative" },
  ];
  it("2 typed positives → fallback to all 4 legal positives (no bonus)", async () => {
    const r = await retrieve(await memoryOf(base), query(), getPolicy("merit"), embedder());
    expect(r.positives).toHaveLength(3);
    expect(r.negatives).toHaveLength(1);
    expect(r.log).toMatchObject({
      legal_pool_size: 5,
      typed_pool_size: 3,
      fallback_used: true,
      type_filter_applied: true,
      type_match_used_as_soft_score: false,
      legal_pool_size_by_polarity: { positive: 4, negative: 1 },
      typed_pool_size_by_polarity: { positive: 2, negative: 1 },
      fallback_used_by_polarity: { positive: true, negative: true },
    });
    expect(r.log.type_match_scores).toEqual([0, 0, 0, 0]);
  });
  it("3 typed positives → only the typed pool is ranked", async () => {
    const r = await retrieve(await memoryOf([...base, { errorType: "Syntax" }]), query(), getPolicy("merit"), embedder());
    expect(types(r.positives)).toEqual(["Syntax", "Syntax", "Syntax"]);
    expect(r.log.fallback_used_by_polarity).toEqual({ positive: false, negative: true });
    expect(r.log.fallback_used).toBe(true); // the negative pool (1 typed) still fell back
  });
  it("no_type_filter ranks the legal pool without fallback or bonus", async () => {
    const r = await retrieve(await memoryOf(base), query(), getPolicy("no_type_filter"), embedder());
    expect(r.log).toMatchObject({ type_filter_applied: false, fallback_used: false, type_match_used_as_soft_score: false });
  });
});

describe("type-reliability-aware variant", () => {
  const specs: EntrySpec[] = [
    { errorType: "Result Mismatch", question: "v[0,1,0,0]" },
    { errorType: "Result Mismatch", question: "v[0,1,0,0]" },
    { errorType: "Result Mismatch", question: "v[0,1,0,0]" },
    { errorType: "Syntax", question: "v[1,0,0,0]" },
  ];
  it("low-reliability type: no hard filter, +0.10 for same-type entries", async () => {
    const r = await retrieve(await memoryOf(specs), query({ currentErrorType: "Result Mismatch" }), getPolicy("merit_typerel"), embedder());
    expect(r.log.type_filter_applied).toBe(false);
    expect(r.log.type_match_used_as_soft_score).toBe(true);
    expect(r.log.legal_pool_size_by_polarity.positive).toBe(4);
    r.positives.forEach((p) => expect(p.typeMatch).toBe(p.entry.error_type === "Result Mismatch" ? 1 : 0));
    for (const p of r.positives) expect(p.final).toBe(pyRound(0.75 * p.dense + 0.25 * p.bm25 + 0.1 * p.typeMatch));
  });
  it("high-reliability type (Syntax): hard filter, no bonus", async () => {
    const r = await retrieve(await memoryOf(specs), query({ currentErrorType: "Syntax" }), getPolicy("merit_typerel"), embedder());
    expect(r.log).toMatchObject({ type_filter_applied: true, type_match_used_as_soft_score: false, fallback_used: true });
    expect(r.log.type_match_scores.every((s) => s === 0)).toBe(true);
  });
  it("merit never adds the bonus", async () => {
    const r = await retrieve(await memoryOf(specs), query({ currentErrorType: "Result Mismatch" }), getPolicy("merit"), embedder());
    expect(r.log.type_match_used_as_soft_score).toBe(false);
    expect(types(r.positives)).toEqual(["Result Mismatch", "Result Mismatch", "Result Mismatch"]);
  });
});

describe("hybrid scores", () => {
  // Query vector (1,0,0,0). Entry vectors: A (1,0,0,0) → dot 1; B (.5,.5,.5,.5) → 0.5; C (0,1,0,0) → 0.
  // Min–max over the pool: dense components 1, 0.5, 0.
  const specs: EntrySpec[] = [
    { errorType: "Syntax", question: "A v[0,1,0,0]" },
    { errorType: "Syntax", question: "B v[0.5,0.5,0.5,0.5]" },
    { errorType: "Syntax", question: "C v[1,0,0,0]" },
  ];
  it("dense only (no_bm25): finals equal the dense components, 1 / 0.5 / 0", async () => {
    const r = await retrieve(await memoryOf(specs), query(), getPolicy("no_bm25"), embedder());
    expect(r.positives.map((p) => p.entry.question[0])).toEqual(["C", "B", "A"]);
    expect(r.log.dense_scores).toEqual([1, 0.5, 0]);
    expect(r.log.final_scores).toEqual([1, 0.5, 0]);
    expect(r.embeddingCalls).toBe(1);
  });
  it("merit: final = round(0.75·dense + 0.25·minmax(BM25 over the pool), 12)", async () => {
    const memory = await memoryOf(specs);
    const r = await retrieve(memory, query(), getPolicy("merit"), embedder());
    const docs = memory.entries().map(bm25Document);
    const bm25 = minMaxNormalize(bm25Scores(retrievalQueryText(query()), docs));
    for (const p of r.positives) {
      expect(p.bm25).toBe(pyRound(bm25[p.row]));
      expect(p.final).toBe(pyRound(0.75 * [0, 0.5, 1][p.row] + 0.25 * bm25[p.row]));
    }
  });
});

describe("pool layouts and exclusions", () => {
  it("dynamic_rag: one combined pool of both polarities, up to 4 entries, no negative section", async () => {
    const memory = await memoryOf([{}, {}, {}, { polarity: "negative" }, { polarity: "negative" }]);
    const r = await retrieve(memory, query(), getPolicy("dynamic_rag"), embedder());
    expect(r.positives).toHaveLength(4);
    expect(r.negatives).toEqual([]);
    expect(r.log.legal_pool_size_by_polarity).toEqual({ combined: 5 });
    expect(r.log.fallback_used_by_polarity).toEqual({ combined: false });
    expect(r.log.type_filter_applied).toBe(false);
  });
  it("positive_only: only the positive pool", async () => {
    const r = await retrieve(await memoryOf([{}, { polarity: "negative" }]), query(), getPolicy("positive_only"), embedder());
    expect(r.negatives).toEqual([]);
    expect(Object.keys(r.log.legal_pool_size_by_polarity)).toEqual(["positive"]);
  });
  it("cross_database_only excludes entries of the current database", async () => {
    const memory = await memoryOf([{ dbId: "db_cur" }, { dbId: "db_cur" }, { dbId: "other" }, { dbId: "db_cur", polarity: "negative" }]);
    const r = await retrieve(memory, query(), getPolicy("cross_database_only"), embedder());
    expect(r.positives.map((p) => p.entry.source_db_id)).toEqual(["other"]);
    expect(r.negatives).toEqual([]);
    const merit = await retrieve(memory, query(), getPolicy("merit"), embedder());
    expect(merit.positives).toHaveLength(3);
  });
  it("causal: later or same-position entries and the current query are never returned; transductive_batch sees them", async () => {
    const memory = await memoryOf([{ position: 100 }, { position: 150 }, { position: 3, queryId: "cur" }, { position: 99 }]);
    const r = await retrieve(memory, query(), getPolicy("merit"), embedder());
    expect(r.positives.map((p) => p.entry.source_stream_position)).toEqual([99]);
    const t = await retrieve(memory, query(), getPolicy("transductive_batch"), embedder());
    expect(t.positives).toHaveLength(3);
    expect(t.log.legal_pool_size).toBe(4);
  });
});

describe("random_same_type", () => {
  it("shuffles the candidate rows (row order) with PyRandom(seed of 42|query|iteration|polarity), scores 0, no embedding", async () => {
    const specs: EntrySpec[] = [{}, {}, {}, {}, {}, { polarity: "negative" }, { polarity: "negative" }];
    const memory = await memoryOf(specs.map((s) => ({ ...s, errorType: "Syntax" })));
    const e = embedder();
    const r = await retrieve(memory, query({ queryId: "7", repairIteration: 2 }), getPolicy("random_same_type"), e);
    const expectedPos = [0, 1, 2, 3, 4];
    new PyRandom(randomSameTypeSeed(42, "7", 2, "positive")).shuffle(expectedPos);
    const expectedNeg = [5, 6];
    new PyRandom(randomSameTypeSeed(42, "7", 2, "negative")).shuffle(expectedNeg);
    expect(r.positives.map((p) => p.row)).toEqual(expectedPos.slice(0, 3));
    expect(r.negatives.map((p) => p.row)).toEqual(expectedNeg.slice(0, 1));
    expect(e.calls).toBe(0);
    expect(r.embeddingCalls).toBe(0);
    expect([...r.log.dense_scores, ...r.log.bm25_scores, ...r.log.final_scores, ...r.log.type_match_scores].every((s) => s === 0)).toBe(true);
  });
});

describe("retrieval log and embedding calls", () => {
  it("an empty memory embeds nothing and logs empty arrays", async () => {
    const e = embedder();
    const r = await retrieve(new InMemoryMemoryStore(4), query(), getPolicy("merit"), e);
    expect(e.calls).toBe(0);
    expect(r.log.retrieved_entry_ids).toEqual([]);
    expect(r.log.dense_search).toBe("none");
  });
  it("has every METHOD.md §5.7 field, aligned arrays, positives then negatives", async () => {
    const memory = await memoryOf([{}, {}, { polarity: "negative" }]);
    const r = await retrieve(memory, query({ repairIteration: 3 }), getPolicy("merit_full"), embedder());
    expect(Object.keys(r.log).sort()).toEqual(
      [
        "query_id", "repair_iteration", "current_error_type", "legal_pool_size", "typed_pool_size", "fallback_used",
        "type_filter_applied", "type_match_used_as_soft_score", "retrieved_entry_ids", "retrieved_polarities",
        "retrieved_error_types", "source_db_ids", "source_stream_positions", "dense_scores", "bm25_scores",
        "type_match_scores", "final_scores", "method_name", "legal_pool_size_by_polarity", "typed_pool_size_by_polarity",
        "fallback_used_by_polarity", "dense_search",
      ].sort(),
    );
    expect(r.log.method_name).toBe("merit_full");
    expect(r.log.repair_iteration).toBe(3);
    expect(r.log.retrieved_polarities).toEqual(["positive", "positive", "negative"]);
    for (const key of ["retrieved_error_types", "source_db_ids", "source_stream_positions", "dense_scores", "bm25_scores", "type_match_scores", "final_scores"] as const)
      expect(r.log[key]).toHaveLength(3);
  });
  it("a null current type is logged as Unknown; pools above the exact limit are marked hnsw", async () => {
    const memory = await memoryOf([{}, {}, {}, {}]);
    const r = await createRetriever({ exactPoolLimit: 2 }).retrieve(memory, query({ currentErrorType: null }), getPolicy("no_type_filter"), embedder());
    expect(r.log.current_error_type).toBe("Unknown");
    expect(r.log.dense_search).toBe("hnsw");
  });
});

describe("pool scan and sharded dense search", () => {
  it("legal and typed pool sizes equal isEligible counted per polarity (one scan serves every pool)", async () => {
    const rng = new PyRandom(5);
    const pick = <T>(xs: readonly T[]): T => xs[rng.randbelow(xs.length)];
    const specs: EntrySpec[] = Array.from({ length: 60 }, () => ({
      polarity: pick(["positive", "negative"] as const),
      errorType: pick(["Syntax", "Schema Linking", "Unknown"]),
      dbId: pick(["db_cur", "db1", "db2"]),
      queryId: pick(["cur", "other1", "other2"]),
      position: rng.randbelow(150), // some at or after the current position 100
      scope: pick(["global", "same_database", "cross_database"] as const),
    }));
    const memory = await memoryOf(specs);
    const q = query();
    for (const name of ["merit", "dynamic_rag", "cross_database_only", "transductive_batch", "no_type_filter"]) {
      const policy = getPolicy(name);
      const r = await retrieve(memory, q, policy, embedder());
      for (const [key, polarity] of [["positive", "positive"], ["negative", "negative"], ["combined", null]] as const) {
        if (r.log.legal_pool_size_by_polarity[key] === undefined) continue;
        const ctx = { streamPosition: 100, queryId: "cur", dbId: "db_cur", polarity, causal: policy.causal, excludeSameDatabase: policy.excludeSameDatabase };
        const legal = memory.entries().filter((e) => isEligible(e, ctx));
        expect(r.log.legal_pool_size_by_polarity[key], `${name} ${key}`).toBe(legal.length);
        expect(r.log.typed_pool_size_by_polarity[key], `${name} ${key}`).toBe(legal.filter((e) => e.error_type === "Syntax").length);
      }
    }
  });

  it("a row whose entry object is replaced is re-read by the next scan", async () => {
    const source = await memoryOf([{ errorType: "Syntax" }, { errorType: "Syntax" }, { errorType: "Syntax" }]);
    const rows = [...source.entries()];
    const memory: MemoryStore = {
      dimension: 4,
      size: 3,
      entries: () => rows,
      vectors: () => source.vectors(),
      rowOf: () => undefined,
      hasEpisode: () => false,
      insert: () => Promise.reject(new Error("read-only")),
    };
    const retriever = createRetriever();
    const first = await retriever.retrieve(memory, query(), getPolicy("merit"), embedder());
    expect(first.log.legal_pool_size_by_polarity).toEqual({ positive: 3, negative: 0 });
    rows[1] = { ...rows[1], polarity: "negative" }; // a new object at row 1 of the same store, as a merge makes
    const second = await retriever.retrieve(memory, query(), getPolicy("merit"), embedder());
    expect(second.log.legal_pool_size_by_polarity).toEqual({ positive: 2, negative: 1 });
  });

  it("above the exact limit a typed pool is searched in its own shard (polarity|type) and its exact best wins", async () => {
    const specs: EntrySpec[] = [];
    // 11 Syntax positives off the query direction, 1 on it; 12 Schema Linking positives exactly on it.
    for (let i = 0; i < 11; i++) specs.push({ errorType: "Syntax", question: `v[0,1,0,${i / 10}] other words` });
    specs.push({ errorType: "Syntax", question: "v[1,0,0,0] how many singers" });
    for (let i = 0; i < 12; i++) specs.push({ errorType: "Schema Linking", question: "v[1,0,0,0] how many singers" });
    specs.push({ errorType: "Syntax", polarity: "negative" });
    const memory = await memoryOf(specs);
    const r = await createRetriever({ exactPoolLimit: 5, minShortlist: 4 }).retrieve(memory, query(), getPolicy("merit"), embedder());
    expect(r.log.dense_search).toBe("hnsw");
    expect(r.log.typed_pool_size_by_polarity.positive).toBe(12);
    expect(types(r.positives)).toEqual(["Syntax", "Syntax", "Syntax"]);
    expect(r.positives[0].entry.question).toBe("v[1,0,0,0] how many singers");
    expect(r.positives[0].dense).toBe(1);
    expect(denseShardKey(r.positives[0].entry)).toBe("positive|Syntax");
  });
});

