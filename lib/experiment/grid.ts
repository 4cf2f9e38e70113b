/**
 * Experiment runs, the grid (METHOD.md §7, §11; DESIGN.md §1): many (method, seed) streams run at
 * once on one set of services — one loaded model with parallel slots, or one set of
 * OpenAI-compatible endpoints — each writing its own run directory (run.ts). Every check that can
 * refuse the grid (unknown method, two streams in one folder, a run directory that holds another
 * run, a grid folder whose runs were made with other inputs, a missing template, a changed manifest
 * on resume) runs before any stream writes. Progress
 * and status lines go to the caller's callbacks; this module prints nothing (STYLE.md §3.6).
 * @module
 */
import { join, resolve } from "node:path";
import { missingDatabases } from "../data/index.ts";
import { UsageError } from "../errors.ts";
import type { CallCacheStats } from "../llm/call-cache.ts";
import { protocolIdOf } from "../oracle/oracle.ts";
import { templateSetHash } from "../prompts.ts";
import { aliasTarget, underSettings, getMethod, needsEmbedder, pluginsUsedBy, type PluginRecord } from "../methods/index.ts";
import { getFeedback } from "../methods/feedback.ts";
import { configHash, executorOf, type ExperimentConfig } from "./config.ts";
import { loadConfigDataset, type ConfigDatasetOptions } from "./database-set.ts";
import { assertWritableDir, assertWritableFile } from "./output-paths.ts";
import { readInitialCache } from "./initial-cache.ts";
import { runManifestExtras } from "./provenance.ts";
import { checkResume, checkRunDir, runExperiment, type RunOptions, type RunProgress, type RunResult } from "./run.ts";
import { createServices, type ServiceOverrides } from "./services.ts";
import type { Reporter } from "./reporter.ts";
import { checkGridFolder } from "./shared-inputs.ts";

/** One (method, stream seed) run of a grid and its run directory. */
export interface Stream {
  method: string;
  seed: number;
  outDir: string;
}

export interface StreamResult {
  stream: Stream;
  result: RunResult;
}

/** One stream's progress after a committed episode. */
export interface GridProgress {
  /** `<method>/s<seed>`. */
  key: string;
  progress: RunProgress;
  /** Call counts of the shared backend at that moment. */
  calls: CallCacheStats;
}

export interface GridOptions {
  /** Queries per stream (null: all). */
  limit?: number | null;
  /** Continue killed runs in their directories. */
  resume?: boolean;
  /** How the config's dataset and database set are found (database-set.ts). */
  data?: ConfigDatasetOptions;
  /** Status lines — dataset warnings, the config line, the final call counts — for stderr. */
  log?: (line: string) => void;
  /** After every committed episode of any stream. */
  onProgress?: (update: GridProgress) => void;
  /** Each run's own lines (resuming, completed; also in its stdout.log). */
  runLog?: (line: string) => void;
  /** Once every stream has finished, before the final call-count line. */
  onFinished?: (calls: CallCacheStats) => void;
  /** The plugin files loaded (lib/methods/plugin-use.ts); each manifest records, as `plugins`, those whose registrations its run uses. */
  plugins?: readonly PluginRecord[];
  /** The grid's --out folder: runs already in it must share this grid's inputs (shared-inputs.ts). */
  root?: string;
  /** Replaces the config's chat backend or embedder (tests, notebooks); the caches still wrap them. */
  services?: ServiceOverrides;
}

/** The run directory name of a stream inside a grid folder: `<method>-s<seed>`. */
export function streamDirName(method: string, seed: number): string {
  return `${method}-s${seed}`;
}

/** Every (method, seed) stream, methods outer, each in `root/<method>-s<seed>`. */
export function planStreams(methods: readonly string[], seeds: readonly number[], root: string): Stream[] {
  return methods.flatMap((method) => seeds.map((seed) => ({ method, seed, outDir: join(root, streamDirName(method, seed)) })));
}

/**
 * Refuses, before anything loads: an unknown method (with the nearest name), a method and seed asked
 * for twice — also under two names of one method (`merit` and its alias `merit_full`) —, two streams
 * sharing one run directory.
 */
export function checkStreams(streams: readonly Stream[]): void {
  for (const s of streams) getMethod(s.method);
  const byKey = new Map<string, Stream>();
  const byDir = new Map<string, Stream>();
  for (const s of streams) {
    const method = aliasTarget(s.method) ?? s.method;
    const key = `${method}\0${s.seed}`;
    const twin = byKey.get(key);
    if (twin && twin.method !== s.method) {
      const [alias, target] = aliasTarget(twin.method) === null ? [s.method, twin.method] : [twin.method, s.method];
      throw new UsageError(`${alias} is another name of ${target} (an alias), so ${method} seed ${s.seed} is asked for twice; name each method once`);
    }
    if (twin) throw new UsageError(`${s.method} seed ${s.seed} is asked for twice; name each method and seed once`);
    const dir = resolve(s.outDir);
    const sharer = byDir.get(dir);
    if (sharer) throw new UsageError(`${sharer.method} seed ${sharer.seed} and ${s.method} seed ${s.seed} would share the run directory ${s.outDir}; give each stream its own --out`);
    byKey.set(key, s);
    byDir.set(dir, s);
  }
}

/** The config with one parallel slot per stream (at most 8) unless it asks for more: a grid's default. */
export function withGridSequences(config: ExperimentConfig, streams: number): ExperimentConfig {
  return { ...config, model: { ...config.model, sequences: Math.max(config.model.sequences, Math.min(8, streams)) } };
}

/**
 * `runGrid` after the output checks that name their flags (every run directory and the call cache
 * writable), with its lines and progress on `reporter`: the grid of `merit run|grid`, runStudy and runDemo.
 */
export async function runCheckedGrid(config: ExperimentConfig, streams: Stream[], opts: Omit<GridOptions, "log" | "onProgress" | "runLog" | "onFinished"> & { reporter?: Reporter } = {}): Promise<StreamResult[]> {
  checkStreams(streams); // unknown names and shared folders fail before any model loads
  for (const s of streams) assertWritableDir(s.outDir, "--out");
  assertWritableFile(config.call_cache, "the config's call_cache");
  const { reporter = {}, ...rest } = opts;
  return runGrid(config, streams, { ...rest, log: reporter.log, ...reporter.grid?.(streams.length) });
}

/** Runs every stream concurrently on one set of services and returns their results in stream order. */
export async function runGrid(config: ExperimentConfig, streams: Stream[], opts: GridOptions = {}): Promise<StreamResult[]> {
  const limit = opts.limit ?? null;
  const resume = opts.resume ?? false;
  const log = opts.log ?? (() => undefined);
  checkStreams(streams);
  // A config retrieval setting that conflicts with a method's own arg is refused before anything loads.
  for (const s of streams) underSettings(getMethod(s.method), config.retrieval);
  getFeedback(config.feedback_regime); // an unknown regime (a plugin not loaded?) stops here, before any model loads
  const { dataset, databaseSet, warnings } = await loadConfigDataset(config, opts.data ?? {});
  for (const line of warnings) log(line);
  const missing = missingDatabases(dataset);
  if (missing.length > 0) log(`warning: no database for ${missing.map((m) => `${m.dbId} (${m.examples})`).join(", ")}; those queries are dropped from the stream`);
  const initialCache = readInitialCache(config.initial_cache, dataset, protocolIdOf(config.dataset, config.protocol));
  for (const s of streams) checkRunDir(s.outDir, { config, method: s.method, seed: s.seed, limit }, resume);
  log(`config ${configHash(config).slice(0, 12)}, ${config.dataset}, K=${config.max_repair_steps}, protocol ${config.protocol}, initial cache ${initialCache.cache_hash.slice(0, 12)} (${initialCache.identity.model_name})`);
  if (config.prompts_dir !== undefined) templateSetHash(config.prompts_dir); // a missing template fails before any model loads
  // The backend is sized for the largest output limit any call of the grid declares (METHOD.md §12.4).
  const regime = getFeedback(config.feedback_regime);
  const maxOutputTokens = Math.max(config.decoding.max_output_tokens, regime.call?.maxOutputTokens ?? 0, ...streams.flatMap((s) => Object.values(getMethod(s.method).hooks.calls ?? {}).map((d) => d.maxOutputTokens ?? 0)));
  const services = await createServices(config, dataset, { ...opts.services, maxOutputTokens });
  try {
    const plugins = opts.plugins ?? [];
    const shared = await runManifestExtras(services.inner, config.prompts_dir, databaseSet);
    const runs: { stream: Stream; opts: RunOptions }[] = [];
    for (const s of streams) {
      // Configured as runExperiment configures it, so the resume checks below (checkResume, the
      // folder check) compare the method the run records, not the registered one.
      const method = underSettings(getMethod(s.method), config.retrieval);
      const key = `${s.method}/s${s.seed}`;
      // only the plugins whose registrations this stream uses are part of its identity
      const used = pluginsUsedBy(plugins, { method: s.method, dataset: config.dataset, executor: executorOf(config), engine: config.model.backend === "openai" ? config.model.engine : null, feedback: config.feedback_regime });
      const extras = { ...shared, ...(used.length > 0 ? { plugins: used.map((p) => ({ ...p })) } : {}) };
      runs.push({
        stream: s,
        opts: {
          spec: { config, method: s.method, seed: s.seed, limit },
          method,
          dataset,
          initialCache,
          outDir: s.outDir,
          resume,
          services: {
            backend: services.backend,
            oracle: services.oracle,
            embedder: needsEmbedder(method) ? await services.embedder() : undefined,
            retriever: method.memory ? services.retriever() : undefined,
          },
          manifest: extras,
          onProgress: (progress) => opts.onProgress?.({ key, progress, calls: services.backend.stats() }),
          log: (line) => opts.runLog?.(line),
        },
      });
    }
    // Every stream's resume checks (recorded hashes, committed lines) pass before any stream writes,
    // and so does the folder check: another shard's runs there were made with the same inputs.
    if (opts.root !== undefined) checkGridFolder(opts.root, runs.map((r) => r.opts));
    for (const r of runs) checkResume(r.opts);
    const results = await Promise.all(runs.map(async (r) => ({ stream: r.stream, result: await runExperiment(r.opts) })));
    const stats = services.backend.stats();
    opts.onFinished?.(stats);
    // A finished grid's failed calls are server refusals (any other error ends it): say so loudly.
    const refused = stats.errors > 0 ? `; ${stats.errors} refused by the server, recorded as failed generations (metrics.json failed_generations)` : "";
    const retried = stats.retries > 0 ? `; ${stats.retries} transient server failure(s) retried (manifest.json transport)` : "";
    // Embeddings are counted only when a memory method asked for the embedder (0 computed: the
    // embedding model was never loaded), on their own line before the last one, whose form
    // notebooks and scripts filter on.
    const embeddings = services.embeddingStats();
    if (embeddings !== null) log(`embeddings: ${embeddings.computed} computed, ${embeddings.hits} from the embedding cache (${config.call_cache})`);
    log(`LLM calls: ${stats.computed} computed, ${stats.hits} from the call cache (${config.call_cache})${refused}${retried}`);
    return results;
  } finally {
    await services.close();
  }
}
