/**
 * Experiment runs, what identifies a run and what its manifest records (METHOD.md §11): the run spec
 * stored as config.json (`runIdentity`: without what never changes an output), the manifest's body
 * (the method's record, the data, cache, oracle, model, embedder and plugin hashes a resume compares),
 * and the fields written at completion that describe how the run went, not what it computed
 * (`transport`, `timing`).
 * @module
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Dataset } from "../data/types.ts";
import { canonicalJson, contentHash, sha256Hex, type JsonValue } from "../hash.ts";
import type { ChatBackend, Embedder } from "../llm/types.ts";
import { methodRecord, type MethodSpec } from "../methods/index.ts";
import type { Oracle } from "../oracle/oracle.ts";
import type { Retriever } from "../retrieval/retriever.ts";
import type { Trajectory } from "../repair/trajectory.ts";
import { writeFileAtomic } from "../atomic-file.ts";
import type { ExperimentConfig } from "./config.ts";
import type { InitialCache } from "./initial-cache.ts";
import { readMemorySource } from "./memory-source.ts";
import type { runMetrics } from "./run-metrics.ts";
import { RUN_FILES, runJsonText } from "./run-dir.ts";
import { buildStream } from "./stream.ts";

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

/** The read-only source memory a run's config names (memory-source.ts), over the run's stream. */
export function memorySourceOf(opts: RunOptions): ReturnType<typeof readMemorySource> {
  const { spec } = opts;
  const stream = buildStream(opts.dataset, opts.initialCache, spec.seed, spec.limit ?? undefined, spec.config.subset, spec.config.order);
  return readMemorySource(spec.config.memory_source!, opts.method, opts.dataset.name, new Set(stream.map((i) => i.example.id)));
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
export function priorTransport(manifest: unknown): TransportRecord | null {
  const t = (manifest as { transport?: Partial<TransportRecord> } | null)?.transport;
  return t && Number.isInteger(t.transient_retries) && Number.isInteger(t.retried_calls) ? { transient_retries: t.transient_retries!, retried_calls: t.retried_calls! } : null;
}

/** Wraps `backend` to count the `retries` its answers report (GenerateResult), on top of `prior`. */
export function countTransport(backend: ChatBackend, prior: TransportRecord | null): { backend: ChatBackend; record(): TransportRecord | null } {
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
export function priorTiming(manifest: unknown): TimingRecord | null {
  const t = (manifest as { timing?: Partial<TimingRecord> } | null)?.timing;
  return t && typeof t.retrieval_ms === "number" && typeof t.memory_ms === "number" && Number.isInteger(t.episodes) ? { retrieval_ms: t.retrieval_ms, memory_ms: t.memory_ms, episodes: t.episodes! } : null;
}

export function writeManifest(outDir: string, opts: RunOptions, streamLength: number, status: "running" | "completed", startedAt: string, transport: TransportRecord | null = null, timing: TimingRecord | null = null): void {
  // At completion the manifest records the sha256 of trajectories.jsonl, which `merit report` and
  // `merit audit` check (with metrics.json) before reading a run (run-records.ts).
  const trajectories = join(outDir, RUN_FILES.trajectories);
  const done = status === "completed" ? { trajectories_sha256: sha256Hex(existsSync(trajectories) ? readFileSync(trajectories) : "") } : {};
  const rounded = timing ? { timing: { retrieval_ms: Math.round(timing.retrieval_ms), memory_ms: Math.round(timing.memory_ms), episodes: timing.episodes } } : {};
  const manifest = { ...manifestBody(opts, streamLength), status, started_at: startedAt, finished_at: status === "completed" ? new Date().toISOString() : null, ...done, ...(transport ? { transport } : {}), ...rounded };
  writeFileAtomic(join(outDir, RUN_FILES.manifest), runJsonText(manifest));
}
