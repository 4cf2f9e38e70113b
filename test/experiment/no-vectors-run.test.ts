// Methods whose ranker reads no vectors (issue 22 §1; lib/retrieval/ranker.ts `readsVectors`,
// lib/experiment/run.ts `openMemory`): no_dense_rerank and random_same_type on the scripted Spider
// scenario through a cold embedding cache whose embedder throws if loaded — the run stores no entry
// vector (embedding_dimension 0, empty memory_vectors.f32), bills no embedding call, and its
// trajectories, retrievals, prompts, memory entries and metrics equal those of the same ranking with
// vectors stored (a plugin twin whose ranker does not declare `vectors`), embedding counts aside.
// Audit and resume accept such runs; a run written before this change is refused on resume. A
// plugin ranker declaring `vectors: false` that asks for a vector gets one line; one without the
// declaration gets the vectors.
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditRun } from "../../lib/experiment/audit.ts";
import { parseConfig } from "../../lib/experiment/config.ts";
import { runExperiment } from "../../lib/experiment/run.ts";
import { EmbeddingCache } from "../../lib/llm/embedding-cache.ts";
import type { Embedder } from "../../lib/llm/types.ts";
import { getMethod, meritMethod, RANKERS, registerMethod, type RankContext, type Ranker, type RankPool } from "../../lib/methods/index.ts";
import { createRetriever } from "../../lib/retrieval/retriever.ts";
import { HashedEmbedder } from "../helpers/hashed-embedder.ts";
import { SPIDER_DIR } from "../helpers/run-fixture.ts";
import { ScriptedBackend } from "../helpers/scripted-backend.ts";
import { closeScenario, openScenario, SCENARIO_LIMIT, SCENARIO_SEED, scenarioScript, type ScenarioFixture } from "../helpers/scripted-scenario.ts";
import { budget } from "../helpers/budget.ts";

/** A ranker that ranks like `inner` but declares nothing about vectors (so its method stores them, as before). */
const undeclared = (inner: Ranker): Ranker => ({ channels: inner.channels, typeBonus: inner.typeBonus, rank: (pool, ctx) => inner.rank(pool, ctx) });
RANKERS.register("hybrid_undeclared", { summary: "hybrid, vectors undeclared (test)", defaults: { dense_weight: 0.75, bm25_weight: 0.25, type_bonus: 0 }, build: (a) => undeclared(RANKERS.get("hybrid").build(a)) });
RANKERS.register("random_undeclared", { summary: "random, vectors undeclared (test)", defaults: {}, build: (a) => undeclared(RANKERS.get("random").build(a)) });

/** Plugin rankers that read `ctx.vector`: one declaring `vectors: false`, one declaring nothing; `seen` records the vector lengths read. */
const seen: number[] = [];
const vectorReader = (declared: boolean): Ranker => {
  const bm25 = RANKERS.get("hybrid").build({ dense_weight: 0, bm25_weight: 1, type_bonus: 0 });
  return {
    channels: bm25.channels,
    typeBonus: 0,
    ...(declared ? { vectors: false } : {}),
    rank: (pool: RankPool, ctx: RankContext) => {
      for (const row of pool.candidates) seen.push(ctx.vector(row).length);
      return bm25.rank(pool, ctx);
    },
  };
};
RANKERS.register("reads_declared_none", { summary: "reads vectors, declares vectors: false (test)", defaults: {}, build: () => vectorReader(true) });
RANKERS.register("reads_undeclared", { summary: "reads vectors, declares nothing (test)", defaults: {}, build: () => vectorReader(false) });

const memoryArgs = (name: string) => (getMethod(name).record.hooks?.memory as { args: Record<string, unknown> }).args;
const twin = (name: string, ranker: string) => {
  registerMethod(meritMethod(`${name}_twin`, getMethod(name).description, { ...memoryArgs(name), ranker }));
};
twin("no_dense_rerank", "hybrid_undeclared");
twin("random_same_type", "random_undeclared");
for (const [name, ranker] of [["plugin_declared_none", "reads_declared_none"], ["plugin_undeclared", "reads_undeclared"]]) {
  registerMethod(meritMethod(name, `test: ${ranker}`, { ranker }));
}

let fixture: ScenarioFixture | undefined;
beforeAll(async () => {
  fixture = await openScenario("no-vectors");
}, budget(120_000));
afterAll(() => closeScenario(fixture));

/** Runs `method` on the scenario into `outDir` with `embedder`. */
async function run(method: string, outDir: string, embedder: Embedder, resume = false): Promise<void> {
  const f = fixture!;
  await runExperiment({
    spec: { config: parseConfig({ dataset: "spider", data_dir: SPIDER_DIR, initial_cache: f.cachePath }), method, seed: SCENARIO_SEED, limit: SCENARIO_LIMIT },
    method: getMethod(method),
    dataset: f.dataset,
    initialCache: f.cache,
    outDir,
    resume,
    services: { backend: new ScriptedBackend(scenarioScript(f.dataset)), oracle: f.oracle, embedder, retriever: createRetriever() },
  });
}

/** A cold embedding cache (a new file) whose embedder throws if it is ever loaded. */
function throwingCache(path: string): EmbeddingCache {
  const probe = new HashedEmbedder();
  return new EmbeddingCache({ identity: probe.identity, dimension: probe.dimension, load: async () => { throw new Error("the embedder was loaded"); } }, path);
}

const text = (dir: string, file: string) => readFileSync(join(dir, file), "utf8");
/** A JSON value without its fields named `keys` (any depth). */
function without(value: unknown, keys: readonly string[]): unknown {
  if (Array.isArray(value)) return value.map((v) => without(v, keys));
  if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).filter(([k]) => !keys.includes(k)).map(([k, v]) => [k, without(v, keys)]));
  return value;
}
const withoutEmbeddingCalls = (value: unknown) => without(value, ["embedding_calls", "embedding_tokens"]);
const jsonLines = (s: string) => s.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as unknown);

describe.each(["no_dense_rerank", "random_same_type"])("%s stores no vectors", (method) => {
  it("completes on a cold embedding cache without loading the embedder; outputs equal the run with vectors, embedding counts aside", async () => {
    const root = fixture!.root;
    const dir = join(root, method);
    const withVectors = join(root, `${method}_twin`);
    const cache = throwingCache(join(root, `${method}-embeddings.sqlite`));
    try {
      await run(method, dir, cache);
      expect(cache.loaded).toBe(false);
      expect(cache.stats()).toEqual({ hits: 0, computed: 0 });
    } finally {
      await cache.close();
    }
    const embedder = new HashedEmbedder();
    await run(`${method}_twin`, withVectors, embedder);
    expect(embedder.calls).toBeGreaterThan(0); // the twin stores vectors: today's behaviour

    const meta = JSON.parse(text(dir, "memory/memory_metadata.json"));
    expect(meta).toMatchObject({ embedding_dimension: 0, entry_count: JSON.parse(text(withVectors, "memory/memory_metadata.json")).entry_count });
    expect(meta.entry_count).toBeGreaterThan(0);
    expect(meta.index_backend).toMatch(/^none: /);
    expect(readFileSync(join(dir, "memory", "memory_vectors.f32")).byteLength).toBe(0);
    expect(readFileSync(join(withVectors, "memory", "memory_vectors.f32")).byteLength).toBeGreaterThan(0);

    const same = (file: string) => text(withVectors, file).replaceAll(`${method}_twin`, method);
    const trajectories = jsonLines(text(dir, "trajectories.jsonl")) as { accounting: { embedding_calls: number; embedding_tokens?: number }; retrieved_entry_ids: string[][] }[];
    expect(trajectories.every((t) => t.accounting.embedding_calls === 0 && t.accounting.embedding_tokens === 0)).toBe(true);
    expect(trajectories.some((t) => t.retrieved_entry_ids.some((ids) => ids.length > 0))).toBe(true); // not vacuous
    expect(withoutEmbeddingCalls(trajectories)).toEqual(withoutEmbeddingCalls(jsonLines(same("trajectories.jsonl"))));
    expect(withoutEmbeddingCalls(JSON.parse(text(dir, "metrics.json")))).toEqual(withoutEmbeddingCalls(JSON.parse(same("metrics.json"))));
    for (const file of ["retrieval_log.jsonl", "prompts.jsonl", "memory/memory_row_to_entry_id.json"]) expect(text(dir, file), file).toBe(same(file));
    // Entries alike but for source_episode_id, a hash over the method's name (the twin's differs).
    for (const file of ["memory/memory_positive.jsonl", "memory/memory_negative.jsonl"]) expect(without(jsonLines(text(dir, file)), ["source_episode_id"]), file).toEqual(without(jsonLines(same(file)), ["source_episode_id"]));

    expect(auditRun(dir, fixture!.dataset).violations).toEqual([]);
    // A resume of the finished run (a fresh cold cache) reads the dimension-0 store and changes nothing.
    const before = text(dir, "trajectories.jsonl");
    const again = throwingCache(join(root, `${method}-embeddings-2.sqlite`));
    try {
      await run(method, dir, again, true);
      expect(again.loaded).toBe(false);
    } finally {
      await again.close();
    }
    expect(text(dir, "trajectories.jsonl")).toBe(before);
  }, budget(120_000));

  it("refuses, in one line, to resume a run written before its entries stopped being embedded", async () => {
    const dir = join(fixture!.root, `${method}-old`);
    await run(method, dir, new HashedEmbedder());
    const metaPath = join(dir, "memory", "memory_metadata.json");
    writeFileSync(metaPath, text(dir, "memory/memory_metadata.json").replace('"embedding_dimension":0', '"embedding_dimension":64'));
    await expect(run(method, dir, new HashedEmbedder(), true)).rejects.toThrow(/^[^\n]*memory_metadata\.json: has embedding_dimension 64: the run was written before method .* stored none.*rerun it in a fresh --out[^\n]*$/);
    // Killed before its first memory write: no memory yet, but a trajectory billing an embedding.
    rmSync(join(dir, "memory"), { recursive: true });
    const lines = text(dir, "trajectories.jsonl").split("\n");
    const failed = lines.findIndex((l) => l.includes('"initial_correct":false'));
    lines[failed] = lines[failed].replace('"embedding_calls":0', '"embedding_calls":1');
    writeFileSync(join(dir, "trajectories.jsonl"), lines.join("\n"));
    await expect(run(method, dir, new HashedEmbedder(), true)).rejects.toThrow(new RegExp(`trajectories\\.jsonl: line ${failed + 1} bills 1 embedding call\\(s\\).*rerun it in a fresh --out`));
  }, budget(120_000));
});

describe("plugin rankers and vectors", () => {
  it("a ranker declaring vectors: false that asks for an entry vector gets one line naming the method", async () => {
    const dir = join(fixture!.root, "plugin_declared_none");
    const error = await run("plugin_declared_none", dir, new HashedEmbedder()).then(() => null, (e: Error) => e);
    expect(error?.message).toBe("ranker of method plugin_declared_none asked for an entry vector but declares vectors: false, so its memory stores none; drop the declaration");
    expect(JSON.parse(text(dir, "memory/memory_metadata.json")).embedding_dimension).toBe(0);
  }, budget(120_000));

  it("a ranker that declares nothing gets the stored vectors (today's behaviour)", async () => {
    const dir = join(fixture!.root, "plugin_undeclared");
    seen.length = 0;
    await run("plugin_undeclared", dir, new HashedEmbedder());
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((n) => n === new HashedEmbedder().dimension)).toBe(true);
    expect(JSON.parse(text(dir, "memory/memory_metadata.json")).embedding_dimension).toBe(new HashedEmbedder().dimension);
    expect(existsSync(join(dir, "memory", "memory_vectors.f32"))).toBe(true);
  }, budget(120_000));

  it("the dense channel with vectors: false is refused when the method is built", () => {
    RANKERS.register("dense_declared_none", { summary: "contradiction (test)", defaults: {}, build: () => ({ ...RANKERS.get("hybrid").build({ dense_weight: 0.75, bm25_weight: 0.25, type_bonus: 0 }), vectors: false, rank: () => [] }) });
    expect(() => registerMethod(meritMethod("dense_declared_none", "test", { ranker: "dense_declared_none" }))).toThrow(
      /^method "dense_declared_none": ranker "dense_declared_none" declares the dense channel and vectors: false/,
    );
  });
});
