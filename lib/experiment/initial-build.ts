/**
 * Experiment, building a config's shared initial cache (METHOD.md §2; `merit initial`, runStudy):
 * one greedy call per query with the config's model (through its LLM call cache), or the SQL of a
 * real predictions file scored by the oracle (token counts recorded as unknown).
 * @module
 */
import { executorOf, type ExperimentConfig } from "./config.ts";
import { loadConfigDataset, type ConfigDatasetOptions } from "./database-set.ts";
import { initialCacheFromModel, initialCacheFromPredictions, writeInitialCache, type InitialCache } from "./initial-cache.ts";
import { assertWritableFile } from "./output-paths.ts";
import type { Reporter } from "./reporter.ts";
import { createServices, defaultJobs } from "./services.ts";
import { Oracle } from "../oracle/oracle.ts";
import { readPredictions, type PredictionEncoding } from "../oracle/predictions.ts";
import { templateSetHash } from "../prompts.ts";

export interface InitialBuildOptions {
  /** A predictions file (one SQL per line) whose statements are the initial attempts; absent: the model. */
  fromPredictions?: string;
  /** The predictions file's encoding (default utf8). */
  encoding?: PredictionEncoding;
  /** Where to write (default: the config's initial_cache; named `--out` in errors). */
  out?: string;
  /** How the config's databases are found (lib/experiment/database-set.ts). */
  data?: ConfigDatasetOptions;
  reporter?: Reporter;
}

export interface InitialBuildResult {
  /** The file written. */
  out: string;
  cache: InitialCache;
}

/** Builds and writes the initial cache of `config`; returns it with the file written. */
export async function buildInitialCache(config: ExperimentConfig, opts: InitialBuildOptions = {}): Promise<InitialBuildResult> {
  const log = opts.reporter?.log ?? (() => undefined);
  const out = opts.out ?? config.initial_cache;
  assertWritableFile(out, opts.out === undefined ? "the config's initial_cache" : "--out");
  if (opts.fromPredictions === undefined) assertWritableFile(config.call_cache, "the config's call_cache");
  const { dataset, warnings } = await loadConfigDataset(config, opts.data ?? {});
  for (const line of warnings) log(line);
  let cache: InitialCache;
  if (opts.fromPredictions === undefined) {
    if (config.prompts_dir !== undefined) templateSetHash(config.prompts_dir); // a missing template fails before any model loads
    const services = await createServices(config, dataset, { jobs: defaultJobs() });
    try {
      log(`merit initial: one greedy call per query (${dataset.examples.length}) with ${services.inner.identity.model}`);
      cache = await initialCacheFromModel(dataset, services.backend, services.oracle, {
        maxOutputTokens: config.decoding.max_output_tokens,
        maxInputTokens: config.decoding.max_input_tokens,
        promptsDir: config.prompts_dir,
        onProgress: opts.reporter?.counter?.("initial"),
      });
      const stats = services.backend.stats();
      log(`LLM calls: ${stats.computed} computed, ${stats.hits} from the call cache (${config.call_cache})`);
    } finally {
      await services.close();
    }
  } else {
    const predictions = readPredictions(opts.fromPredictions, opts.encoding ?? "utf8", dataset.examples.length);
    const oracle = new Oracle({ dataset: config.dataset, databases: dataset.databases, protocol: config.protocol, timeoutMs: config.sql_timeout_s * 1000, jobs: defaultJobs(), engine: executorOf(config) });
    try {
      cache = await initialCacheFromPredictions(dataset, predictions, oracle);
    } finally {
      await oracle.close();
    }
    log("token counts are unknown for imported predictions (recorded as null)");
  }
  writeInitialCache(out, cache);
  return { out, cache };
}

/** What was written, in two lines: the file, its records and initial EX, then its cache hash. */
export function initialCacheLines({ out, cache }: InitialBuildResult): string[] {
  const scored = cache.records.filter((r) => r.oracle_correct !== null);
  const correct = scored.filter((r) => r.oracle_correct).length;
  return [`wrote ${out}: ${cache.records.length} records, initial EX ${((100 * correct) / Math.max(1, scored.length)).toFixed(2)} (${correct}/${scored.length}), protocol ${cache.identity.evaluation_protocol}`, `cache_hash ${cache.cache_hash}`];
}
