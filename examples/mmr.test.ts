// Tests examples/mmr.ts from outside lib/: on a constructed memory with three near-duplicate
// precedents closest to the query, plain fusion's top 4 (dynamic_rag) keeps all three; MMR's top 4
// keeps one of them and takes the two relevant but different precedents instead (hand-computed
// scores), reads vectors only through the RankContext views, and runs end to end through
// `merit grid --plugin examples/mmr.ts --methods merit_mmr` with the tiny test models.
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gridCommand } from "../lib/cli/run.ts";
import { getMethod, loadPlugins, RANKERS } from "../lib/methods/index.ts";

/** The retrieval policy of a registered memory method. */
const getPolicy = (name: string) => getMethod(name).memory!;
import { retrieve, type RetrievalQuery } from "../lib/retrieval/retriever.ts";
import { ScriptedEmbedder, storeOf, type EntrySpec } from "../test/memory/fixtures.ts";
import { readJsonl, tempDir, writeTinyGridConfig } from "../test/helpers/run-fixture.ts";
import { budget } from "../test/helpers/budget.ts";

const PLUGIN = "examples/mmr.ts";

/** Each precedent's vector, chosen by a word in its question (the query embeds to e1). */
const VECTORS: Record<string, number[]> = {
  query: [1, 0, 0, 0],
  dupone: [0.9, 0.43589, 0, 0], // three near-duplicates, the closest to the query (cos 0.9)
  duptwo: [0.9, 0.43589, 0.001, 0],
  dupthree: [0.9, 0.43589, -0.001, 0],
  leftward: [0.85, 0, 0.52678, 0], // relevant (cos 0.85) and different: cos 0.765 with the duplicates
  rightward: [0.85, 0, -0.52678, 0], // likewise, and cos 0.445 with leftward
  offtopic: [0, 0, 0, 1], // unrelated
};
const embedder = () =>
  new ScriptedEmbedder(4, (text) => {
    const word = Object.keys(VECTORS).find((w) => text.includes(w));
    return VECTORS[word ?? "offtopic"];
  });

const WORDS = ["dupone", "duptwo", "dupthree", "leftward", "rightward", "offtopic"];
const SPECS: EntrySpec[] = WORDS.map((word, i) => ({ errorType: "Syntax", question: `how many singers ${word}`, dbId: `db${i}`, position: i }));
const QUERY: RetrievalQuery = {
  queryId: "cur",
  dbId: "db_cur",
  streamPosition: 100,
  repairIteration: 1,
  currentErrorType: "Syntax",
  question: "how many singers query",
  currentSql: "SELECT count(*) FROM singer",
  failureContext: "attempted_sql=SELECT count(*) FROM singer; status=EXECUTION_ERROR; db_error=near x: syntax error",
};
const wordOf = (question: string) => question.split(" ").pop();

describe("the mmr ranker on near-duplicate precedents", () => {
  beforeAll(async () => {
    await loadPlugins([PLUGIN]);
  });

  it("plain fusion's top 4 holds all three near-duplicates; MMR's replaces two by the diverse ones", async () => {
    const memory = await storeOf(SPECS, embedder());
    const fused = await retrieve(memory, QUERY, getPolicy("dynamic_rag"), embedder());
    const mmr = await retrieve(memory, QUERY, getPolicy("dynamic_rag_mmr"), embedder());
    const fusedTop = fused.positives.map((r) => wordOf(r.entry.question));
    const mmrTop = mmr.positives.map((r) => wordOf(r.entry.question));
    expect(new Set(fusedTop.slice(0, 3))).toEqual(new Set(["dupone", "duptwo", "dupthree"]));
    expect(fusedTop).toHaveLength(4);
    // Same first pick (the most relevant), then the two different precedents, then one duplicate.
    expect(mmrTop[0]).toBe(fusedTop[0]);
    expect(new Set(mmrTop.slice(1, 3))).toEqual(new Set(["leftward", "rightward"]));
    expect(["dupone", "duptwo", "dupthree"]).toContain(mmrTop[3]);
    expect(mmrTop).not.toContain("offtopic");
    // Same candidates and channel scores as fusion; only the order and `final` differ.
    const fusedByWord = new Map(fused.positives.map((r) => [wordOf(r.entry.question), r]));
    for (const r of mmr.positives.filter((r) => fusedByWord.has(wordOf(r.entry.question)))) expect(r.dense).toBe(fusedByWord.get(wordOf(r.entry.question))!.dense);
    // Hand-computed: BM25 is equal for every entry (normalised to 1), so rel = 0.75 · cos/0.9 + 0.25;
    // leftward at step 2: 0.7 · (0.75 · 0.85/0.9 + 0.25) − 0.3 · 0.765 = 0.441083…, above a duplicate's
    // 0.7 · 1 − 0.3 · 1 = 0.4 and the off-topic entry's 0.7 · 0.25 − 0.3 · 0 = 0.175.
    expect(mmr.positives[0].final).toBeCloseTo(0.7, 5);
    expect(mmr.positives[1].final).toBeCloseTo(0.7 * (0.75 * (0.85 / 0.9) + 0.25) - 0.3 * 0.765, 4);
    expect(mmr.positives[2].final).toBeCloseTo(mmr.positives[1].final, 4); // rightward: cos 0.765 to dupone, 0.445 to leftward
    expect(mmr.positives[3].final).toBeCloseTo(0.4, 4);
    expect(mmr.embeddingCalls).toBe(1);
    expect(mmr.log.method_name).toBe("dynamic_rag_mmr");
  });

  it("relevance \"dense\" reads the query vector; with the dense channel off it is refused at build", async () => {
    const ranker = RANKERS.get("mmr").build({ ...RANKERS.get("mmr").defaults, relevance: "dense" });
    const memory = await storeOf(SPECS, embedder());
    const policy = { ...getPolicy("dynamic_rag_mmr"), ranker };
    const r = await retrieve(memory, QUERY, policy, embedder());
    expect(new Set(r.positives.map((p) => wordOf(p.entry.question)).slice(1, 3))).toEqual(new Set(["leftward", "rightward"]));
    expect(r.positives[0].final).toBeCloseTo(0.7 * 0.9, 5); // lambda · cos(query, dupone)
    expect(() => RANKERS.get("mmr").build({ ...RANKERS.get("mmr").defaults, relevance: "dense", dense_weight: 0 })).toThrow(/dense_weight must be > 0/);
    expect(() => RANKERS.get("mmr").build({ ...RANKERS.get("mmr").defaults, lambda: 1.5 })).toThrow(/lambda.*\[0, 1\]/);
  });

  it("with lambda 1 MMR is plain fusion", async () => {
    const memory = await storeOf(SPECS, embedder());
    const ranker = RANKERS.get("mmr").build({ ...RANKERS.get("mmr").defaults, lambda: 1 });
    const mmr = await retrieve(memory, QUERY, { ...getPolicy("dynamic_rag_mmr"), ranker }, embedder());
    const fused = await retrieve(memory, QUERY, getPolicy("dynamic_rag"), embedder());
    expect(mmr.positives.map((r) => r.row)).toEqual(fused.positives.map((r) => r.row));
    expect(mmr.positives.map((r) => r.final)).toEqual(fused.positives.map((r) => r.final));
  });

  it("merit_mmr is MERIT's memory with the mmr ranker", () => {
    expect(getMethod("merit_mmr").record.hooks!.memory).toEqual({ name: "merit_memory", args: { ...(getMethod("merit").record.hooks!.memory as { args: object }).args, ranker: "mmr", ranker_args: { bm25_weight: 0.25, dense_weight: 0.75, fetch_k: 20, lambda: 0.7, relevance: "fusion", type_bonus: 0 } } });
  });
});

describe("merit grid --plugin examples/mmr.ts --methods merit_mmr", () => {
  const root = tempDir("mmr");
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  let config: string;
  beforeAll(async () => {
    config = await writeTinyGridConfig(root);
  }, budget(120_000));

  it("runs the plugin's method on a tiny slice and records its ranker", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l) };
    const dir = join(root, "runs");
    expect(await gridCommand.run(["--config", config, "--plugin", PLUGIN, "--methods", "merit_mmr", "--seeds", "0", "--limit", "6", "--out", dir], io), err.join("\n")).toBe(0);
    expect(out.some((l) => l.startsWith("merit_mmr seed 0: EX "))).toBe(true);
    const manifest = JSON.parse(readFileSync(join(dir, "merit_mmr-s0", "manifest.json"), "utf8"));
    expect(manifest.method_parts.hooks.memory.args.ranker).toBe("mmr");
    const log = readJsonl<{ method_name: string }>(join(dir, "merit_mmr-s0", "retrieval_log.jsonl"));
    expect(log.length).toBeGreaterThan(0);
    expect(new Set(log.map((r) => r.method_name))).toEqual(new Set(["merit_mmr"]));
  }, budget(300_000));
});
