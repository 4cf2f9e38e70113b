/**
 * Report stage, input adapter (METHOD.md §8, §4.5, §5.7): reads the files of one finished run
 * directory — trajectories.jsonl, retrieval_log.jsonl, memory/memory_{positive,negative}.jsonl and
 * config.json, through the run-directory readers (lib/experiment/run-dir.ts) — into plain data for
 * the pure report builders.
 * @module
 */
import { readMemoryEntries, readRetrievalLog, readRunDataDir, readTrajectories } from "../experiment/run-dir.ts";
import type { MemoryEntry } from "../memory/entry.ts";
import type { Trajectory } from "../repair/trajectory.ts";
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

/** Reads the run directory `dir` (which must hold trajectories.jsonl) and labels it `label`. */
export function readRun(dir: string, label: string): RunInput {
  const trajectories = readTrajectories(dir);
  return { label, dir, dataDir: readRunDataDir(dir), trajectories, retrievalLog: readRetrievalLog(dir), memory: readMemoryEntries(dir) };
}
