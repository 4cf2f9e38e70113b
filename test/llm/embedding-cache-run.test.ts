// The embedding cache in experiment runs (lib/experiment/services.ts, lib/llm/embedding-cache.ts;
// METHOD.md §5.3): memory methods with the dense channel (merit) and without (no_dense_rerank)
// on real Spider queries with the tiny Qwen and tiny BGE GGUFs write byte-identical run directories
// (memory store included) with the plain embedder, through a cold embedding cache, and through a warm
// one — which computes no vector and never loads the embedder (a throwing embedder double stands in
// for it once). no_dense_rerank reads no vectors, so its memory holds none (issue 22 §1). A memoryless
// grid never asks for the embedder; the grid's last line counts embeddings. The plain and cold runs
// are made once (`plainAndColdRuns`) for both tests, so either test runs alone.
import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Dataset } from "../../lib/data/index.ts";
import { parseConfig, type ExperimentConfig } from "../../lib/experiment/config.ts";
import { planStreams, runGrid } from "../../lib/experiment/grid.ts";
import type { InitialCache } from "../../lib/experiment/initial-cache.ts";
import { runExperiment } from "../../lib/experiment/run.ts";
import { createServices, type Services } from "../../lib/experiment/services.ts";
import { createLlamaEmbedder } from "../../lib/llm/llama-embedder.ts";
import type { Embedder } from "../../lib/llm/types.ts";
import { getMethod } from "../../lib/methods/index.ts";
import { cacheFromPredictionsFile, LLAMA3_PREDICTIONS, loadSpider, SPIDER_DIR, tempDir, TINY_BGE, TINY_QWEN } from "../helpers/run-fixture.ts";
import { budget } from "../helpers/budget.ts";

const METHODS = ["merit", "no_dense_rerank"];
const LIMIT = 8;

let root: string;
let dataset: Dataset;
let config: ExperimentConfig;
let initialCache: InitialCache;

beforeAll(async () => {
  root = tempDir("embcache-run");
  dataset = await loadSpider();
  config = parseConfig({
    dataset: "spider",
    data_dir: SPIDER_DIR,
    initial_cache: join(root, "initial.json"),
    call_cache: join(root, "calls.sqlite"),
    max_repair_steps: 2,
    model: { backend: "llama", path: TINY_QWEN, gpu: false, threads: 1 },
    embedder: { backend: "llama", path: TINY_BGE },
    decoding: { max_output_tokens: 16 },
  });
  const services = await createServices(config, dataset, { jobs: 1 });
  try {
    initialCache = await cacheFromPredictionsFile(dataset, services.oracle, LLAMA3_PREDICTIONS, config.initial_cache, "latin1");
  } finally {
    await services.close();
  }
}, budget(120_000));
afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

/** Runs every method into `dir/<method>` on `services`, embedding with `embedder` (default: the services'). */
async function runAll(services: Services, dir: string, embedder?: Embedder): Promise<void> {
  for (const method of METHODS) {
    const spec = getMethod(method);
    await runExperiment({
      spec: { config, method, seed: 0, limit: LIMIT },
      method: spec,
      dataset,
      initialCache,
      outDir: join(dir, method),
      services: { backend: services.backend, oracle: services.oracle, embedder: embedder ?? (await services.embedder()), retriever: services.retriever() },
    });
  }
}

/** Every file under `dir` by relative path; the manifest without its timestamps, no stdout.log (run.ts: neither is reproducible). */
function files(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name === "stdout.log") continue;
      else if (name === "manifest.json") out[relative(dir, path)] = JSON.stringify({ ...JSON.parse(readFileSync(path, "utf8")), started_at: null, finished_at: null, timing: null });
      else out[relative(dir, path)] = readFileSync(path).toString("hex");
    }
  };
  walk(dir);
  return out;
}

/** The files of `dir` that differ from (or are missing in) `expected`, and extra ones. */
function differing(dir: string, expected: Record<string, string>): string[] {
  const actual = files(dir);
  return [...new Set([...Object.keys(expected), ...Object.keys(actual)])].filter((k) => actual[k] !== expected[k]).sort();
}

/** What the plain and the cold-cached runs observed (the cold runs fill the embedding cache). */
interface FirstRuns {
  expected: Record<string, string>;
  plainStats: ReturnType<Services["embeddingStats"]>;
  coldLoadedBefore: boolean;
  coldLoadedAfter: boolean;
  coldStats: ReturnType<Services["embeddingStats"]>;
}
let firstRuns: Promise<FirstRuns> | null = null;

/**
 * The plain runs and the cold-cached runs, made once per file whichever test asks first: the first
 * test checks them, and the grid test needs the vectors they leave in the embedding cache.
 */
function plainAndColdRuns(): Promise<FirstRuns> {
  return (firstRuns ??= (async () => {
    // 1. The plain embedder, no embedding cache.
    const plain = await createLlamaEmbedder({ modelPath: TINY_BGE, threads: 1 });
    const s1 = await createServices(config, dataset, { jobs: 1 });
    let plainStats: FirstRuns["plainStats"];
    try {
      await runAll(s1, join(root, "plain"), plain);
      plainStats = s1.embeddingStats();
    } finally {
      await s1.close();
      await plain.close();
    }
    // 2. Through a cold cache: every vector computed once, by the embedder loaded on the first miss.
    const s2 = await createServices(config, dataset, { jobs: 1 });
    try {
      const cache = await s2.embedder();
      const coldLoadedBefore = cache.loaded;
      await runAll(s2, join(root, "cold"));
      return { expected: files(join(root, "plain")), plainStats, coldLoadedBefore, coldLoadedAfter: cache.loaded, coldStats: s2.embeddingStats() };
    } finally {
      await s2.close();
    }
  })());
}

describe("embedding cache in runs", () => {
  it("plain, cold-cached and warm-cached runs write the same bytes; the warm runs load no embedder", async () => {
    const first = await plainAndColdRuns();
    // 1. The plain embedder, no embedding cache.
    expect(first.plainStats).toBeNull(); // never asked for
    const expected = first.expected;
    expect(Object.keys(expected)).toContain(join("merit", "memory", "memory_vectors.f32"));
    expect(Object.keys(expected)).toContain(join("no_dense_rerank", "memory", "memory_vectors.f32"));
    expect(expected[join("merit", "memory", "memory_vectors.f32")].length).toBeGreaterThan(0);
    // no_dense_rerank reads no vectors (issue 22 §1): its store holds none (embedding_dimension 0).
    expect(expected[join("no_dense_rerank", "memory", "memory_vectors.f32")]).toBe("");

    // 2. Through a cold cache: every vector computed once, by the embedder loaded on the first miss.
    expect(first.coldLoadedBefore).toBe(false);
    expect(first.coldLoadedAfter).toBe(true);
    expect(first.coldStats!.computed).toBeGreaterThan(0);
    expect(differing(join(root, "cold"), expected)).toEqual([]);

    // 3. Warm, with the config's embedder: nothing computed, the model never loaded.
    const s3 = await createServices(config, dataset, { jobs: 1 });
    try {
      const cache = await s3.embedder();
      await runAll(s3, join(root, "warm"));
      expect(cache.loaded).toBe(false);
      expect(s3.embeddingStats()).toEqual({ hits: expect.any(Number), computed: 0 });
      expect(s3.embeddingStats()!.hits).toBeGreaterThan(0);
    } finally {
      await s3.close();
    }
    expect(differing(join(root, "warm"), expected)).toEqual([]);

    // 4. Warm, with an embedder double of the same identity that counts tokens (the real one's) but refuses to embed.
    const real = await createLlamaEmbedder({ modelPath: TINY_BGE, threads: 1 });
    const throwing: Embedder = {
      identity: real.identity,
      dimension: real.dimension,
      embed: async (texts) => {
        throw new Error(`embedded ${texts.length} text(s) although every vector is cached`);
      },
      tokenCounts: (texts) => real.tokenCounts(texts),
      close: async () => undefined,
    };
    const s4 = await createServices(config, dataset, { jobs: 1, embedder: throwing });
    try {
      await runAll(s4, join(root, "double"));
    } finally {
      await s4.close();
      await real.close();
    }
    expect(differing(join(root, "double"), expected)).toEqual([]);
  }, budget(600_000));

  it("a memoryless grid never asks for the embedder; a memory grid counts embeddings on the line before the last", async () => {
    const logOf = async (methods: string[], dir: string) => {
      const log: string[] = [];
      await runGrid(config, planStreams(methods, [0], join(root, dir)), { limit: LIMIT, log: (line) => log.push(line) });
      return log.slice(-2);
    };
    const memoryless = await logOf(["iterative"], "grid-memoryless");
    expect(memoryless[1]).toMatch(/^LLM calls: \d+ computed, \d+ from the call cache \([^)]*\)$/);
    expect(memoryless[0]).not.toMatch(/embeddings/);
    // The cold runs left every vector of merit's stream in the cache.
    await plainAndColdRuns();
    const [embedded, calls] = await logOf(["merit"], "grid-merit");
    expect(embedded).toMatch(/^embeddings: 0 computed, [1-9]\d* from the embedding cache \(/);
    expect(embedded.endsWith(`(${config.call_cache})`)).toBe(true);
    expect(calls).toMatch(/^LLM calls: 0 computed, \d+ from the call cache \([^)]*\)$/);
  }, budget(300_000));
});
