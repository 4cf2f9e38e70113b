/**
 * Experiment runs (METHOD.md §6–7, §11): one method over one stream order, episode by episode, each
 * committed before the next starts — retrieval-log and prompt lines, then the trajectory line (the
 * commit point), then the memory insertion (idempotent by episode id). A killed run resumes from its
 * last committed episode and finishes byte-identical to an uninterrupted one (every file except the
 * manifest's timestamps and stdout.log).
 * @module
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { runMetrics } from "../analysis/metrics.ts";
import type { Dataset } from "../data/types.ts";
import { MeritError } from "../errors.ts";
import { canonicalJson, contentHash, type JsonValue } from "../hash.ts";
import type { ChatBackend, Embedder } from "../llm/types.ts";
import { finalizeEpisode, type MemoryWriteFlags } from "../memory/finalize.ts";
import { JsonlMemoryStore } from "../memory/jsonl-store.ts";
import type { MemoryStore } from "../memory/store.ts";
import type { Oracle } from "../oracle/oracle.ts";
import { runEpisode, type EpisodeSpec } from "../repair/episode.ts";
import type { MethodSpec } from "../repair/methods.ts";
import { finishedFromTrajectory, toTrajectory } from "../repair/trajectory-record.ts";
import { TrajectorySchema, type Trajectory } from "../repair/trajectory.ts";
import { configurePolicy } from "../retrieval/policies.ts";
import type { Retriever } from "../retrieval/retriever.ts";
import { writeFileAtomic } from "./atomic-file.ts";
import type { ExperimentConfig } from "./config.ts";
import type { InitialCache } from "./initial-cache.ts";
import { JsonlJournal } from "./journal.ts";
import { buildStream, type StreamItem } from "./stream.ts";
import { transductivePrepassEntries } from "./transductive.ts";

/** Files of a run directory. */
export const RUN_FILES = {
  config: "config.json",
  manifest: "manifest.json",
  trajectories: "trajectories.jsonl",
  retrievalLog: "retrieval_log.jsonl",
  prompts: "prompts.jsonl",
  metrics: "metrics.json",
  stdout: "stdout.log",
  memoryDir: "memory",
} as const;

/** What identifies a run; stored as config.json and compared on resume. */
export interface RunSpec {
  config: ExperimentConfig;
  method: string;
  seed: number;
  limit: number | null;
}

export interface RunServices {
  backend: ChatBackend;
  oracle: Oracle;
  /** Memory methods only. */
  embedder?: Embedder;
  /** Memory methods only; one retriever per run (it caches per-memory indexes). */
  retriever?: Retriever;
}

/** Progress after each committed episode. */
export interface RunProgress {
  done: number;
  total: number;
  repaired: number;
  tokens: number;
}

export interface RunOptions {
  spec: RunSpec;
  method: MethodSpec;
  dataset: Dataset;
  initialCache: InitialCache;
  outDir: string;
  services: RunServices;
  /** Continue a killed run in outDir (otherwise outDir must not hold a run). */
  resume?: boolean;
  /** Extra manifest fields (model identity, versions, git state); timestamps live only here. */
  manifest?: Record<string, JsonValue>;
  onProgress?: (p: RunProgress) => void;
  /** A line for stdout.log and the console. */
  log?: (line: string) => void;
}

export interface RunResult {
  outDir: string;
  trajectories: Trajectory[];
  metrics: ReturnType<typeof runMetrics>;
}

/**
 * The run's identity as stored in config.json. The number of parallel slots and the CPU thread
 * count are left out: the llama.cpp backend's outputs do not depend on them (llama-backend.ts,
 * "Determinism"), so a run can resume inside another grid or on another machine. The decoding mode
 * is kept when it is `throughput` (its recomputed outputs can differ) and left out when it is the
 * default, so run directories written before the mode existed keep their identity.
 */
export function runIdentity(spec: RunSpec): RunSpec {
  const { mode, ...model } = spec.config.model;
  const identity = { ...model, sequences: 1, threads: null, ...(mode === "throughput" ? { mode } : {}) };
  return { ...spec, config: { ...spec.config, model: identity as RunSpec["config"]["model"] } };
}

/**
 * Checks that `outDir` can take this run — empty, or (with `resume`) holding the same run — before
 * any model is loaded. Throws MeritError with the fix otherwise.
 */
export function checkRunDir(outDir: string, spec: RunSpec, resume: boolean): void {
  const configPath = join(outDir, RUN_FILES.config);
  if (!existsSync(configPath)) return;
  if (!resume) throw new MeritError(`${outDir} already holds a run; pass --resume to continue it or choose another --out`);
  const specText = canonicalJson(runIdentity(spec) as unknown as JsonValue) + "\n";
  if (readFileSync(configPath, "utf8") !== specText) throw new MeritError(`${outDir} holds a run with a different config, method, seed or limit; resume it with the same inputs or choose another --out`);
}

/** Runs (or resumes) one method over one stream order and writes its run directory. */
export async function runExperiment(given: RunOptions): Promise<RunResult> {
  // The config's retrieval settings are applied to the method's policy here, so every run honours
  // them whoever built its retriever (METHOD.md §5.5–5.6, policies.ts `configurePolicy`).
  const memoryPolicy = given.method.memory ? configurePolicy(given.method.memory, given.spec.config.retrieval) : null;
  const opts: RunOptions = memoryPolicy ? { ...given, method: { ...given.method, memory: memoryPolicy, description: memoryPolicy.description } } : given;
  const { spec, method, dataset, outDir, services } = opts;
  const log = (line: string) => {
    opts.log?.(line);
    stdout.append([line]);
  };
  mkdirSync(outDir, { recursive: true });
  const specText = canonicalJson(runIdentity(spec) as unknown as JsonValue) + "\n";
  const configPath = join(outDir, RUN_FILES.config);
  const trajectories = new JsonlJournal(join(outDir, RUN_FILES.trajectories));
  const retrievalLog = new JsonlJournal(join(outDir, RUN_FILES.retrievalLog));
  const prompts = new JsonlJournal(join(outDir, RUN_FILES.prompts));
  const stdout = new JsonlJournal(join(outDir, RUN_FILES.stdout));

  checkRunDir(outDir, spec, opts.resume ?? false);
  if (!existsSync(configPath)) writeFileAtomic(configPath, specText);
  const stream = buildStream(dataset, opts.initialCache, spec.seed, spec.limit ?? undefined, spec.config.subset);
  const startedAt = new Date().toISOString();
  writeManifest(outDir, opts, stream.length, "running", startedAt);

  const committed = (trajectories.recover() as unknown[]).map((t) => TrajectorySchema.parse(t));
  if (committed.length > stream.length) throw new MeritError(`${outDir} has more trajectories than its stream; the run directory is damaged`);
  const retrievalSteps = committed.reduce((n, t) => n + (method.memory ? t.retrieved_entry_ids.length : 0), 0);
  retrievalLog.recover(retrievalSteps);
  prompts.recover(committed.reduce((n, t) => n + t.call_kinds.length - 1, 0));
  if (committed.length > 0) log(`resuming ${outDir} at stream position ${committed.length}/${stream.length}`);

  const memory = openMemory(outDir, method, services);
  const writes: MemoryWriteFlags | null = method.memory ? method.memory.writes : null;
  const deferred = method.memory?.transductivePrepass ?? false;
  if (memory && writes && deferred) {
    for (const entry of transductivePrepassEntries(dataset, stream, spec.seed, method.name, writes)) await memory.insert(entry, services.embedder!);
  }
  // Replay finalization of committed episodes: inserts whatever a kill prevented (the rest are skips).
  if (memory && writes && !deferred) {
    for (const t of committed) {
      const item = stream[t.stream_position];
      const entry = finalizeEpisode(finishedFromTrajectory(t, item.example, schemaOf(dataset, item)), writes);
      if (entry) await memory.insert(entry, services.embedder!);
    }
  }

  const all: Trajectory[] = [...committed];
  let repaired = all.filter((t) => !t.initial_correct && t.final_correct).length;
  let tokens = all.reduce((n, t) => n + t.accounting.total_tokens, 0);
  for (const item of stream.slice(committed.length)) {
    const episode: EpisodeSpec = {
      dataset: dataset.name,
      method,
      streamSeed: spec.seed,
      streamPosition: item.position,
      example: item.example,
      schema: schemaOf(dataset, item),
      initial: item.initial,
      feedbackRegime: spec.config.feedback_regime,
      maxRepairSteps: spec.config.max_repair_steps,
      maxOutputTokens: spec.config.decoding.max_output_tokens,
      promptsDir: spec.config.prompts_dir,
    };
    const result = await runEpisode(episode, {
      backend: services.backend,
      score: (example, sql) => services.oracle.score(example, sql),
      memory: memory ?? undefined,
      retriever: services.retriever,
      embedder: services.embedder,
    });
    const entry = writes ? finalizeEpisode(result.finished, writes) : null;
    // Embedding calls billed to this episode: its own planned insertion, plus (transductive_batch)
    // the pre-pass negative seeded for this query's initial failure (METHOD.md §6.5).
    const prepassInsertion = deferred && item.initial.oracle_correct === false ? 1 : 0;
    const trajectory = toTrajectory(episode, result, (entry ? 1 : 0) + prepassInsertion);
    retrievalLog.append(result.retrievalLog.map((r) => canonicalJson(r as unknown as JsonValue)));
    prompts.append(result.prompts.map((p) => canonicalJson({ query_id: item.example.id, stream_position: item.position, kind: p.kind, prompt_hash: p.hash, prompt: p.text })));
    trajectories.append([canonicalJson(trajectory as unknown as JsonValue)]); // commit point
    if (memory && entry && !deferred) await memory.insert(entry, services.embedder!);
    all.push(trajectory);
    if (!trajectory.initial_correct && trajectory.final_correct) repaired += 1;
    tokens += trajectory.accounting.total_tokens;
    opts.onProgress?.({ done: all.length, total: stream.length, repaired, tokens });
  }
  if (memory && writes && deferred) {
    for (const t of all) {
      const item = stream[t.stream_position];
      const entry = finalizeEpisode(finishedFromTrajectory(t, item.example, schemaOf(dataset, item)), writes);
      if (entry) await memory.insert(entry, services.embedder!);
    }
  }
  const metrics = runMetrics(all, { maxRepairSteps: spec.config.max_repair_steps });
  writeFileAtomic(join(outDir, RUN_FILES.metrics), JSON.stringify(JSON.parse(canonicalJson(metrics as unknown as JsonValue)), null, 2) + "\n");
  writeManifest(outDir, opts, stream.length, "completed", startedAt);
  log(`completed ${outDir}: ${all.length} episodes, ${repaired} repaired`);
  for (const j of [trajectories, retrievalLog, prompts, stdout]) j.close();
  return { outDir, trajectories: all, metrics };
}

function schemaOf(dataset: Dataset, item: StreamItem): string {
  const schema = dataset.schemas.get(item.example.dbId);
  if (schema === undefined) throw new MeritError(`no schema for database ${item.example.dbId}`);
  return schema;
}

function openMemory(outDir: string, method: MethodSpec, services: RunServices): MemoryStore | null {
  if (!method.memory) return null;
  if (!services.embedder || !services.retriever) throw new MeritError(`method ${method.name} needs an embedder and a retriever`);
  return JsonlMemoryStore.open(join(outDir, RUN_FILES.memoryDir), { dimension: services.embedder.dimension });
}

function writeManifest(outDir: string, opts: RunOptions, streamLength: number, status: "running" | "completed", startedAt: string): void {
  const { spec, dataset, initialCache } = opts;
  const manifest = {
    format_version: "merit-run-v1",
    status,
    method: spec.method,
    method_description: opts.method.description,
    stream_seed: spec.seed,
    limit: spec.limit,
    stream_length: streamLength,
    config_hash: contentHash(runIdentity(spec) as unknown as JsonValue),
    dataset: { name: dataset.name, checksum: dataset.datasetChecksum, database_manifest_hash: dataset.databaseManifestHash },
    initial_cache: { path: spec.config.initial_cache, cache_hash: initialCache.cache_hash, identity: initialCache.identity },
    oracle_protocol: opts.services.oracle.protocolId,
    backend: opts.services.backend.identity,
    embedder: opts.services.embedder?.identity ?? null,
    ...opts.manifest,
    started_at: startedAt,
    finished_at: status === "completed" ? new Date().toISOString() : null,
  };
  writeFileAtomic(join(outDir, RUN_FILES.manifest), JSON.stringify(JSON.parse(canonicalJson(manifest as unknown as JsonValue)), null, 2) + "\n");
}
