/**
 * Test helpers for experiment runs (METHOD.md §6.6, §6.1): the real Spider dev data, an initial
 * cache built from a predictions file the test writes (so labels are the real oracle's), and
 * readers for the files of a run directory. Everything is written under os.tmpdir().
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadDataset, type Dataset } from "../../lib/data/index.ts";
import { initialCacheFromPredictions, writeInitialCache, type InitialCache } from "../../lib/experiment/initial-cache.ts";
import { buildStream } from "../../lib/experiment/stream.ts";
import { Oracle } from "../../lib/oracle/oracle.ts";
import { readPredictions } from "../../lib/oracle/predictions.ts";
import type { MemoryEntry } from "../../lib/memory/entry.ts";
import type { RetrievalLogRecord } from "../../lib/retrieval/retrieval-log.ts";
import { parseTrajectoryLines, type Trajectory } from "../../lib/repair/trajectory.ts";

export const REPO = fileURLToPath(new URL("../..", import.meta.url));
export const SPIDER_DIR = join(REPO, "data", "spider");
export const TINY_QWEN = join(REPO, "test", "fixtures", "models", "tiny-random-qwen2.5-instruct.gguf");
export const TINY_BGE = join(REPO, "test", "fixtures", "models", "tiny-random-bert-bge.gguf");
export const DEEPSEEK_PREDICTIONS = join(REPO, "data", "predictions", "spider_dev__Deepseek-Coder-7B.sql");

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `merit-${prefix}-`));
}

export function loadSpider(): Promise<Dataset> {
  return loadDataset({ name: "spider", dir: SPIDER_DIR });
}

export function spiderOracle(dataset: Dataset, jobs = 1): Oracle {
  return new Oracle({ dataset: "spider", databases: dataset.databases, protocol: "merit", timeoutMs: 30_000, jobs });
}

/**
 * Builds a sealed initial cache from SQL chosen per query id (every other query gets "" — scored
 * EXECUTION_ERROR without touching a database, so the build is fast) and writes it to `path`.
 */
export async function cacheFromChosenSql(dataset: Dataset, oracle: Oracle, sqlById: ReadonlyMap<string, string>, dir: string): Promise<{ cache: InitialCache; path: string }> {
  const lines = dataset.examples.map((e) => sqlById.get(e.id) ?? "");
  const predPath = join(dir, "chosen_predictions.sql");
  writeFileSync(predPath, lines.join("\n") + "\n");
  const cache = await initialCacheFromPredictions(dataset, readPredictions(predPath, "utf8", dataset.examples.length), oracle);
  const path = join(dir, "initial_cache.json");
  writeInitialCache(path, cache);
  return { cache, path };
}

/** The Llama3-8B predictions (Latin-1): they fail more than half of Spider dev, so short slices call the model. */
export const LLAMA3_PREDICTIONS = join(REPO, "data", "predictions", "spider_dev__Llama3-8B.sql");

/** Builds the initial cache of a real predictions file and writes it to `path`. */
export async function cacheFromPredictionsFile(dataset: Dataset, oracle: Oracle, predictions: string, path: string, encoding: "utf8" | "latin1" = "utf8"): Promise<InitialCache> {
  const cache = await initialCacheFromPredictions(dataset, readPredictions(predictions, encoding, dataset.examples.length), oracle);
  writeInitialCache(path, cache);
  return cache;
}

/** The initial cache of the Llama3-8B predictions on Spider dev, written to `path` (the grid tests' shared setup). */
export async function writeLlama3InitialCache(path: string): Promise<void> {
  const dataset = await loadSpider();
  const oracle = spiderOracle(dataset);
  try {
    await cacheFromPredictionsFile(dataset, oracle, LLAMA3_PREDICTIONS, path, "latin1");
  } finally {
    await oracle.close();
  }
}

/** The example ids of the first `limit` stream positions (as `merit run` would visit them). */
/**
 * A tiny-model grid config under `root` (`root/config.json`): Spider with the Llama3-8B initial
 * cache, K = 2, the tiny Qwen and BGE, a call cache in `root`, with `extra` config keys laid over it
 * (top-level keys replace). For plugin tests that run `merit grid`.
 */
export async function writeTinyGridConfig(root: string, extra: Record<string, unknown> = {}): Promise<string> {
  const initialCache = join(root, "initial.json");
  await writeLlama3InitialCache(initialCache);
  const config = join(root, "config.json");
  writeFileSync(config, JSON.stringify({ dataset: "spider", data_dir: SPIDER_DIR, initial_cache: initialCache, call_cache: join(root, "calls.sqlite"), protocol: "merit", max_repair_steps: 2, model: { backend: "llama", path: TINY_QWEN, threads: 1 }, embedder: { backend: "llama", path: TINY_BGE }, ...extra }));
  return config;
}

export function streamIds(dataset: Dataset, cache: InitialCache, seed: number, limit: number): string[] {
  return buildStream(dataset, cache, seed, limit).map((s) => s.example.id);
}

export function readJsonl<T>(path: string): T[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as T);
}

/** One line of prompts.jsonl as lib/experiment/run.ts writes it. */
export interface PromptLine {
  query_id: string;
  stream_position: number;
  kind: string;
  prompt_hash: string;
  prompt: string;
}

/** Everything a finished run directory holds, parsed. */
export interface RunFiles {
  trajectories: Trajectory[];
  retrievals: RetrievalLogRecord[];
  prompts: PromptLine[];
  positives: MemoryEntry[];
  negatives: MemoryEntry[];
  memoryDirExists: boolean;
  retrievalLogExists: boolean;
}

export function readRun(dir: string): RunFiles {
  const trajPath = join(dir, "trajectories.jsonl");
  return {
    trajectories: parseTrajectoryLines(readFileSync(trajPath, "utf8"), trajPath),
    retrievals: readJsonl<RetrievalLogRecord>(join(dir, "retrieval_log.jsonl")),
    prompts: readJsonl<PromptLine>(join(dir, "prompts.jsonl")),
    positives: readJsonl<MemoryEntry>(join(dir, "memory", "memory_positive.jsonl")),
    negatives: readJsonl<MemoryEntry>(join(dir, "memory", "memory_negative.jsonl")),
    memoryDirExists: existsSync(join(dir, "memory")),
    retrievalLogExists: existsSync(join(dir, "retrieval_log.jsonl")),
  };
}

/** Spider dev, its oracle, a temp folder and the DeepSeek-Coder initial cache written there (`initial.json`): the setup of the end-to-end runs on the simulated engine. */
export async function deepseekFixture(prefix: string): Promise<{ dataset: Dataset; oracle: Oracle; root: string; initial: string }> {
  const dataset = await loadSpider();
  const oracle = spiderOracle(dataset);
  const root = tempDir(prefix);
  const initial = join(root, "initial.json");
  await cacheFromPredictionsFile(dataset, oracle, DEEPSEEK_PREDICTIONS, initial);
  return { dataset, oracle, root, initial };
}
