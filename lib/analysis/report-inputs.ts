/**
 * Analysis stage, report inputs (METHOD.md §8, §9 shared controls): reads the run directories of one
 * report — identities (refusing misaligned runs), trajectories summarised with the runs' shared K,
 * and memory births for the growth figure.
 * @module
 */
import { InputFileError } from "../errors.ts";
import { readTrajectories, RUN_FILES, runFile } from "../experiment/run-dir.ts";
import type { Trajectory } from "../repair/trajectory.ts";
import type { RunMemory } from "./memory-growth.ts";
import { assertAlignedRuns, assertSharedInputs, type RunCondition } from "./run-alignment.ts";
import { readEntryBirths, readRunIdentity, type RunIdentity } from "./run-directory.ts";
import { summarizeRun, type RunSummary } from "./run-summary.ts";

/** Everything `merit report` reads from its run directories. */
export interface ReportInputs {
  identities: RunIdentity[];
  runs: RunSummary[];
  /** Memory of the runs that have a memory/ folder. */
  memories: RunMemory[];
  /** Trajectories of the first run of each dataset (the initial attempts are shared). */
  firstTrajectories: Map<string, Trajectory[]>;
  /** The shared K. */
  maxRepairSteps: number;
}

/**
 * Reads every run directory (each must hold trajectories.jsonl, manifest.json and config.json),
 * refuses misaligned runs and runs made with other inputs (run-alignment.ts) and runs whose
 * trajectories disagree with their manifest, and summarises each with the shared K.
 */
export function readReportInputs(dirs: readonly string[], opts: { conditions?: readonly RunCondition[] } = {}): ReportInputs {
  const conditions = opts.conditions ?? [];
  const identities = dirs.map(readRunIdentity);
  const maxRepairSteps = assertAlignedRuns(identities, conditions);
  assertSharedInputs(identities, conditions); // config, model, code: what resume compares, besides method, seed and the study's conditions
  const runs: RunSummary[] = [];
  const memories: RunMemory[] = [];
  const firstTrajectories = new Map<string, Trajectory[]>();
  for (const id of identities) {
    const file = runFile(id.dir, "trajectories");
    const trajectories = readTrajectories(id.dir);
    if (trajectories.length === 0) throw new InputFileError(file, "has no trajectories", "finish the run before reporting it");
    const run = summarizeRun(trajectories, { maxRepairSteps: conditions.includes("max_repair_steps") ? id.max_repair_steps : maxRepairSteps });
    if (run.dataset !== id.dataset || run.method !== id.method || run.stream_seed !== id.stream_seed) {
      throw new InputFileError(
        file,
        `holds (${run.dataset}, ${run.method}, seed ${run.stream_seed}) but ${RUN_FILES.manifest} says (${id.dataset}, ${id.method}, seed ${id.stream_seed})`,
        "keep each run's files together in its own directory",
      );
    }
    if (!firstTrajectories.has(run.dataset)) firstTrajectories.set(run.dataset, trajectories);
    runs.push(run);
    const births = readEntryBirths(id.dir);
    if (births !== null) memories.push({ dataset: id.dataset, method: id.method, stream_seed: id.stream_seed, stream_length: trajectories.length, births });
  }
  return { identities, runs, memories, firstTrajectories, maxRepairSteps };
}
