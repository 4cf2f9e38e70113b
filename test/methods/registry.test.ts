// Tests lib/methods/: the paper's methods as compositions of parts in one registry (identity,
// aliases, part and arg errors), the manifest record round-trip for every registered method, the
// config's retrieval settings reaching the parts' args, the retriever calling a registered ranker
// part, and the docs' method table (docs/DESIGN.md) equal to the registry.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MeritError } from "../../lib/errors.ts";
import {
  buildMethod,
  configureMethod,
  getMethod,
  isMethodName,
  MERIT_PARTS,
  methodFromManifest,
  methodNames,
  methodRecord,
  methodTable,
  PARTS,
  registerAlias,
  registerMethod,
  type RankPool,
} from "../../lib/methods/index.ts";
import { PAPER_COMPARISONS, PAPER_MAIN_METHODS } from "../../lib/analysis/paper-layout.ts";
import { CONTROL_METHODS } from "../../lib/experiment/grid-plan.ts";
import { InMemoryMemoryStore } from "../../lib/memory/in-memory-store.ts";
import { DEFAULT_RETRIEVAL_SETTINGS } from "../../lib/methods/policy.ts";
import { createRetriever } from "../../lib/retrieval/retriever.ts";
import { makeEntry, ScriptedEmbedder } from "../memory/fixtures.ts";

const PAPER = ["zeroshot", "iterative", "reflexion", "merit", "merit_full", "merit_typerel", "confidence_aware_type_filter", "dynamic_rag", "positive_only", "no_type_filter", "no_dense_rerank", "no_bm25", "random_same_type", "cross_database_only", "transductive_batch"];

describe("the paper's methods", () => {
  it("are all registered, each its own identity; aliases resolve to their target's parts", () => {
    expect(methodNames().slice(0, PAPER.length)).toEqual(PAPER);
    for (const name of PAPER) {
      const m = getMethod(name);
      expect(m.name).toBe(name);
      const target = name === "merit_full" ? "merit" : name === "confidence_aware_type_filter" ? "merit_typerel" : name;
      expect(m.canonicalName).toBe(target);
      expect(m.parts).toEqual(getMethod(target).parts);
    }
    expect(getMethod("zeroshot")).toMatchObject({ repairs: false, reflects: false, memory: null, parts: { repairs: false, steps: [] } });
    expect(getMethod("reflexion")).toMatchObject({ repairs: true, reflects: true, memory: null });
    expect(getMethod("random_same_type").parts.ranker).toEqual({ name: "random", args: {} });
    expect(getMethod("no_dense_rerank").parts.ranker).toEqual({ name: "hybrid", args: { bm25_weight: 0.25, dense_weight: 0, type_bonus: 0 } });
  });

  it("a method registered at runtime gets its own identity, not merit's", () => {
    const spec = registerMethod({ name: "test_runtime_method", description: "MERIT's parts under another name", parts: MERIT_PARTS });
    expect(spec.canonicalName).toBe("test_runtime_method");
    expect(getMethod("test_runtime_method").memory?.canonicalName).toBe("test_runtime_method");
    expect(getMethod("test_runtime_method").memory?.name).toBe("test_runtime_method");
    expect(isMethodName("test_runtime_method")).toBe(true);
  });

  it("refuses a clash, a bad part, a bad arg and a partial memory method with one line", () => {
    expect(() => registerMethod({ name: "merit", description: "again", parts: MERIT_PARTS })).toThrow(/method "merit" is already registered; choose another name/);
    expect(() => registerMethod({ name: "test_bad_ranker", description: "x", parts: { ...MERIT_PARTS, ranker: { name: "hybird" } } })).toThrow(/unknown ranker "hybird"\. Did you mean "hybrid"\?/);
    expect(() => registerMethod({ name: "test_bad_arg", description: "x", parts: { ...MERIT_PARTS, planner: { name: "pools", args: { layot: "combined" } } } })).toThrow(/pool planner "pools" has no arg "layot" \(did you mean "layout"\?\)/);
    expect(() => registerMethod({ name: "test_bad_type", description: "x", parts: { ...MERIT_PARTS, planner: { name: "pools", args: { causal: "no" } } } })).toThrow(/arg "causal" must be a boolean/);
    expect(() => registerMethod({ name: "test_bad_value", description: "x", parts: { ...MERIT_PARTS, planner: { name: "pools", args: { layout: "combind" } } } })).toThrow(/must be one of by_polarity, positive_only, combined.*did you mean "combined"/);
    expect(() => registerMethod({ name: "test_partial", description: "x", parts: { ranker: { name: "hybrid" } } })).toThrow(/needs a planner, a ranker and a writer \(it has 1 of them\)/);
    expect(() => registerAlias("test_alias_of_alias", "merit_full")).toThrow(/itself an alias of "merit"/);
    expect(() => getMethod("merrit")).toThrow(MeritError);
    for (const name of ["test_bad_ranker", "test_bad_arg", "test_bad_type", "test_bad_value", "test_partial"]) expect(isMethodName(name)).toBe(false);
  });
});

describe("the manifest record", () => {
  it("rebuilds every registered method from its record", () => {
    for (const name of methodNames()) {
      const method = getMethod(name);
      const manifest = JSON.parse(JSON.stringify({ method: name, method_description: method.description, method_parts: methodRecord(method) }));
      const rebuilt = methodFromManifest(manifest);
      expect(rebuilt.parts, name).toEqual(method.parts);
      expect({ ...rebuilt, canonicalName: null, memory: rebuilt.memory && { ...rebuilt.memory, canonicalName: null } }, name).toEqual({ ...method, canonicalName: null, memory: method.memory && { ...method.memory, canonicalName: null } });
      expect(methodRecord(rebuilt)).toEqual(methodRecord(method));
    }
  });
  it("names a record that cannot be rebuilt", () => {
    expect(() => methodFromManifest({ method: "x", method_description: "d" }, "m.json")).toThrow(/^m\.json: has no method_parts record/);
    const parts = { repairs: true, steps: [], planner: { name: "pools", args: {} }, ranker: { name: "no_such_ranker", args: {} }, writer: { name: "episode_memory", args: {} } };
    expect(() => methodFromManifest({ method: "x", method_description: "d", method_parts: parts }, "m.json")).toThrow(/records a method that cannot be rebuilt here: unknown ranker "no_such_ranker".*--plugin/);
  });
  it("records the config's retrieval settings in the parts' args", () => {
    const typerel = getMethod("merit_typerel");
    expect(configureMethod(typerel, DEFAULT_RETRIEVAL_SETTINGS)).toEqual(typerel);
    const configured = configureMethod(typerel, { max_positive: 5, max_negative: 2, min_typed_pool: 4, type_bonus: 0.3 });
    expect(configured.parts.planner?.args).toMatchObject({ max_positive: 5, max_negative: 2, min_typed_pool: 4 });
    expect(configured.parts.ranker?.args.type_bonus).toBe(0.3);
    expect(configured.memory).toMatchObject({ limits: { positive: 5, negative: 2, combined: 7 }, minTypedPool: 4, typeBonus: 0.3 });
    expect(configureMethod(getMethod("merit"), { ...DEFAULT_RETRIEVAL_SETTINGS, type_bonus: 0.3 }).parts.ranker?.args.type_bonus).toBe(0);
    expect(methodFromManifest({ method: "merit_typerel", method_description: configured.description, method_parts: methodRecord(configured) }).memory).toMatchObject({ typeBonus: 0.3, minTypedPool: 4 });
  });
});

describe("the ranker seam", () => {
  it("the retriever calls a registered ranker part with each pool and embeds only for the dense channel", async () => {
    const seen: RankPool[] = [];
    PARTS.ranker.register("test_first_rows", {
      summary: "first rows of the pool (a test ranker)",
      defaults: { keep_last: false },
      build: (args) => ({
        channels: { dense: false, bm25: false },
        typeBonus: 0,
        rank: (pool) => {
          seen.push(pool);
          const rows = args.keep_last ? [...pool.candidates].reverse() : [...pool.candidates];
          return rows.slice(0, pool.limit).map((row, i) => ({ row, dense: 0, bm25: 0, typeMatch: 0, final: i }));
        },
      }),
    });
    const method = buildMethod({ name: "test_first_rows", description: "x", parts: { ...MERIT_PARTS, ranker: { name: "test_first_rows", args: { keep_last: true } } } });
    const embedder = new ScriptedEmbedder(4, () => [1, 0, 0, 0]);
    const memory = new InMemoryMemoryStore(4);
    for (let i = 0; i < 5; i++) await memory.insert(makeEntry({ queryId: `q${i}`, position: i, delta: `SELECT ${i} => SELECT 0`, errorType: "Syntax" }), embedder);
    const query = { queryId: "cur", dbId: "db_cur", streamPosition: 50, repairIteration: 1, currentErrorType: "Syntax", question: "q", currentSql: "SELECT 1", failureContext: "f" };
    const r = await createRetriever().retrieve(memory, query, method.memory!, embedder);
    expect(seen.map((p) => p.key)).toEqual(["positive"]); // the negative pool is empty
    expect(seen[0].limit).toBe(3);
    expect(r.positives.map((p) => p.row)).toEqual([4, 3, 2]);
    expect(r.log.final_scores).toEqual([0, 1, 2]);
    expect(r.embeddingCalls).toBe(0);
    expect(r.log.dense_search).toBe("none");
  });
});

describe("docs", () => {
  it("docs/DESIGN.md's method table is the registry's (merit methods)", () => {
    const text = readFileSync(new URL("../../docs/DESIGN.md", import.meta.url), "utf8");
    const m = /<!-- methods:begin -->\n([\s\S]*?)\n<!-- methods:end -->/.exec(text);
    expect(m, "docs/DESIGN.md lacks the methods markers").not.toBeNull();
    expect(m![1].split("\n")).toEqual(methodTable(PAPER));
  });
  it("the Makefile's PAPER_METHODS and CONTROL_METHODS are the registry's methods without aliases, the controls are grid-plan's, and its ABLATIONS are paper methods", () => {
    const makefile = readFileSync(new URL("../../Makefile", import.meta.url), "utf8");
    const list = (name: string) => (new RegExp(`^${name} := (.*)$`, "m").exec(makefile)?.[1] ?? "").split(",");
    const canonical = PAPER.filter((n) => getMethod(n).canonicalName === n);
    expect([...list("PAPER_METHODS"), ...list("CONTROL_METHODS")].sort()).toEqual([...canonical].sort());
    expect(list("CONTROL_METHODS")).toEqual([...CONTROL_METHODS]);
    for (const name of list("ABLATIONS")) expect(list("PAPER_METHODS")).toContain(name);
    // every method a table of the paper reads runs by default
    for (const name of [...PAPER_MAIN_METHODS, ...PAPER_COMPARISONS]) expect(list("PAPER_METHODS")).toContain(name);
  });
  it("the report's paper layout names registered methods only", () => {
    for (const name of [...PAPER_MAIN_METHODS, ...PAPER_COMPARISONS]) expect(isMethodName(name), name).toBe(true);
  });
});
