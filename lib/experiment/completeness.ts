/**
 * Experiment runs, completeness of a run directory (METHOD.md §11; lib/experiment/run.ts): the
 * trajectory lines cover stream positions 0..k−1, each exactly once and in order, and — for a
 * `completed` run — k equals the manifest's `stream_length`; prompts.jsonl and retrieval_log.jsonl
 * hold exactly the lines the committed episodes wrote; a completed run's trajectories still match the
 * hash and metrics recorded at completion (run-records.ts). `merit report` (through the run reader),
 * `merit audit` and `--resume` call this, so a truncated, duplicated or mixed directory is refused
 * with one line instead of being scored.
 * @module
 */
import { existsSync, readFileSync } from "node:fs";
import { InputFileError } from "../errors.ts";
import { checkTrajectoryVocabulary, getMethod, isMethodName, retrievesMemory, type HooksRecord } from "../methods/index.ts";
import { FEEDBACK } from "../methods/feedback.ts";
import { parseTrajectoryLines, type Trajectory } from "../repair/trajectory.ts";
import { RUN_FILES, runFile } from "./run-dir.ts";
import { checkRunRecords } from "./run-records.ts";

const FIX = "the run directory is damaged or mixed; resume it with `merit run --resume` if it is unfinished, else re-run it into a fresh --out";

/** Lines of prompts.jsonl and retrieval_log.jsonl that the committed `trajectories` wrote. */
export function expectedJournalLines(trajectories: readonly Trajectory[], memoryMethod: boolean): { prompts: number; retrievals: number } {
  return {
    prompts: trajectories.reduce((n, t) => n + t.call_kinds.length - 1, 0),
    retrievals: memoryMethod ? trajectories.reduce((n, t) => n + t.retrieved_entry_ids.length, 0) : 0,
  };
}

/**
 * Throws InputFileError when positions are not 0..k−1 in order (k = trajectories.length) or, when
 * `streamLength` is given, k differs from it.
 */
export function checkPositions(trajectories: readonly Trajectory[], file: string, streamLength?: number): void {
  const seen = new Map<number, number>();
  trajectories.forEach((t, i) => {
    const first = seen.get(t.stream_position);
    if (first !== undefined) throw new InputFileError(file, `stream position ${t.stream_position} occurs twice (lines ${first + 1} and ${i + 1})`, FIX);
    seen.set(t.stream_position, i);
  });
  trajectories.forEach((t, i) => {
    if (t.stream_position !== i) throw new InputFileError(file, `line ${i + 1} holds stream position ${t.stream_position}, expected ${i} (positions must be 0..${trajectories.length - 1}, each once, in order)`, FIX);
  });
  if (streamLength !== undefined && trajectories.length !== streamLength) {
    throw new InputFileError(file, `has ${trajectories.length} trajectories but ${RUN_FILES.manifest} says stream_length ${streamLength}`, FIX);
  }
}

/** Complete (newline-terminated) lines of a file; 0 when it is absent. */
function countLines(path: string): number {
  if (!existsSync(path)) return 0;
  const bytes = readFileSync(path);
  let n = 0;
  for (let i = bytes.indexOf(10); i >= 0; i = bytes.indexOf(10, i + 1)) n++;
  return n;
}

/**
 * Checks that a `completed` run directory is complete (see module header). Returns the parsed
 * trajectories. Throws InputFileError naming the file, the problem and the fix.
 */
export function checkRunComplete(dir: string): Trajectory[] {
  const manifestFile = runFile(dir, "manifest");
  let manifest: { status?: unknown; stream_length?: unknown; method?: unknown; method_parts?: unknown; trajectories_sha256?: unknown };
  try {
    manifest = JSON.parse(readFileSync(manifestFile, "utf8"));
  } catch (cause) {
    throw new InputFileError(manifestFile, "is missing or not JSON", "pass a directory written by `merit run`", cause);
  }
  const trajFile = runFile(dir, "trajectories");
  if (!existsSync(trajFile)) throw new InputFileError(trajFile, "is missing", FIX);
  const text = readFileSync(trajFile, "utf8");
  if (text.length > 0 && !text.endsWith("\n")) throw new InputFileError(trajFile, "ends with a torn line", FIX);
  const trajectories = parseTrajectoryLines(text, trajFile);
  const completed = manifest.status === "completed";
  const streamLength = typeof manifest.stream_length === "number" ? manifest.stream_length : undefined;
  if (completed && streamLength === undefined) throw new InputFileError(manifestFile, "lacks stream_length", FIX);
  checkPositions(trajectories, trajFile, completed ? streamLength : undefined);
  if (completed) checkRunRecords(dir, text, trajectories, manifest); // trajectories_sha256 and metrics.json
  // A memory method retrieves: the manifest's method_parts say so (a plugin's method too), else the registry.
  const parts = typeof manifest.method_parts === "object" && manifest.method_parts !== null ? (manifest.method_parts as { planner?: unknown; hooks?: HooksRecord }) : null;
  const registered = typeof manifest.method === "string" && isMethodName(manifest.method) ? getMethod(manifest.method) : undefined;
  const known = parts !== null || registered !== undefined;
  // Call kinds and failure types: the method's declared vocabularies (its hooks' record), else the kit's.
  const hooks = parts ? parts.hooks : registered?.hooks;
  const judgeKinds = (regime: string) => {
    if (!FEEDBACK.has(regime)) return ["*"]; // a plugin's regime, not loaded: its call kinds are not known here
    const kind = FEEDBACK.get(regime).call?.kind;
    return kind ? [kind] : [];
  };
  // initial_failure_type (an accepted initial failure's type) is a label of the same classifier
  trajectories.forEach((t, i) => checkTrajectoryVocabulary(hooks, { call_kinds: t.call_kinds, error_types: [...t.error_types, t.initial_failure_type ?? null] }, `${trajFile} line ${i + 1}`, judgeKinds(t.feedback_regime)));
  const expected = expectedJournalLines(trajectories, parts ? parts.planner !== undefined || parts.hooks?.memory !== undefined : Boolean(registered && retrievesMemory(registered)));
  const prompts = countLines(runFile(dir, "prompts"));
  if (prompts !== expected.prompts) throw new InputFileError(runFile(dir, "prompts"), `has ${prompts} lines but the ${trajectories.length} trajectories made ${expected.prompts} prompts`, FIX);
  if (known) {
    const retrievals = countLines(runFile(dir, "retrievalLog"));
    if (retrievals !== expected.retrievals) throw new InputFileError(runFile(dir, "retrievalLog"), `has ${retrievals} lines but the ${trajectories.length} trajectories made ${expected.retrievals} retrievals`, FIX);
  }
  return trajectories;
}
