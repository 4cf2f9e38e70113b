/**
 * Report stage, input adapter (METHOD.md §8, §4.5, §5.7): reads the files of one finished run
 * directory — trajectories.jsonl, retrieval_log.jsonl, memory/memory_{positive,negative}.jsonl and
 * config.json — into plain data for the pure report builders.
 * @module
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { InputFileError } from "../errors.ts";
import type { MemoryEntry } from "../memory/entry.ts";
import { MEMORY_FILES } from "../memory/jsonl-store.ts";
import { parseTrajectoryLines, type Trajectory } from "../repair/trajectory.ts";
import type { RetrievalLogRecord } from "../retrieval/retrieval-log.ts";

/** One run directory, read. */
export interface RunInput {
  /** Label shown on the page (directory name relative to the runs' common parent). */
  label: string;
  dir: string;
  /** `config.data_dir` of config.json, as written (relative paths are relative to the working directory). */
  dataDir: string | null;
  trajectories: Trajectory[];
  /** null when the run wrote no retrieval_log.jsonl (memoryless methods). */
  retrievalLog: RetrievalLogRecord[] | null;
  /** null when the run has no memory/ folder. */
  memory: MemoryEntry[] | null;
}

/** Reads the JSON objects of a .jsonl file, failing with the 1-based line number on bad JSON. */
export function readJsonLines<T>(file: string): T[] {
  const out: T[] = [];
  readFileSync(file, "utf8").split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    try {
      out.push(JSON.parse(line) as T);
    } catch (cause) {
      throw new InputFileError(file, `line ${i + 1} is not JSON`, "re-run the run or delete the partial line", cause);
    }
  });
  return out;
}

/** Reads the run directory `dir` (which must hold trajectories.jsonl) and labels it `label`. */
export function readRun(dir: string, label: string): RunInput {
  const trajectoriesFile = join(dir, "trajectories.jsonl");
  if (!existsSync(trajectoriesFile)) throw new InputFileError(dir, "has no trajectories.jsonl", "pass directories written by `merit run`");
  const trajectories = parseTrajectoryLines(readFileSync(trajectoriesFile, "utf8"), trajectoriesFile);
  const logFile = join(dir, "retrieval_log.jsonl");
  const retrievalLog = existsSync(logFile) ? readJsonLines<RetrievalLogRecord>(logFile) : null;
  const memoryDir = join(dir, "memory");
  let memory: MemoryEntry[] | null = null;
  if (existsSync(memoryDir)) {
    memory = [];
    for (const name of [MEMORY_FILES.positive, MEMORY_FILES.negative]) {
      const file = join(memoryDir, name);
      if (existsSync(file)) memory.push(...readJsonLines<MemoryEntry>(file));
    }
  }
  return { label, dir, dataDir: readDataDir(join(dir, "config.json")), trajectories, retrievalLog, memory };
}

/** `config.data_dir` from a run's config.json, or null when the file or the field is absent. */
export function readDataDir(file: string): string | null {
  if (!existsSync(file)) return null;
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, "utf8"));
  } catch (cause) {
    throw new InputFileError(file, "is not JSON", "restore the run's config.json", cause);
  }
  const config = (json as { config?: { data_dir?: unknown } }).config;
  return typeof config?.data_dir === "string" ? config.data_dir : null;
}
