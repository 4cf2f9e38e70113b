/**
 * `merit run` and `merit grid`: one method × one stream order, or many at once sharing one loaded
 * model (parallel slots, one llama.cpp context each) or one set of OpenAI-compatible endpoints.
 * @module
 */
import { availableParallelism } from "node:os";
import { join, resolve } from "node:path";
import { missingDatabases } from "../data/index.ts";
import { UsageError } from "../errors.ts";
import { configHash, loadConfig, type ExperimentConfig } from "../experiment/config.ts";
import { loadConfigDataset, type ConfigDatasetOptions } from "../experiment/database-set.ts";
import { readInitialCache } from "../experiment/initial-cache.ts";
import { runManifestExtras } from "../experiment/provenance.ts";
import { parseShard, selectShard } from "../experiment/shard.ts";
import { templateSetHash } from "../prompts.ts";
import { checkResume, checkRunDir, runExperiment, type RunOptions, type RunProgress, type RunResult } from "../experiment/run.ts";
import { protocolIdOf } from "../oracle/oracle.ts";
import { createServices } from "../experiment/services.ts";
import { getMethod, loadPlugins, type PluginRecord } from "../methods/index.ts";
import { ALLOW_SINGLE_DB, ALLOW_SINGLE_DB_USAGE, listFlag, numberFlag, parseFlags, required, type Command, type CommandIO } from "./command.ts";
import { assertWritableDir, assertWritableFile } from "./output-paths.ts";

const PLUGIN_USAGE = `  --plugin  a TypeScript file that registers methods (lib/methods/), imported before names are
            resolved; repeat it or give a comma list; the manifest records each file's path and sha256`;

const RUN_USAGE = `usage: merit run --config FILE --method NAME --seed S [--limit N] [--out DIR] [--resume]
                 [--model GGUF] [--threads N] [--sequences N] [--plugin FILE.ts ...]
  Runs one method over one stream order; the run directory gets config.json, manifest.json,
  trajectories.jsonl, retrieval_log.jsonl, prompts.jsonl, memory/, metrics.json and stdout.log.
  --seed    stream order: any non-negative integer (the paper's runs use 0, 1, 2)
  --out     run directory (default runs/<dataset>/<method>-s<seed>)
  --resume  continue a killed run in --out (same config, method, seed and limit)
  --model   GGUF overriding the config's model.path
${PLUGIN_USAGE}
${ALLOW_SINGLE_DB_USAGE}`;

const GRID_USAGE = `usage: merit grid --config FILE --methods a,b,... [--seeds 0,1,2] [--limit N] [--out DIR] [--resume]
                  [--model GGUF] [--threads N] [--sequences N] [--shard i/n] [--plugin FILE.ts ...]
  Runs every (method, seed) stream at once, sharing one loaded model through parallel slots
  (methods and seeds each named once; seeds are non-negative integers, default 0,1,2)
  (--sequences; default: one per stream, at most 8; outputs do not depend on it). Run directories: OUT/<method>-s<seed>
  (default OUT = runs/<dataset>).
  --shard i/n  run only shard i (0-based) of n: streams i, i+n, ... of the methods x seeds list, so n
               machines (a Slurm array) together write exactly the run directories of one machine;
               unite their call caches afterwards with \`merit cache merge\`.
${PLUGIN_USAGE}`;

const FLAGS = {
  config: { type: "string" },
  method: { type: "string" },
  methods: { type: "string" },
  seed: { type: "string" },
  seeds: { type: "string" },
  limit: { type: "string" },
  out: { type: "string" },
  resume: { type: "boolean" },
  model: { type: "string" },
  threads: { type: "string" },
  sequences: { type: "string" },
  shard: { type: "string" },
  plugin: { type: "string", multiple: true },
  ...ALLOW_SINGLE_DB,
} as const;

export interface Stream {
  method: string;
  seed: number;
  outDir: string;
}

export interface StreamResult {
  stream: Stream;
  result: RunResult;
}

/** Runs every stream concurrently on one set of services; prints per-stream progress on stderr. */
export async function runGrid(config: ExperimentConfig, streams: Stream[], limit: number | null, resume: boolean, io: CommandIO, data: ConfigDatasetOptions = {}, plugins: readonly PluginRecord[] = []): Promise<StreamResult[]> {
  for (const s of streams) getMethod(s.method); // unknown names fail before any model loads
  assertDistinctStreams(streams);
  for (const s of streams) assertWritableDir(s.outDir, "--out");
  assertWritableFile(config.call_cache, "the config's call_cache");
  const { dataset, databaseSet, warnings } = await loadConfigDataset(config, data);
  for (const line of warnings) io.err(line);
  const missing = missingDatabases(dataset);
  if (missing.length > 0) io.err(`warning: no database for ${missing.map((m) => `${m.dbId} (${m.examples})`).join(", ")}; those queries are dropped from the stream`);
  const initialCache = readInitialCache(config.initial_cache, dataset, protocolIdOf(config.dataset, config.protocol));
  for (const s of streams) checkRunDir(s.outDir, { config, method: s.method, seed: s.seed, limit }, resume);
  io.err(`config ${configHash(config).slice(0, 12)}, ${config.dataset}, K=${config.max_repair_steps}, protocol ${config.protocol}, initial cache ${initialCache.cache_hash.slice(0, 12)} (${initialCache.identity.model_name})`);
  if (config.prompts_dir !== undefined) templateSetHash(config.prompts_dir); // a missing template fails before any model loads
  const services = await createServices(config, dataset);
  try {
    const extras = { ...(await runManifestExtras(services.inner, config.prompts_dir, databaseSet)), ...(plugins.length > 0 ? { plugins: plugins.map((p) => ({ ...p })) } : {}) };
    // Progress (STYLE.md §2.18). On a terminal: one bar per stream (done/total, repaired, tokens, ETA),
    // redrawn in place. Otherwise: one aggregate line every 5 s, plus a line as each stream completes.
    const progress = new Map<string, RunProgress & { started: number }>();
    const started = Date.now();
    const tty = Boolean(process.stderr.isTTY);
    let drawn = 0;
    let last = 0;
    const eta = (done: number, total: number, since: number) => {
      const rate = done / Math.max(1e-9, (Date.now() - since) / 1000);
      return rate > 0 && total > 0 ? `${Math.round((total - done) / rate)}s` : "?";
    };
    const flush = (force = false) => {
      if (!force && Date.now() - last < (tty ? 250 : 5000)) return;
      last = Date.now();
      const all = [...progress.entries()];
      const calls = services.backend.stats();
      if (tty) {
        const width = 24;
        const lines = all.map(([key, p]) => {
          const filled = Math.round((width * p.done) / Math.max(1, p.total));
          return `${key.padEnd(28)} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${p.done}/${p.total} repaired ${p.repaired} tokens ${p.tokens} ETA ${eta(p.done, p.total, p.started)}`;
        });
        lines.push(`LLM calls ${calls.computed} computed, ${calls.hits} cached`);
        process.stderr.write((drawn > 0 ? `\x1b[${drawn}F` : "") + lines.map((l) => `\x1b[2K${l}`).join("\n") + "\n");
        drawn = lines.length;
        return;
      }
      const done = all.reduce((n, [, p]) => n + p.done, 0);
      const total = all.reduce((n, [, p]) => n + p.total, 0);
      const finished = all.filter(([, p]) => p.done === p.total).length;
      const repaired = all.reduce((n, [, p]) => n + p.repaired, 0);
      const tokens = all.reduce((n, [, p]) => n + p.tokens, 0);
      io.err(`episodes ${done}/${total || "?"} | streams done ${finished}/${streams.length} | repaired ${repaired} | tokens ${tokens} | LLM calls ${calls.computed} computed, ${calls.hits} cached | ETA ${eta(done, total, started)}`);
    };
    const runs: { stream: Stream; opts: RunOptions }[] = [];
    for (const s of streams) {
      const method = getMethod(s.method);
      const key = `${s.method}/s${s.seed}`;
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
            embedder: method.memory ? await services.embedder() : undefined,
            retriever: method.memory ? services.retriever() : undefined,
          },
          manifest: extras,
          onProgress: (p) => {
            progress.set(key, { ...p, started: progress.get(key)?.started ?? Date.now() });
            flush(p.done === p.total);
          },
          log: (line) => {
            if (!tty) io.err(line);
          },
        },
      });
    }
    // Every stream's resume checks (recorded hashes, committed lines) pass before any stream writes.
    for (const r of runs) checkResume(r.opts);
    const results = await Promise.all(runs.map(async (r) => ({ stream: r.stream, result: await runExperiment(r.opts) })));
    flush(true);
    const stats = services.backend.stats();
    // A finished grid's failed calls are server refusals (any other error ends it): say so loudly.
    const refused = stats.errors > 0 ? `; ${stats.errors} refused by the server, recorded as failed generations (metrics.json failed_generations)` : "";
    io.err(`LLM calls: ${stats.computed} computed, ${stats.hits} from the call cache (${config.call_cache})${refused}`);
    return results;
  } finally {
    await services.close();
  }
}

async function runStreams(config: ExperimentConfig, streams: Stream[], limit: number | null, resume: boolean, io: CommandIO, data: ConfigDatasetOptions, plugins: readonly PluginRecord[]): Promise<number> {
  for (const { stream: s, result } of await runGrid(config, streams, limit, resume, io, data, plugins)) {
    const m = result.metrics;
    io.out(`${s.method} seed ${s.seed}: EX ${(100 * m.final_accuracy).toFixed(2)} (initial ${(100 * m.success_at_1).toFixed(2)}), repaired ${m.repaired_count}, n ${m.total} -> ${s.outDir}`);
  }
  return 0;
}

/** Most parallel slots one process opens (each is its own llama.cpp context with its own KV cache). */
const MAX_SEQUENCES = 64;

export function applyOverrides(config: ExperimentConfig, values: { model?: string; threads?: string; sequences?: string }, streams: number): ExperimentConfig {
  const model = { ...config.model };
  if (values.model) model.path = values.model;
  if (values.threads !== undefined) model.threads = numberFlag(values.threads, "threads", 1, { integer: true, min: 1, max: availableParallelism(), maxReason: "the CPU cores here" });
  model.sequences = values.sequences !== undefined ? numberFlag(values.sequences, "sequences", 1, { integer: true, min: 1, max: MAX_SEQUENCES, maxReason: "one llama.cpp context each" }) : Math.max(model.sequences, Math.min(8, streams));
  return { ...config, model };
}

/** The --plugin files: each occurrence may be a comma list. */
function pluginFiles(values: readonly string[] | undefined): string[] {
  return (values ?? []).flatMap((v) => listFlag(v, "plugin"));
}

function parseLimit(text: string | undefined): number | null {
  return text === undefined ? null : numberFlag(text, "limit", 0, { integer: true, min: 1 });
}

/** A stream seed: any non-negative integer in decimal digits (`1e3`, `-1`, `0.5` are refused). */
function parseSeed(text: string, flag: string): number {
  const seed = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(seed)) throw new UsageError(`--${flag}: seeds must be non-negative integers, got "${text}"`);
  return seed;
}

/** Two streams of one method and seed, or two streams in one folder, are refused before any directory is created. */
function assertDistinctStreams(streams: readonly Stream[]): void {
  const byKey = new Map<string, Stream>();
  const byDir = new Map<string, Stream>();
  for (const s of streams) {
    const key = `${s.method}\0${s.seed}`;
    if (byKey.has(key)) throw new UsageError(`${s.method} seed ${s.seed} is asked for twice; name each method and seed once`);
    const dir = resolve(s.outDir);
    const sharer = byDir.get(dir);
    if (sharer) throw new UsageError(`${sharer.method} seed ${sharer.seed} and ${s.method} seed ${s.seed} would share the run directory ${s.outDir}; give each stream its own --out`);
    byKey.set(key, s);
    byDir.set(dir, s);
  }
}

export const runCommand: Command = {
  name: "run",
  summary: "run one method over one stream order (crash-safe, resumable)",
  usage: RUN_USAGE,
  async run(argv, io) {
    const { values } = parseFlags(argv, FLAGS, RUN_USAGE);
    const configFile = required(values.config, "config", RUN_USAGE);
    const base = loadConfig(configFile);
    const method = required(values.method, "method", RUN_USAGE);
    const seed = parseSeed(required(values.seed, "seed", RUN_USAGE), "seed");
    const limit = parseLimit(values.limit);
    const config = applyOverrides(base, values, 1);
    const outDir = values.out ?? join("runs", config.dataset, `${method}-s${seed}`);
    const plugins = await loadPlugins(pluginFiles(values.plugin));
    return runStreams(config, [{ method, seed, outDir }], limit, values.resume ?? false, io, { allowSingleDb: values["allow-single-db"], configFile }, plugins);
  },
};

export const gridCommand: Command = {
  name: "grid",
  summary: "run many (method, seed) streams at once on one loaded model",
  usage: GRID_USAGE,
  async run(argv, io) {
    const { values } = parseFlags(argv, FLAGS, GRID_USAGE);
    const configFile = required(values.config, "config", GRID_USAGE);
    const base = loadConfig(configFile);
    const plugins = await loadPlugins(pluginFiles(values.plugin));
    const methods = listFlag(required(values.methods, "methods", GRID_USAGE), "methods");
    const seeds = listFlag(values.seeds ?? "0,1,2", "seeds").map((text) => parseSeed(text, "seeds"));
    const limit = parseLimit(values.limit);
    const root = values.out ?? join("runs", base.dataset);
    const all = methods.flatMap((method) => seeds.map((seed) => ({ method, seed, outDir: join(root, `${method}-s${seed}`) })));
    const shard = values.shard === undefined ? undefined : parseShard(values.shard);
    const streams = shard ? selectShard(all, shard) : all;
    if (shard) io.err(`shard ${shard.index}/${shard.count}: ${streams.length} of ${all.length} stream(s): ${streams.map((s) => `${s.method}-s${s.seed}`).join(", ") || "none"}`);
    if (streams.length === 0) return 0;
    const config = applyOverrides(base, values, streams.length);
    return runStreams(config, streams, limit, values.resume ?? false, io, { allowSingleDb: values["allow-single-db"], configFile }, plugins);
  },
};
