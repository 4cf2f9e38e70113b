/**
 * Experiment runs (METHOD.md §6–7, §11): one method over one stream order, episode by episode, each
 * committed before the next starts — retrieval-log and prompt lines, then the trajectory line (the
 * commit point), then the memory insertion (idempotent by episode id). A killed run resumes from its
 * last committed episode and finishes byte-identical to an uninterrupted one (every file except the
 * manifest's timestamps and stdout.log). File names and formats: run-dir.ts.
 * @module
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { runMetrics } from "./run-metrics.ts";
import type { Dataset } from "../data/types.ts";
import { InputFileError, MeritError } from "../errors.ts";
import { canonicalJson, contentHash, sha256Hex, type JsonValue } from "../hash.ts";
import type { ChatBackend, Embedder } from "../llm/types.ts";
import { finalizeEpisode, type MemoryWriteFlags } from "../memory/finalize.ts";
import { JsonlMemoryStore, MEMORY_FILES } from "../memory/jsonl-store.ts";
import type { MemoryStore } from "../memory/store.ts";
import { DEFAULT_ENGINE } from "../oracle/executors.ts";
import type { Oracle } from "../oracle/oracle.ts";
import { countEmbeddingTokens, runEpisode, type EpisodeSpec } from "../repair/episode.ts";
import { getFeedback } from "../methods/feedback.ts";
import { methodRecord, noteMemoryOf, retrievesMemory, underSettings, type MethodSpec } from "../methods/index.ts";
import { checkTrajectoryVocabulary } from "../methods/hooks.ts";
import { NoteMemory } from "../methods/note-memory.ts";
import { TruncationLog } from "./truncation-log.ts";
import { readMemorySource } from "./memory-source.ts";
import { finishedFromTrajectory, toTrajectory } from "../repair/trajectory-record.ts";
import { denseText } from "../memory/entry-text.ts";
import { TrajectorySchema, type Trajectory } from "../repair/trajectory.ts";
import type { Retriever } from "../retrieval/retriever.ts";
import { removeStaleTempFiles, writeFileAtomic } from "../atomic-file.ts";
import { checkPositions, expectedJournalLines } from "./completeness.ts";
import type { ExperimentConfig } from "./config.ts";
import type { InitialCache } from "./initial-cache.ts";
import { JsonlJournal } from "./journal.ts";
import { acquireRunLock, checkUnlocked } from "./run-lock.ts";
import { RUN_FILES, runContentIn, runJsonText, type PromptRecord } from "./run-dir.ts";
import { buildStream, type StreamItem } from "./stream.ts";
import { transductivePrepassEntries } from "./transductive.ts";

/**
 * Manifest fields that may change when a run is resumed: its status and timestamps, the git state
 * (the code itself is compared through `code_hash`) and the llama.cpp build and GPU description
 * (outputs do not depend on them on one CPU family; see the README's reproducibility limits).
 * `trajectories_sha256` is written at completion (the trajectories it hashes are compared line by
 * line), and so is `transport` (the transient server failures a session met, {@link TransportRecord}),
 * and `timing` (the measured retrieval and memory wall time, {@link TimingRecord}).
 * Every other field is compared on resume and a difference refuses it.
 */
export const RESUMABLE_MANIFEST_FIELDS: ReadonlySet<string> = new Set(["status", "started_at", "finished_at", "git", "llama_cpp", "trajectories_sha256", "transport", "timing", "hook_deadline_s"]);

/** What a differing manifest field means, for the refusal line. */
export const FIELD_MEANING: Readonly<Record<string, string>> = {
  config_hash: "config",
  stream_length: "stream",
  dataset: "data or databases",
  initial_cache: "initial cache",
  oracle_protocol: "oracle protocol",
  backend: "model",
  model_identity: "model",
  embedder: "embedding model",
  prompt_format_version: "prompt format",
  prompt_templates: "prompt templates",
  code_hash: "code version",
  method_parts: "method (its hooks and their factory args)",
  plugins: "version of a plugin file it uses",
  executor: "SQL executor (oracle.executor)",
  packages: "package versions",
  node: "Node version",
};

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
 * default, so run directories written before the mode existed keep their identity. The openai
 * backend's request timeout and retry count are left out too: they decide how long the kit waits and
 * how often it asks again, never what an answer is.
 */
export function runIdentity(spec: RunSpec): RunSpec {
  const { mode, request_timeout_s: _timeout, max_retries: _retries, ...model } = spec.config.model;
  const identity = { ...model, sequences: 1, threads: null, ...(mode === "throughput" ? { mode } : {}) };
  // The config's plugin list is left out: the manifest records the plugins the run uses (with sha256).
  // The hook deadline too: it decides whether a run stops, never what it computes, so a run stopped by
  // it resumes under a raised one; the manifest records it (manifestBody).
  const { plugins: _plugins, hook_deadline_s: _deadline, ...config } = spec.config;
  return { ...spec, config: { ...config, model: identity as RunSpec["config"]["model"] } };
}

/** The first leaf where two JSON values differ, as a dotted path and both values; null when equal. */
export function firstDifference(there: unknown, here: unknown, path = ""): { path: string; there: unknown; here: unknown } | null {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
  if (isObject(there) && isObject(here)) {
    for (const key of [...new Set([...Object.keys(there), ...Object.keys(here)])].sort()) {
      const d = firstDifference(there[key], here[key], path === "" ? key : `${path}.${key}`);
      if (d) return d;
    }
    return null;
  }
  return canonicalJson((there ?? null) as JsonValue) === canonicalJson((here ?? null) as JsonValue) ? null : { path, there, here };
}

/** A JSON value for a refusal line, cut to 80 characters; `absent` for undefined. */
export function shown(value: unknown): string {
  const text = value === undefined ? "absent" : JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function readJsonFile(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (cause) {
    throw new InputFileError(path, "is not valid JSON (the file was damaged)", "the run cannot be resumed safely; start it again in a fresh --out", cause);
  }
}

/** Refuses an `--out` that is a file or lies below one (nothing is created). */
function checkOutPath(outDir: string): void {
  const target = resolve(outDir);
  for (let p = target; ; p = dirname(p)) {
    if (existsSync(p)) {
      if (statSync(p).isDirectory()) return;
      throw new InputFileError(p, p === target ? "is a file, not a folder" : `is a file, so the run folder ${outDir} cannot be created below it`, "choose another --out (a new or an existing folder)");
    }
    if (dirname(p) === p) return;
  }
}

/**
 * Checks that `outDir` can take this run — empty, or (with `resume`) holding the same run, not locked
 * by a live process — before any model is loaded and before anything is written. Throws MeritError
 * with the fix otherwise. A folder holding run files but no config.json is never adopted: which run
 * it holds cannot be proven.
 */
export function checkRunDir(outDir: string, spec: RunSpec, resume: boolean, lockHeld = false): void {
  checkOutPath(outDir);
  const configPath = join(outDir, RUN_FILES.config);
  if (!existsSync(configPath)) {
    const found = runContentIn(outDir);
    if (found.length > 0) throw new InputFileError(outDir, `holds ${found.join(", ")} but no config.json, so which run it holds cannot be proven`, "choose another --out (or delete the folder to start over)");
    if (!lockHeld) checkUnlocked(outDir);
    return;
  }
  if (!resume) throw new MeritError(`${outDir} already holds a run; pass --resume to continue it or choose another --out`);
  const specText = canonicalJson(runIdentity(spec) as unknown as JsonValue) + "\n";
  const text = readFileSync(configPath, "utf8");
  if (text !== specText) {
    const d = firstDifference(readJsonFile(configPath), JSON.parse(specText));
    const what = d ? `a different ${d.path} (${shown(d.there)} in its config.json, ${shown(d.here)} now)` : "a config.json that was edited";
    throw new MeritError(`${outDir} holds a run with ${what}; resume it with the same inputs or choose another --out`);
  }
  if (!lockHeld) checkUnlocked(outDir);
}

/**
 * The resume checks that need the loaded services (model and embedder identities) and read the run's
 * files without changing them: every hash manifest.json records must equal this invocation's, the
 * committed trajectories must cover positions 0..k−1 of this stream, and prompts.jsonl and
 * retrieval_log.jsonl must hold every line those episodes wrote. Throws one line naming what differs.
 */
export function checkResume(opts: RunOptions, lockHeld = false): void {
  const { outDir, spec } = opts;
  checkRunDir(outDir, spec, opts.resume ?? false, lockHeld);
  if (!existsSync(join(outDir, RUN_FILES.config))) return;
  const stream = buildStream(opts.dataset, opts.initialCache, spec.seed, spec.limit ?? undefined, spec.config.subset, spec.config.order);
  const trajPath = join(outDir, RUN_FILES.trajectories);
  const manifestPath = join(outDir, RUN_FILES.manifest);
  if (existsSync(manifestPath)) {
    const { recorded, now } = comparableManifests(readJsonFile(manifestPath) as Record<string, unknown>, manifestBody(opts, stream.length) as Record<string, unknown>);
    const strip = (m: Record<string, unknown>) => Object.fromEntries(Object.entries(m).filter(([k]) => !RESUMABLE_MANIFEST_FIELDS.has(k)));
    const d = firstDifference(strip(recorded), strip(now));
    if (d) {
      const meaning = FIELD_MEANING[d.path.split(".")[0]] ?? d.path;
      const commit = (recorded.git as { commit?: string } | undefined)?.commit;
      const fix = d.path === "code_hash" ? `finish it with the kit code it started with${commit ? ` (git commit ${commit})` : ""}, or start a fresh --out` : "resume it with the inputs it started with, or start a fresh --out";
      throw new InputFileError(manifestPath, `the run was started with another ${meaning}: ${d.path} is ${shown(d.there)} there but ${shown(d.here)} now`, fix);
    }
  } else if (new JsonlJournal(trajPath).completeLines() > 0) {
    throw new InputFileError(manifestPath, "is missing while trajectories exist, so what made them cannot be proven", "start the run again in a fresh --out");
  }
  const committed = new JsonlJournal(trajPath).parse().values.map((t, i) => {
    const parsed = TrajectorySchema.safeParse(t);
    if (!parsed.success) throw new InputFileError(trajPath, `line ${i + 1} is not a trajectory (${parsed.error.issues[0].path.join(".")}: ${parsed.error.issues[0].message})`, "the run cannot be resumed safely; start it again in a fresh --out");
    return parsed.data;
  });
  if (committed.length > stream.length) throw new InputFileError(trajPath, `has ${committed.length} trajectories but the stream has ${stream.length}`, "the run directory is damaged; start it again in a fresh --out");
  checkPositions(committed, trajPath);
  checkNoVectorsFormat(outDir, opts.method, committed);
  committed.forEach((t, i) => {
    if (t.query_id !== stream[i].example.id) throw new InputFileError(trajPath, `line ${i + 1} is query ${t.query_id} but stream position ${i} is ${stream[i].example.id}`, "the run directory is damaged or mixed; start it again in a fresh --out");
  });
  const judgeKind = getFeedback(spec.config.feedback_regime).call?.kind;
  committed.forEach((t, i) => checkTrajectoryVocabulary(opts.method.hooks, t, `${trajPath} line ${i + 1}`, judgeKind ? [judgeKind] : []));
  const expected = expectedJournalLines(committed, retrievesMemory(opts.method));
  for (const [file, need] of [[RUN_FILES.prompts, expected.prompts], [RUN_FILES.retrievalLog, expected.retrievals]] as const) {
    const have = new JsonlJournal(join(outDir, file)).completeLines();
    if (have < need) throw new InputFileError(join(outDir, file), `has ${have} lines but the ${committed.length} committed episodes wrote ${need}`, "the run directory is damaged (a write was lost); start it again in a fresh --out");
  }
}

/**
 * A recorded manifest and this invocation's manifest body, as a resume compares them, for manifests
 * written before the executor and the per-run plugin list were recorded, so such runs stay
 * resumable: no recorded `executor` means the SQLite sandbox, the only engine then; and a recorded
 * plugin this run does not use (those manifests listed every loaded file) is not compared, while a
 * plugin the run uses must be recorded with the same sha256.
 */
export function comparableManifests(recorded: Record<string, unknown>, now: Record<string, unknown>): { recorded: Record<string, unknown>; now: Record<string, unknown> } {
  const there = { ...recorded };
  const here = { ...now };
  if (!("executor" in there) && here.executor === DEFAULT_ENGINE) delete here.executor;
  if (Array.isArray(there.plugins)) {
    const used = new Set(((here.plugins ?? []) as { path: string }[]).map((p) => p.path));
    const kept = (there.plugins as { path?: unknown }[]).filter((p) => used.has(String(p.path)));
    if (kept.length > 0) there.plugins = kept;
    else delete there.plugins;
  }
  return { recorded: there, now: here };
}

/** Runs (or resumes) one method over one stream order and writes its run directory. */
export async function runExperiment(given: RunOptions): Promise<RunResult> {
  // The config's retrieval settings are applied to the method's policy and parts here, so every run
  // honours them whoever built its retriever (METHOD.md §5.5–5.6, policy.ts `configurePolicy`).
  const opts: RunOptions = { ...given, method: underSettings(given.method, given.spec.config.retrieval) };
  const { spec, method, dataset, outDir, services } = opts;
  const log = (line: string) => {
    opts.log?.(line);
    stdout.append([line]);
  };
  checkOutPath(outDir);
  const created = !existsSync(outDir);
  mkdirSync(outDir, { recursive: true });
  // Everything is checked under the lock and before the first write: a refused run changes nothing.
  let lock: ReturnType<typeof acquireRunLock>;
  try {
    lock = acquireRunLock(outDir);
  } catch (error) {
    if (created) rmdirSync(outDir);
    throw error;
  }
  const trajectories = new JsonlJournal(join(outDir, RUN_FILES.trajectories));
  const retrievalLog = new JsonlJournal(join(outDir, RUN_FILES.retrievalLog));
  const prompts = new JsonlJournal(join(outDir, RUN_FILES.prompts));
  const stdout = new JsonlJournal(join(outDir, RUN_FILES.stdout));
  try {
    return await runLocked();
  } finally {
    // Every journal line was fsynced when written: a failing close loses nothing, and the lock is
    // released whatever happened.
    for (const j of [trajectories, retrievalLog, prompts, stdout]) {
      try {
        j.close();
      } catch {
        // already reported by the write that failed, if any
      }
    }
    lock.release();
    if (created && readdirSync(outDir).length === 0) rmdirSync(outDir);
  }

  async function runLocked(): Promise<RunResult> {
    checkResume(opts, true);
    const specText = canonicalJson(runIdentity(spec) as unknown as JsonValue) + "\n";
    const configPath = join(outDir, RUN_FILES.config);
    const stream = buildStream(dataset, opts.initialCache, spec.seed, spec.limit ?? undefined, spec.config.subset, spec.config.order);
    if (!existsSync(configPath)) writeFileAtomic(configPath, specText);
    const memory = openMemory(outDir, method, services);
    removeStaleTempFiles(outDir);
    const startedAt = new Date().toISOString();
    const manifestPath = join(outDir, RUN_FILES.manifest);
    const priorManifest = existsSync(manifestPath) ? readJsonFile(manifestPath) : null;
    const transport = countTransport(services.backend, priorManifest === null ? null : priorTransport(priorManifest));
    const timing: TimingRecord | null = memory !== null || method.hooks.memory ? (priorTiming(priorManifest) ?? { retrieval_ms: 0, memory_ms: 0, episodes: 0 }) : null;
    writeManifest(outDir, opts, stream.length, "running", startedAt, transport.record(), timing);

    const committed = (trajectories.recover() as unknown[]).map((t) => TrajectorySchema.parse(t));
    const retrievalSteps = committed.reduce((n, t) => n + (retrievesMemory(method) ? t.retrieved_entry_ids.length : 0), 0);
    retrievalLog.recover(retrievalSteps);
    prompts.recover(committed.reduce((n, t) => n + t.call_kinds.length - 1, 0));
    if (committed.length > 0) log(`resuming ${outDir} at stream position ${committed.length}/${stream.length}`);

    const writes: MemoryWriteFlags | null = method.memory ? method.memory.writes : null;
    const deferred = method.memory?.transductivePrepass ?? false;
    // The embedding tokens of texts embedded at insertion, billed to the episode that plans them (as embedding_calls)
    const insertionTokens = (texts: readonly string[]) => countEmbeddingTokens(services.embedder, texts);
    const prepassTokens = new Map<string, number | null>();
    if (memory && writes && deferred) {
      for (const entry of transductivePrepassEntries(dataset, stream, spec.seed, method.name, writes)) {
        await memory.insert(entry, services.embedder!);
        if (method.memory?.vectors !== false) prepassTokens.set(entry.source_query_id, await insertionTokens([denseText(entry)]));
      }
    }
    // Replay finalization of committed episodes: inserts whatever a kill prevented (the rest are skips).
    if (memory && writes && !deferred) {
      for (const t of committed) {
        const item = stream[t.stream_position];
        const entry = finalizeEpisode(finishedFromTrajectory(t, item.example, schemaOf(dataset, item)), writes);
        if (entry) await memory.insert(entry, services.embedder!);
      }
    }

    // A memory hook's notes: rebuilt from the committed trajectories (their commit point holds them).
    // Each committed episode's revision replayed in stream order: its retired notes leave, its new ones join.
    const noteMemory = noteMemoryOf(method);
    const embedsNotes = noteMemory?.embedsNotes === true;
    const notes = new NoteMemory(method.name, services.embedder, embedsNotes);
    if (noteMemory) for (const t of committed) await notes.apply(t.memory_writes ?? [], t.memory_retires);
    // Another run's memory, read-only (config memory_source; memory-source.ts).
    if (spec.config.memory_source !== undefined) await notes.addSource(memorySourceOf(opts).notes);

    const all: Trajectory[] = [...committed];
    const cuts = new TruncationLog(method.name);
    let repaired = all.filter((t) => !t.initial_correct && t.final_correct).length;
    let tokens = all.reduce((n, t) => n + t.accounting.total_tokens, 0);
    for (const item of stream.slice(committed.length)) {
      const episode = episodeSpecOf(spec, method, dataset, item);
      const result = await runEpisode(episode, {
        backend: transport.backend,
        score: (example, sql) => services.oracle.score(example, sql),
        execute: (example, sql) => services.oracle.execute(example, sql),
        memory: memory ?? undefined,
        retriever: services.retriever,
        embedder: services.embedder,
        notes: notes.notes,
      });
      const entry = writes ? finalizeEpisode(result.finished, writes) : null;
      // Embedding calls billed to this episode: its own planned insertion, plus (transductive_batch)
      // the pre-pass negative seeded for this query's initial failure (METHOD.md §6.5).
      // None when the method's ranker reads no vectors: its memory embeds nothing (openMemory).
      const perInsertion = method.memory?.vectors === false ? 0 : 1;
      const prepassInsertion = deferred && item.initial.oracle_correct === false ? 1 : 0;
      const noteInsertions = embedsNotes ? (result.notes?.length ?? 0) : 0;
      const plannedTexts = [...(perInsertion === 1 && entry ? [denseText(entry)] : []), ...(embedsNotes ? (result.notes ?? []).map((n) => n.key) : [])];
      const planned = await insertionTokens(plannedTexts);
      const prepass = perInsertion * prepassInsertion === 1 ? (prepassTokens.get(item.example.id) ?? null) : 0;
      const trajectory = toTrajectory(episode, result, perInsertion * ((entry ? 1 : 0) + prepassInsertion) + noteInsertions, planned === null || prepass === null ? null : planned + prepass);
      retrievalLog.append(result.retrievalLog.map((r) => canonicalJson(r as unknown as JsonValue)));
      prompts.append(result.prompts.map((p) => canonicalJson({ query_id: item.example.id, stream_position: item.position, kind: p.kind, prompt_hash: p.hash, prompt: p.text } satisfies PromptRecord as unknown as JsonValue)));
      trajectories.append([canonicalJson(trajectory as unknown as JsonValue)]); // commit point
      const insertStart = performance.now();
      if (memory && entry && !deferred) await memory.insert(entry, services.embedder!);
      if (trajectory.memory_writes) await notes.apply(trajectory.memory_writes, trajectory.memory_retires);
      if (timing) {
        timing.retrieval_ms += result.wallMs.retrieval;
        timing.memory_ms += result.wallMs.memory + (performance.now() - insertStart);
        timing.episodes += 1;
      }
      all.push(trajectory);
      for (const line of cuts.episode(trajectory)) log(line);
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
    writeFileAtomic(join(outDir, RUN_FILES.metrics), runJsonText(metrics));
    writeManifest(outDir, opts, stream.length, "completed", startedAt, transport.record(), timing);
    const cutSummary = cuts.summary(all);
    if (cutSummary !== null) log(cutSummary);
    const retried = transport.record();
    const retriedNote = retried ? `; ${retried.transient_retries} transient server failure(s) retried for ${retried.retried_calls} call(s) (manifest.json transport)` : "";
    log(`completed ${outDir}: ${all.length} episodes, ${repaired} repaired${retriedNote}`);
    return { outDir, trajectories: all, metrics };
  }
}

/** The read-only source memory a run's config names (memory-source.ts), over the run's stream. */
function memorySourceOf(opts: RunOptions): ReturnType<typeof readMemorySource> {
  const { spec } = opts;
  const stream = buildStream(opts.dataset, opts.initialCache, spec.seed, spec.limit ?? undefined, spec.config.subset, spec.config.order);
  return readMemorySource(spec.config.memory_source!, opts.method, opts.dataset.name, new Set(stream.map((i) => i.example.id)));
}

/** The episode a run plays at one stream position (also what `merit grid --plan` replays, grid-plan.ts). */
export function episodeSpecOf(spec: RunSpec, method: MethodSpec, dataset: Dataset, item: StreamItem): EpisodeSpec {
  return {
    dataset: dataset.name,
    method,
    streamSeed: spec.seed,
    streamPosition: item.position,
    example: item.example,
    schema: schemaOf(dataset, item),
    initial: item.initial,
    feedbackRegime: spec.config.feedback_regime,
    feedbackNoise: spec.config.feedback_noise,
    maxRepairSteps: spec.config.max_repair_steps,
    maxOutputTokens: spec.config.decoding.max_output_tokens,
    promptsDir: spec.config.prompts_dir,
    hookDeadlineS: spec.config.hook_deadline_s,
  };
}

function schemaOf(dataset: Dataset, item: StreamItem): string {
  const schema = dataset.schemas.get(item.example.dbId);
  if (schema === undefined) throw new MeritError(`no schema for database ${item.example.dbId}`);
  return schema;
}

/**
 * The run's memory store. A method whose ranker reads no vectors (policy `vectors: false`:
 * no_dense_rerank, random_same_type, a plugin ranker declaring `vectors: false`) opens it with
 * dimension 0: no entry is embedded, so the embedder is never loaded (issue 22 §1).
 */
function openMemory(outDir: string, method: MethodSpec, services: RunServices): MemoryStore | null {
  if (!method.memory) return null;
  if (!services.embedder || !services.retriever) throw new MeritError(`method ${method.name} needs an embedder and a retriever`);
  return JsonlMemoryStore.open(join(outDir, RUN_FILES.memoryDir), { dimension: method.memory.vectors ? services.embedder.dimension : 0 });
}

/**
 * Refuses to resume a run of a method whose ranker reads no vectors that was written before such runs
 * stored none (its memory holds vectors, its trajectories bill an embedding call per stored entry):
 * finishing it would mix both formats in one run. One line; the fix is a fresh run.
 */
function checkNoVectorsFormat(outDir: string, method: MethodSpec, committed: readonly Trajectory[]): void {
  if (!method.memory || method.memory.vectors) return;
  const fix = `rerun it in a fresh --out: runs of ${method.name} now store no vectors and make no embedding call`;
  const metaPath = join(outDir, RUN_FILES.memoryDir, MEMORY_FILES.metadata);
  const dimension = existsSync(metaPath) ? (readJsonFile(metaPath) as { embedding_dimension?: unknown }).embedding_dimension : 0;
  if (dimension !== 0) throw new InputFileError(metaPath, `has embedding_dimension ${shown(dimension)}: the run was written before method ${method.name}, whose ranker reads no vectors, stored none`, fix);
  const billed = committed.findIndex((t) => t.accounting.embedding_calls > 0);
  if (billed >= 0) throw new InputFileError(join(outDir, RUN_FILES.trajectories), `line ${billed + 1} bills ${committed[billed].accounting.embedding_calls} embedding call(s): the run was written before method ${method.name}, whose ranker reads no vectors, stopped embedding its entries`, fix);
}

/** The manifest's fields without status and timestamps (what a resume compares). */
export function manifestBody(opts: RunOptions, streamLength: number): Record<string, JsonValue> {
  const { spec, dataset, initialCache } = opts;
  const body = {
    format_version: "merit-run-v1",
    method: spec.method,
    method_description: opts.method.description,
    method_parts: methodRecord(opts.method),
    stream_seed: spec.seed,
    limit: spec.limit,
    stream_length: streamLength,
    config_hash: contentHash(runIdentity(spec) as unknown as JsonValue),
    dataset: { name: dataset.name, checksum: dataset.datasetChecksum, database_manifest_hash: dataset.databaseManifestHash },
    initial_cache: { path: spec.config.initial_cache, cache_hash: initialCache.cache_hash, identity: initialCache.identity },
    oracle_protocol: opts.services.oracle.protocolId,
    executor: opts.services.oracle.executor.engine,
    backend: opts.services.backend.identity,
    embedder: opts.services.embedder?.identity ?? null,
    // only when the config sets it (absent: the default, lib/methods/hook-guard.ts), so other manifests keep their bytes
    ...(spec.config.hook_deadline_s !== undefined ? { hook_deadline_s: spec.config.hook_deadline_s } : {}),
    ...(spec.config.memory_source !== undefined ? { memory_source: memorySourceOf(opts).record } : {}),
    ...opts.manifest,
  };
  return JSON.parse(canonicalJson(body as unknown as JsonValue)) as Record<string, JsonValue>;
}

/**
 * manifest.json `transport` (issue 23 §2): the transient server failures retried (and the calls they
 * delayed) by the sessions that ran the run — carried over a resume, except those of a session that
 * was killed (they are written when a session completes); absent when there were none (always so for
 * the in-process backend). Like the timestamps it records how the run went, not what it computed: it is
 * outside the identity a resume compares and outside metrics.json, so a run that met faults has the
 * same outputs as one that did not, and a replay from the call cache has none.
 */
export interface TransportRecord {
  transient_retries: number;
  retried_calls: number;
}

/** The `transport` record of a manifest read from disk, or null when it has none (or a malformed one). */
function priorTransport(manifest: unknown): TransportRecord | null {
  const t = (manifest as { transport?: Partial<TransportRecord> } | null)?.transport;
  return t && Number.isInteger(t.transient_retries) && Number.isInteger(t.retried_calls) ? { transient_retries: t.transient_retries!, retried_calls: t.retried_calls! } : null;
}

/** Wraps `backend` to count the `retries` its answers report (GenerateResult), on top of `prior`. */
function countTransport(backend: ChatBackend, prior: TransportRecord | null): { backend: ChatBackend; record(): TransportRecord | null } {
  let retries = prior?.transient_retries ?? 0;
  let calls = prior?.retried_calls ?? 0;
  return {
    backend: {
      identity: backend.identity,
      async generate(request) {
        const result = await backend.generate(request);
        if (result.retries !== undefined && result.retries > 0) {
          retries += result.retries;
          calls += 1;
        }
        return result;
      },
      close: async () => {},
    },
    record: () => (retries > 0 ? { transient_retries: retries, retried_calls: calls } : null),
  };
}

/**
 * manifest.json `timing` (issue 29 §4): the measured wall time of a memory method's retrieval steps
 * (query embedding, ranking, a hook's retrieve) and memory maintenance (entry insertion with its
 * embedding, a memory hook's write with its calls and its notes' embedding), in ms, summed over the
 * `episodes` timed — carried over a resume except a killed session's, like `transport`. A
 * measurement, not an output: outside the identity a resume compares, outside trajectories and
 * metrics.json; absent for memoryless methods. The report's cost table shows it per query.
 */
export interface TimingRecord {
  retrieval_ms: number;
  memory_ms: number;
  episodes: number;
}

/** The `timing` record of a manifest read from disk, or null. */
function priorTiming(manifest: unknown): TimingRecord | null {
  const t = (manifest as { timing?: Partial<TimingRecord> } | null)?.timing;
  return t && typeof t.retrieval_ms === "number" && typeof t.memory_ms === "number" && Number.isInteger(t.episodes) ? { retrieval_ms: t.retrieval_ms, memory_ms: t.memory_ms, episodes: t.episodes! } : null;
}

function writeManifest(outDir: string, opts: RunOptions, streamLength: number, status: "running" | "completed", startedAt: string, transport: TransportRecord | null = null, timing: TimingRecord | null = null): void {
  // At completion the manifest records the sha256 of trajectories.jsonl, which `merit report` and
  // `merit audit` check (with metrics.json) before reading a run (run-records.ts).
  const trajectories = join(outDir, RUN_FILES.trajectories);
  const done = status === "completed" ? { trajectories_sha256: sha256Hex(existsSync(trajectories) ? readFileSync(trajectories) : "") } : {};
  const rounded = timing ? { timing: { retrieval_ms: Math.round(timing.retrieval_ms), memory_ms: Math.round(timing.memory_ms), episodes: timing.episodes } } : {};
  const manifest = { ...manifestBody(opts, streamLength), status, started_at: startedAt, finished_at: status === "completed" ? new Date().toISOString() : null, ...done, ...(transport ? { transport } : {}), ...rounded };
  writeFileAtomic(join(outDir, RUN_FILES.manifest), runJsonText(manifest));
}
