// Tests that retrieval computes what METHOD.md §5.4–5.6 specifies where a setting or an ablation
// changes it: a channel an ablation turns off is never computed (scores 0 for ranking and for the
// tie-breaking keys; no query embedding for no_dense_rerank), and each config retrieval setting
// (max_positive, max_negative, min_typed_pool, type_bonus) changes retrieval as specified, through
// `underSettings` and through a whole run; METHOD.md's values leave every policy unchanged.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Dataset } from "../../lib/data/index.ts";
import { parseConfig } from "../../lib/experiment/config.ts";
import type { InitialCache } from "../../lib/experiment/initial-cache.ts";
import type { Embedder } from "../../lib/llm/types.ts";
import { bm25Document } from "../../lib/memory/entry-text.ts";
import { InMemoryMemoryStore } from "../../lib/memory/in-memory-store.ts";
import type { Oracle } from "../../lib/oracle/oracle.ts";
import { bm25Scores } from "../../lib/retrieval/bm25.ts";
import { DEFAULT_RETRIEVAL_SETTINGS, type RetrievalSettings } from "../../lib/methods/index.ts";
import { configuredPolicy, memoryMethodNames, policyOf as getPolicy } from "../helpers/policies.ts";
import { pyRound } from "../../lib/retrieval/rank.ts";
import { retrievalQueryText, retrieve, type RetrievalQuery } from "../../lib/retrieval/retriever.ts";
import { ScriptedEmbedder, storeOf, type EntrySpec } from "../memory/fixtures.ts";
import { readRun } from "../helpers/run-fixture.ts";
import { closeScenario, openScenario, runScenario, type ScenarioFixture } from "../helpers/scripted-scenario.ts";
import { budget } from "../helpers/budget.ts";

/** A question word picks the vector; no word of the query text occurs in any entry's BM25 document. */
const VECTORS: Record<string, number[]> = {
  pomegranate: [1, 0, 0, 0],
  kiwi: [0.5, 0.5, 0.5, 0.5],
  mango: [0, 1, 0, 0],
  papaya: [0.8, 0.6, 0, 0],
  banana: [1, 0, 0, 0],
};
const pick = (text: string): number[] => {
  for (const [word, v] of Object.entries(VECTORS)) if (text.includes(word)) return v;
  return [0, 0, 0, 1];
};
const embedder = () => new ScriptedEmbedder(4, pick);
/** An embedder that must never be called. */
const forbidden: Embedder = {
  identity: { kind: "test-forbidden", model: "none", modelHash: "none", params: {} },
  dimension: 4,
  embed: async () => {
    throw new Error("the query must not be embedded");
  },
  close: async () => {},
};

const memoryOf = (specs: EntrySpec[]): Promise<InMemoryMemoryStore> => storeOf(specs, embedder());

const query = (over: Partial<RetrievalQuery> = {}): RetrievalQuery => ({
  queryId: "cur",
  dbId: "db_cur",
  streamPosition: 100,
  repairIteration: 1,
  currentErrorType: "Syntax",
  question: "banana",
  currentSql: "zzz",
  failureContext: "yyy",
  ...over,
});

const ids = (r: { entry: { entry_id: string } }[]) => r.map((x) => x.entry.entry_id);

describe("a disabled channel is never computed (METHOD.md §5.4, §5.6)", () => {
  const specs: EntrySpec[] = ["pomegranate", "kiwi", "mango", "papaya"].map((question) => ({ errorType: "Syntax", question }));

  it("no_dense_rerank on a pool where every BM25 score is 0: all ties fall through to entry_id, no embedding", async () => {
    // Current type Execution: no typed entries, so the fallback pool of all four is ranked.
    const q = query({ currentErrorType: "Execution" });
    const memory = await memoryOf(specs);
    const docs = memory.entries().map(bm25Document);
    expect(bm25Scores(retrievalQueryText(q), docs)).toEqual([0, 0, 0, 0]); // the premise
    const r = await retrieve(memory, q, getPolicy("no_dense_rerank"), forbidden);
    expect(r.embeddingCalls).toBe(0);
    expect(r.log.dense_search).toBe("none");
    expect(r.log.dense_scores).toEqual([0, 0, 0]);
    expect(r.log.bm25_scores).toEqual([0, 0, 0]);
    expect(r.log.final_scores).toEqual([0, 0, 0]);
    // Dense would rank pomegranate (1) > papaya (0.8) > kiwi (0.5) > mango (0); with dense off the
    // order is entry_id ascending.
    expect(ids(r.positives)).toEqual([...ids(memory.entries().map((entry) => ({ entry })))].sort().slice(0, 3));
  });

  it("no_dense_rerank ranks by BM25 alone and never calls the embedder", async () => {
    const memory = await memoryOf([...specs.slice(0, 3), { errorType: "Syntax", question: "mango zzz yyy" }]);
    const r = await retrieve(memory, query(), getPolicy("no_dense_rerank"), forbidden);
    expect(r.positives[0].entry.question).toBe("mango zzz yyy");
    expect(r.positives[0].bm25).toBe(1);
    expect(r.log.dense_scores.every((s) => s === 0)).toBe(true);
    expect(r.embeddingCalls).toBe(0);
  });

  it("no_bm25 with tied dense scores: BM25 does not break the tie (entry_id does)", async () => {
    // Equal vectors (all "pomegranate"); one entry shares tokens with the query, so BM25 would prefer it.
    const memory = await memoryOf([
      { errorType: "Syntax", question: "pomegranate" },
      { errorType: "Syntax", question: "pomegranate one" },
      { errorType: "Syntax", question: "pomegranate zzz yyy" },
    ]);
    const r = await retrieve(memory, query(), getPolicy("no_bm25"), embedder());
    expect(r.embeddingCalls).toBe(1);
    expect(r.log.bm25_scores).toEqual([0, 0, 0]);
    expect(r.log.dense_scores).toEqual([1, 1, 1]);
    expect(ids(r.positives)).toEqual([...ids(r.positives)].sort());
    const merit = await retrieve(memory, query(), getPolicy("merit"), embedder());
    expect(merit.positives[0].entry.question).toBe("pomegranate zzz yyy"); // the hybrid does use BM25
  });
});

describe("config retrieval settings (METHOD.md §5.5–5.6)", () => {
  const with_ = (over: Partial<RetrievalSettings>): RetrievalSettings => ({ ...DEFAULT_RETRIEVAL_SETTINGS, ...over });
  const pools: EntrySpec[] = [
    { errorType: "Syntax", question: "pomegranate" },
    { errorType: "Syntax", question: "kiwi" },
    { errorType: "Schema Linking", question: "mango" },
    { errorType: "Schema Linking", question: "papaya" },
    { errorType: "Syntax", polarity: "negative", question: "kiwi" },
    { errorType: "Syntax", polarity: "negative", question: "mango" },
    { errorType: "Schema Linking", polarity: "negative", question: "papaya" },
  ];

  it("METHOD.md's values leave every policy as the table defines it", () => {
    for (const name of memoryMethodNames()) expect(configuredPolicy(name, DEFAULT_RETRIEVAL_SETTINGS), name).toEqual(getPolicy(name));
    const defaults = parseConfig({ dataset: "spider", data_dir: "d", initial_cache: "c" }).retrieval;
    expect(with_({ max_positive: defaults.max_positive, max_negative: defaults.max_negative, min_typed_pool: defaults.min_typed_pool, type_bonus: defaults.type_bonus })).toEqual(DEFAULT_RETRIEVAL_SETTINGS);
  });

  it("max_positive and max_negative are the per-pool limits; dynamic_rag takes their sum", async () => {
    const memory = await memoryOf(pools);
    const base = await retrieve(memory, query(), getPolicy("merit"), embedder());
    expect([base.positives.length, base.negatives.length]).toEqual([3, 1]);
    const more = await retrieve(memory, query(), configuredPolicy("merit", with_({ max_positive: 1, max_negative: 3 })), embedder());
    expect([more.positives.length, more.negatives.length]).toEqual([1, 3]);
    expect(ids(more.positives)).toEqual(ids(base.positives).slice(0, 1));
    const none = await retrieve(memory, query(), configuredPolicy("merit", with_({ max_positive: 0, max_negative: 0 })), embedder());
    expect(none.log.retrieved_entry_ids).toEqual([]);
    const rag = await retrieve(memory, query(), configuredPolicy("dynamic_rag", with_({ max_positive: 2, max_negative: 3 })), embedder());
    expect(rag.positives).toHaveLength(5);
    const ragDefault = await retrieve(memory, query(), getPolicy("dynamic_rag"), embedder());
    expect(ragDefault.positives).toHaveLength(4);
  });

  it("min_typed_pool is the fallback threshold of the hard filter", async () => {
    const memory = await memoryOf(pools);
    const fallback = await retrieve(memory, query(), getPolicy("merit"), embedder());
    expect(fallback.log.fallback_used_by_polarity).toEqual({ positive: true, negative: true });
    const two = await retrieve(memory, query(), configuredPolicy("merit", with_({ min_typed_pool: 2 })), embedder());
    expect(two.log.fallback_used_by_polarity).toEqual({ positive: false, negative: false });
    expect(two.positives.map((p) => p.entry.error_type)).toEqual(["Syntax", "Syntax"]);
    expect(two.negatives.map((p) => p.entry.error_type)).toEqual(["Syntax"]);
    const memory3 = await memoryOf([...pools, { errorType: "Syntax", question: "mango" }]);
    expect((await retrieve(memory3, query(), getPolicy("merit"), embedder())).log.fallback_used_by_polarity.positive).toBe(false);
    const four = await retrieve(memory3, query(), configuredPolicy("merit", with_({ min_typed_pool: 4 })), embedder());
    expect(four.log.fallback_used_by_polarity.positive).toBe(true);
    expect(four.positives.map((p) => p.entry.error_type)).toContain("Schema Linking");
  });

  it("type_bonus is the type-reliability-aware variant's bonus (0 turns it off); other policies never add one", async () => {
    // Current type Result Mismatch (not hard-filtered): one Syntax entry close to the query, three
    // Result Mismatch entries far from it.
    const memory = await memoryOf([
      { errorType: "Syntax", question: "pomegranate" },
      { errorType: "Result Mismatch", question: "mango" },
      { errorType: "Result Mismatch", question: "mango" },
      { errorType: "Result Mismatch", question: "kiwi" },
    ]);
    const q = query({ currentErrorType: "Result Mismatch" });
    const typerel = getPolicy("merit_typerel");
    const small = await retrieve(memory, q, typerel, embedder());
    expect(small.positives[0].entry.error_type).toBe("Syntax");
    const big = await retrieve(memory, q, configuredPolicy("merit_typerel", with_({ type_bonus: 1 })), embedder());
    expect(big.positives.map((p) => p.entry.error_type)).toEqual(["Result Mismatch", "Result Mismatch", "Result Mismatch"]);
    for (const p of big.positives) expect(p.final).toBe(pyRound(0.75 * p.dense + 0.25 * p.bm25 + 1 * p.typeMatch));
    const off = await retrieve(memory, q, configuredPolicy("merit_typerel", with_({ type_bonus: 0 })), embedder());
    expect(off.log.type_match_used_as_soft_score).toBe(false);
    expect(off.log.type_match_scores.every((s) => s === 0)).toBe(true);
    expect(configuredPolicy("no_type_filter", with_({ type_bonus: 1 })).typeBonus).toBe(0);
  });

  it("a setting that differs from METHOD.md is named in the policy description", () => {
    expect(configuredPolicy("merit", with_({ max_positive: 5, type_bonus: 0.2 })).description).toMatch(/\(configured: max_positive 5, type_bonus 0\.2\)$/);
  });
});

describe("a run honours its config's retrieval settings", () => {
  let dataset: Dataset;
  let oracle: Oracle;
  let cache: InitialCache;
  let cachePath: string;
  let root: string;
  let fixture: ScenarioFixture | undefined;
  beforeAll(async () => {
    fixture = await openScenario("retrieval-settings");
    ({ root, dataset, oracle, cache, cachePath } = fixture);
  }, budget(120_000));
  afterAll(() => closeScenario(fixture));

  it("max_positive 0 and max_negative 0: retrieval returns nothing; the manifest says so", async () => {
    const run = async (name: string, config?: Record<string, unknown>) => {
      const outDir = join(root, name);
      await runScenario({ method: "merit", dataset, oracle, cache, cachePath, outDir, config });
      return { files: readRun(outDir), manifest: JSON.parse(readFileSync(join(outDir, "manifest.json"), "utf8")) as { method_description: string } };
    };
    const base = await run("default");
    expect(base.files.retrievals.some((r) => r.retrieved_entry_ids.length > 0)).toBe(true);
    const none = await run("none", { retrieval: { max_positive: 0, max_negative: 0 } });
    expect(none.files.retrievals.length).toBe(base.files.retrievals.length);
    expect(none.files.retrievals.every((r) => r.retrieved_entry_ids.length === 0)).toBe(true);
    expect(none.manifest.method_description).toContain("configured: max_positive 0, max_negative 0");
    expect(base.manifest.method_description).not.toContain("configured");
  }, budget(120_000));
});
