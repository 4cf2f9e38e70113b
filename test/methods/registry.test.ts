// Tests lib/methods/: the paper's methods as hook sets in one registry (identity, aliases, factory
// and arg errors, the retired `parts` form refused), the manifest record round-trip for every
// registered method, the config's retrieval settings reaching MERIT's memory args, the retriever
// calling a registered ranker factory, and the docs' method table (docs/DESIGN.md) equal to the registry.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MeritError } from "../../lib/errors.ts";
import {
  buildMethod,
  DEFAULT_RETRIEVAL_SETTINGS,
  getMethod,
  isMethodName,
  meritMethod,
  methodFromManifest,
  methodNames,
  methodRecord,
  methodTable,
  RANKERS,
  registerAlias,
  registerMethod,
  underSettings,
  type MethodDefinition,
  type RankPool,
} from "../../lib/methods/index.ts";
import { PAPER_COMPARISONS, PAPER_MAIN_METHODS } from "../../lib/analysis/paper-layout.ts";
import { CONTROL_METHODS } from "../../lib/experiment/grid-plan.ts";
import { InMemoryMemoryStore } from "../../lib/memory/in-memory-store.ts";
import { createRetriever } from "../../lib/retrieval/retriever.ts";
import { makeEntry, ScriptedEmbedder } from "../memory/fixtures.ts";

const PAPER = ["zeroshot", "iterative", "reflexion", "merit", "merit_full", "merit_typerel", "confidence_aware_type_filter", "dynamic_rag", "positive_only", "no_type_filter", "no_dense_rerank", "no_bm25", "random_same_type", "cross_database_only", "transductive_batch"];

describe("the paper's methods", () => {
  it("are all registered, each its own identity; aliases resolve to their target's hooks", () => {
    expect(methodNames().slice(0, PAPER.length)).toEqual(PAPER);
    for (const name of PAPER) {
      const m = getMethod(name);
      expect(m.name).toBe(name);
      const target = name === "merit_full" ? "merit" : name === "confidence_aware_type_filter" ? "merit_typerel" : name;
      expect(m.canonicalName).toBe(target);
      expect(m.record).toEqual(getMethod(target).record);
    }
    expect(getMethod("zeroshot")).toMatchObject({ repairs: false, memory: null, hooks: {}, record: { repairs: false } });
    expect(getMethod("zeroshot").record).toEqual({ repairs: false });
    expect(getMethod("iterative").record).toEqual({ repairs: true });
    expect(getMethod("reflexion")).toMatchObject({ repairs: true, memory: null, hooks: { step: { name: "reflect" } } });
    expect(getMethod("reflexion").record).toEqual({ repairs: true, hooks: { calls: { reflection: { most: { per_repair: 1, plus: 1 }, per: "repair_episode" } }, step: { name: "reflect", args: {} } } });
    const memoryArgs = (name: string) => (getMethod(name).record.hooks?.memory as { name: string; args: Record<string, unknown> }).args;
    expect(getMethod("merit").record.hooks?.memory?.name).toBe("merit_memory");
    expect(memoryArgs("random_same_type")).toMatchObject({ ranker: "random", ranker_args: {} });
    expect(memoryArgs("no_dense_rerank")).toMatchObject({ ranker: "hybrid", ranker_args: { bm25_weight: 0.25, dense_weight: 0, type_bonus: 0 } });
  });

  it("a method registered at runtime gets its own identity, not merit's", () => {
    const spec = registerMethod(meritMethod("test_runtime_method", "MERIT's memory under another name"));
    expect(spec.canonicalName).toBe("test_runtime_method");
    expect(getMethod("test_runtime_method").memory?.canonicalName).toBe("test_runtime_method");
    expect(getMethod("test_runtime_method").memory?.name).toBe("test_runtime_method");
    expect(isMethodName("test_runtime_method")).toBe(true);
  });

  it("refuses a clash, a bad ranker, a bad arg and the retired parts form with one line", () => {
    expect(() => registerMethod(meritMethod("merit", "again"))).toThrow(/method "merit" is already registered; choose another name/);
    expect(() => registerMethod(meritMethod("test_bad_ranker", "x", { ranker: "hybird" }))).toThrow(/unknown ranker "hybird"\. Did you mean "hybrid"\?/);
    expect(() => registerMethod(meritMethod("test_bad_arg", "x", { layot: "combined" }))).toThrow(/memory "merit_memory" has no arg "layot" \(did you mean "layout"\?\)/);
    expect(() => registerMethod(meritMethod("test_bad_type", "x", { causal: "no" }))).toThrow(/arg "causal" must be a boolean/);
    expect(() => registerMethod(meritMethod("test_bad_value", "x", { layout: "combind" }))).toThrow(/must be one of by_polarity, positive_only, combined.*did you mean "combined"/);
    expect(() => registerMethod(meritMethod("test_bad_ranker_arg", "x", { ranker_args: { dense_weigth: 1 } }))).toThrow(/ranker "hybrid" has no arg "dense_weigth" \(did you mean "dense_weight"\?\)/);
    const parts = { planner: { name: "pools" }, ranker: { name: "hybrid" }, writer: { name: "episode_memory" } };
    expect(() => registerMethod({ name: "test_partial", description: "x", parts } as unknown as MethodDefinition)).toThrow(/^method "test_partial": methods are hooks now, not parts/);
    expect(() => registerAlias("test_alias_of_alias", "merit_full")).toThrow(/itself an alias of "merit"/);
    expect(() => getMethod("merrit")).toThrow(MeritError);
    for (const name of ["test_bad_ranker", "test_bad_arg", "test_bad_type", "test_bad_value", "test_bad_ranker_arg", "test_partial"]) expect(isMethodName(name)).toBe(false);
  });
});

describe("the manifest record", () => {
  it("rebuilds every registered method from its record", () => {
    for (const name of methodNames()) {
      const method = getMethod(name);
      const manifest = JSON.parse(JSON.stringify({ method: name, method_description: method.description, method_parts: methodRecord(method) }));
      const rebuilt = methodFromManifest(manifest);
      expect(rebuilt.record, name).toEqual(method.record);
      // the definition (its withArgs) and the hook objects are rebuilt, so compare what they describe
      const plain = (m: typeof method) => ({ ...m, canonicalName: null, definition: null, hooks: null, memory: m.memory && { ...m.memory, canonicalName: null } });
      expect(plain(rebuilt), name).toEqual(plain(method));
      expect(Object.keys(rebuilt.hooks).sort(), name).toEqual(Object.keys(method.hooks).sort());
      expect(methodRecord(rebuilt)).toEqual(methodRecord(method));
    }
  });
  it("names a record that cannot be rebuilt", () => {
    expect(() => methodFromManifest({ method: "x", method_description: "d" }, "m.json")).toThrow(/^m\.json: has no method_parts record/);
    const record = { repairs: true, hooks: { calls: {}, memory: { name: "merit_memory", args: { ranker: "no_such_ranker" } } } };
    expect(() => methodFromManifest({ method: "x", method_description: "d", method_parts: record }, "m.json")).toThrow(/records a method that cannot be rebuilt here: unknown ranker "no_such_ranker".*--plugin/);
  });
  it("refuses an earlier kit's parts record in one line rather than rebuilding a memoryless method from it", () => {
    const merit = { repairs: true, steps: [], planner: { name: "pools", args: {} }, ranker: { name: "hybrid", args: {} }, writer: { name: "episode_memory", args: {} } };
    expect(() => methodFromManifest({ method: "merit", method_description: "d", method_parts: merit }, "m.json")).toThrow(/^m\.json: .*older kit/);
    const reflexion = { repairs: true, steps: [{ name: "reflect", args: {} }] };
    expect(() => methodFromManifest({ method: "reflexion", method_description: "d", method_parts: reflexion }, "m.json")).toThrow(/^m\.json: .*older kit/);
  });
  it("records the config's retrieval settings in MERIT's memory args", () => {
    const typerel = getMethod("merit_typerel");
    expect(underSettings(typerel, DEFAULT_RETRIEVAL_SETTINGS)).toEqual(typerel);
    const configured = underSettings(typerel, { max_positive: 5, max_negative: 2, min_typed_pool: 4, type_bonus: 0.3 });
    const args = (m: typeof typerel) => (m.record.hooks?.memory as { args: Record<string, unknown> }).args;
    expect(args(configured)).toMatchObject({ max_positive: 5, max_negative: 2, min_typed_pool: 4 });
    expect((args(configured).ranker_args as Record<string, unknown>).type_bonus).toBe(0.3);
    expect(configured.memory).toMatchObject({ limits: { positive: 5, negative: 2, combined: 7 }, minTypedPool: 4, typeBonus: 0.3 });
    expect((args(underSettings(getMethod("merit"), { ...DEFAULT_RETRIEVAL_SETTINGS, type_bonus: 0.3 })).ranker_args as Record<string, unknown>).type_bonus).toBe(0);
    expect(methodFromManifest({ method: "merit_typerel", method_description: configured.description, method_parts: methodRecord(configured) }).memory).toMatchObject({ typeBonus: 0.3, minTypedPool: 4 });
  });
});

describe("the ranker seam", () => {
  it("the retriever calls a registered ranker factory with each pool and embeds only for the dense channel", async () => {
    const seen: RankPool[] = [];
    RANKERS.register("test_first_rows", {
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
    const method = buildMethod(meritMethod("test_first_rows", "x", { ranker: "test_first_rows", ranker_args: { keep_last: true } }));
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
