/**
 * Experiment runs, the run directory (METHOD.md §4.5, §5.7, §11; DESIGN.md §1): the one module that
 * names every file a run writes and reads them back — config.json, manifest.json,
 * trajectories.jsonl, retrieval_log.jsonl, prompts.jsonl, metrics.json, memory/ — shared by the
 * writer (run.ts), the completeness check, the audit, `merit report` and `annotate`, the HTML report
 * and the notebooks. It sits below analysis/ and report/ and imports neither.
 * @module
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { z } from "zod";
import { parseJsonLines } from "../data/json-file.ts";
import { InputFileError } from "../errors.ts";
import { canonicalJson, type JsonValue } from "../hash.ts";
import type { MemoryEntry } from "../memory/entry.ts";
import { MEMORY_FILES } from "../memory/jsonl-store.ts";
import { parseTrajectoryLines, type Trajectory } from "../repair/trajectory.ts";
import type { RetrievalLogRecord } from "../retrieval/retrieval-log.ts";
import { LOCK_FILE } from "./run-lock.ts";
import type { RunMetrics } from "./run-metrics.ts";

/** The fix a reader names by default: the folder is not what `merit run` wrote. */
const READ_FIX = "pass a directory written by `merit run`";

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
  lock: LOCK_FILE,
} as const;

/** A key of {@link RUN_FILES}. */
export type RunFile = keyof typeof RUN_FILES;

/** Files whose presence makes a folder hold a run (besides config.json): such a folder is never adopted without its config.json. */
export const RUN_CONTENT: readonly string[] = [RUN_FILES.trajectories, RUN_FILES.manifest, RUN_FILES.prompts, RUN_FILES.retrievalLog, RUN_FILES.metrics, RUN_FILES.memoryDir];

/** The path of one file of the run directory `dir`. */
export function runFile(dir: string, file: RunFile): string {
  return join(dir, RUN_FILES[file]);
}

/** The run files of {@link RUN_CONTENT} present in `dir`, in that order. */
export function runContentIn(dir: string): string[] {
  return RUN_CONTENT.filter((f) => existsSync(join(dir, f)));
}

/** A folder is a run directory (for reading) when it holds trajectories.jsonl. */
export function isRunDir(dir: string): boolean {
  return existsSync(runFile(dir, "trajectories"));
}

/**
 * The run directories of `root`: `root` itself when it is one, else every run directory below it,
 * depth first with names sorted (a grid's OUT/<method>-s<seed>). Paths are normalised (no trailing
 * separator). Throws InputFileError when `root` is not a directory.
 */
export function listRuns(root: string): string[] {
  if (!existsSync(root) || !statSync(root).isDirectory()) throw new InputFileError(root, "is not a directory", "pass run directories or a folder that contains them");
  if (isRunDir(root)) return [dirname(runFile(root, "trajectories"))];
  const found: string[] = [];
  for (const entry of readdirSync(root, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (entry.isDirectory()) found.push(...listRuns(join(root, entry.name)));
  }
  return found;
}

/** The text a run writes for a JSON file (manifest.json, metrics.json): canonical key order, two-space indent, final newline. */
export function runJsonText(value: unknown): string {
  return JSON.stringify(JSON.parse(canonicalJson(value as JsonValue)), null, 2) + "\n";
}

/** What a reader says when a run's JSON file is absent or broken. */
export interface RunJsonProblem {
  /** The fix appended to either message. */
  fix: string;
  /** Problem text when the file is absent; without it an absent file reads as undefined. */
  missing?: string;
  /** Problem text when the file is not JSON. @default "is not JSON" */
  invalid?: string;
  /** The fix when the file is not JSON. @default fix */
  invalidFix?: string;
}

/** The parsed JSON of a run file, or undefined when it is absent and `problem.missing` is not set. */
export function readRunJson(dir: string, file: "config" | "manifest" | "metrics", problem: RunJsonProblem): unknown {
  const path = runFile(dir, file);
  if (!existsSync(path)) {
    if (problem.missing === undefined) return undefined;
    throw new InputFileError(path, problem.missing, problem.fix);
  }
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (cause) {
    throw new InputFileError(path, problem.invalid ?? "is not JSON", problem.invalidFix ?? problem.fix, cause);
  }
}

/** Reads the JSON objects of a .jsonl file, failing with the 1-based line number on bad JSON. */
export function readJsonLines<T>(file: string, fix = "re-run the run or delete the partial line"): T[] {
  return parseJsonLines<T>(readFileSync(file, "utf8"), file, { json: fix });
}

/** The trajectories of `dir`, checked line by line; InputFileError(dir, "has no trajectories.jsonl", fix) when absent. */
export function readTrajectories(dir: string, fix = "pass directories written by `merit run`"): Trajectory[] {
  const file = runFile(dir, "trajectories");
  if (!existsSync(file)) throw new InputFileError(dir, `has no ${RUN_FILES.trajectories}`, fix);
  return parseTrajectoryLines(readFileSync(file, "utf8"), file);
}

/** One prompts.jsonl line: a rendered prompt of one model call (every call but the initial attempt). */
export interface PromptRecord {
  query_id: string;
  stream_position: number;
  /** The call kind (`repair`, `reflection`, …; trajectory `call_kinds`). */
  kind: string;
  /** sha256 of `prompt`. */
  prompt_hash: string;
  prompt: string;
}

/** The lines of prompts.jsonl; [] when the run wrote none. */
export function readPrompts(dir: string, fix?: string): PromptRecord[] {
  const file = runFile(dir, "prompts");
  return existsSync(file) ? readJsonLines<PromptRecord>(file, fix) : [];
}

/** The lines of retrieval_log.jsonl, or null when the run wrote no such file (memoryless methods). */
export function readRetrievalLog(dir: string, fix?: string): RetrievalLogRecord[] | null {
  const file = runFile(dir, "retrievalLog");
  return existsSync(file) ? readJsonLines<RetrievalLogRecord>(file, fix) : null;
}

/** The memory folder of a run and its entry files (positive, then negative); null when the run has no memory/ (memoryless methods). */
export function memoryFiles(dir: string): { dir: string; entries: string[]; metadata: string } | null {
  const memoryDir = runFile(dir, "memoryDir");
  if (!existsSync(memoryDir)) return null;
  return { dir: memoryDir, entries: [MEMORY_FILES.positive, MEMORY_FILES.negative].map((name) => join(memoryDir, name)), metadata: join(memoryDir, MEMORY_FILES.metadata) };
}

/** The memory entries of a run (positive file, then negative), or null when it has no memory/ folder. */
export function readMemoryEntries(dir: string, fix?: string): MemoryEntry[] | null {
  const files = memoryFiles(dir);
  if (files === null) return null;
  return files.entries.filter((file) => existsSync(file)).flatMap((file) => readJsonLines<MemoryEntry>(file, fix));
}

/** config.json: what identifies a run (run.ts `runIdentity`); `config` is checked by config.ts `parseConfig` where it is used. */
export const StoredRunSpecSchema = z.object({
  config: z.record(z.string(), z.unknown()),
  method: z.string(),
  seed: z.number().int().nonnegative(),
  limit: z.number().int().positive().nullable(),
});

/** config.json as the readers see it. */
export type StoredRunSpec = z.infer<typeof StoredRunSpecSchema>;

/** The config.json of `dir`: InputFileError when it is absent, not JSON, or lacks a field. */
export function readRunSpec(dir: string, problem: RunJsonProblem = { fix: READ_FIX }): StoredRunSpec {
  const spec = StoredRunSpecSchema.safeParse(readRunJson(dir, "config", { missing: "is missing", ...problem }));
  if (!spec.success) throw new InputFileError(runFile(dir, "config"), `lacks ${spec.error.issues[0].path.join(".")}`, problem.fix);
  return spec.data;
}

/** `config.data_dir` of a run's config.json, or null when the file or the field is absent. */
export function readRunDataDir(dir: string): string | null {
  const json = readRunJson(dir, "config", { fix: "restore the run's config.json" }) as { config?: { data_dir?: unknown } } | undefined;
  const dataDir = json?.config?.data_dir;
  return typeof dataDir === "string" ? dataDir : null;
}

/** The model identity a run manifest records (`backend`, `embedder`: BackendIdentity). */
export interface ModelRecord {
  /** `llama.cpp`, `llama.cpp-embedding`, `openai-compatible`, or a test double's kind. */
  kind: string;
  /** File name or served model id. */
  model: string;
  /** sha256 of the file (or endpoint + revision for a remote model). */
  modelHash: string;
}

const ModelSchema = z.object({ kind: z.string(), model: z.string(), modelHash: z.string() });

/** The manifest fields the readers rely on (run.ts `manifestBody` writes more). */
export const RunManifestSchema = z.object({
  status: z.string(),
  method: z.string(),
  stream_seed: z.number().int(),
  config_hash: z.string(),
  dataset: z.object({ name: z.string(), checksum: z.string(), database_manifest_hash: z.string() }),
  initial_cache: z.object({ cache_hash: z.string() }),
  database_set: z.object({ kind: z.string() }).optional(),
  backend: ModelSchema.nullable().optional(),
  embedder: ModelSchema.nullable().optional(),
  /** The SQL executor that scored the run; absent in manifests written before it was recorded (then `sqlite`). */
  executor: z.string().optional(),
  /** The plugin files whose registrations the run uses (lib/methods/plugin-use.ts); absent when none. */
  plugins: z.array(z.object({ path: z.string(), sha256: z.string() })).optional(),
  /** Transient server failures retried while the run was finished (run.ts TransportRecord); absent when none. */
  transport: z.object({ transient_retries: z.number().int().nonnegative(), retried_calls: z.number().int().nonnegative() }).optional(),
  /** Measured retrieval and memory wall time of a memory method (run.ts TimingRecord); absent for memoryless runs. */
  timing: z.object({ retrieval_ms: z.number().nonnegative(), memory_ms: z.number().nonnegative(), episodes: z.number().int().nonnegative() }).optional(),
});

/** manifest.json as the readers see it. */
export type RunManifest = z.infer<typeof RunManifestSchema>;

/**
 * The manifest of `dir`, checked against {@link RunManifestSchema}: InputFileError when it is
 * absent (`problem.missing`, default "is missing"), not JSON, or lacks a field.
 */
export function readRunManifest(dir: string, problem: RunJsonProblem = { fix: READ_FIX }): RunManifest {
  const m = RunManifestSchema.safeParse(readRunJson(dir, "manifest", { missing: "is missing", ...problem }));
  if (!m.success) throw new InputFileError(runFile(dir, "manifest"), `lacks ${m.error.issues[0].path.join(".")}`, "re-run the run with this version of `merit run`");
  return m.data;
}

/** metrics.json of a finished run; InputFileError when it is absent or not JSON. */
export function readRunMetrics(dir: string): RunMetrics {
  return readRunJson(dir, "metrics", { missing: "is missing (the run has not finished)", fix: "finish (resume) the run, or re-run it" }) as RunMetrics;
}
