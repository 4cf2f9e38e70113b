/**
 * Experiment runs, resuming (METHOD.md §11): whether an `--out` folder can take a run — empty, or
 * holding the same run (config.json byte-equal to this invocation's identity), not locked by a live
 * process — and, with the services loaded, whether every hash the manifest records is this
 * invocation's and the committed journals are whole. Each refusal is one line naming what differs
 * and the fix; nothing is written.
 * @module
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { InputFileError, MeritError } from "../errors.ts";
import { canonicalJson, type JsonValue } from "../hash.ts";
import { MEMORY_FILES } from "../memory/jsonl-store.ts";
import { getFeedback } from "../methods/feedback.ts";
import { checkTrajectoryVocabulary } from "../methods/hooks.ts";
import { retrievesMemory, type MethodSpec } from "../methods/method.ts";
import { DEFAULT_ENGINE } from "../oracle/executors.ts";
import { TrajectorySchema, type Trajectory } from "../repair/trajectory.ts";
import { checkPositions, expectedJournalLines } from "./completeness.ts";
import { JsonlJournal } from "./journal.ts";
import { checkUnlocked } from "./run-lock.ts";
import { manifestBody, runIdentity, type RunOptions, type RunSpec } from "./run-manifest.ts";
import { RUN_FILES, runContentIn } from "./run-dir.ts";
import { buildStream } from "./stream.ts";

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

/** A run file's JSON; one line naming the file when it is damaged. */
export function readJsonFile(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (cause) {
    throw new InputFileError(path, "is not valid JSON (the file was damaged)", "the run cannot be resumed safely; start it again in a fresh --out", cause);
  }
}

/** Refuses an `--out` that is a file or lies below one (nothing is created). */
export function checkOutPath(outDir: string): void {
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

/**
 * Refuses to resume a run of a method whose ranker reads no vectors that was written before such runs
 * stored none (its memory holds vectors, its trajectories bill an embedding call per stored entry):
 * finishing it would mix both formats in one run. One line; the fix is a fresh run.
 */
export function checkNoVectorsFormat(outDir: string, method: MethodSpec, committed: readonly Trajectory[]): void {
  if (!method.memory || method.memory.vectors) return;
  const fix = `rerun it in a fresh --out: runs of ${method.name} now store no vectors and make no embedding call`;
  const metaPath = join(outDir, RUN_FILES.memoryDir, MEMORY_FILES.metadata);
  const dimension = existsSync(metaPath) ? (readJsonFile(metaPath) as { embedding_dimension?: unknown }).embedding_dimension : 0;
  if (dimension !== 0) throw new InputFileError(metaPath, `has embedding_dimension ${shown(dimension)}: the run was written before method ${method.name}, whose ranker reads no vectors, stored none`, fix);
  const billed = committed.findIndex((t) => t.accounting.embedding_calls > 0);
  if (billed >= 0) throw new InputFileError(join(outDir, RUN_FILES.trajectories), `line ${billed + 1} bills ${committed[billed].accounting.embedding_calls} embedding call(s): the run was written before method ${method.name}, whose ranker reads no vectors, stopped embedding its entries`, fix);
}
