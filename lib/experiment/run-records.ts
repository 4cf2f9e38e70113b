/**
 * Experiment runs, the records of a finished run (METHOD.md §11; README "Reliability"): before a
 * completed run is reported or audited, its trajectories must still be the ones it finished with —
 * the sha256 of trajectories.jsonl equals the manifest's `trajectories_sha256` (recorded at
 * completion; manifests written before it was recorded have none and skip this check), and the
 * metrics recomputed from the trajectories equal every field metrics.json records. Both are
 * checksums against damage and mistakes (a hand edit, a file copied from another run), not a
 * signature: someone who edits the trajectories and rewrites both records cannot be caught without a
 * key.
 * @module
 */
import { existsSync } from "node:fs";
import { InputFileError } from "../errors.ts";
import { canonicalJson, sha256Hex, type JsonValue } from "../hash.ts";
import type { Trajectory } from "../repair/trajectory.ts";
import { readRunJson, RUN_FILES, runFile } from "./run-dir.ts";
import { runMetrics } from "./run-metrics.ts";

const FIX = "the run's files disagree (edited or damaged); restore them from a backup or re-run it into a fresh --out";

/**
 * Checks a completed run's trajectories (`text`, their bytes as read; `trajectories`, parsed) against
 * the manifest's `trajectories_sha256` and metrics.json. Throws InputFileError naming the file, the
 * first differing field and both values. A run without metrics.json is checked on its hash alone.
 */
export function checkRunRecords(dir: string, text: string, trajectories: readonly Trajectory[], manifest: { trajectories_sha256?: unknown }): void {
  const trajFile = runFile(dir, "trajectories");
  if (typeof manifest.trajectories_sha256 === "string") {
    const actual = sha256Hex(text);
    if (actual !== manifest.trajectories_sha256) {
      throw new InputFileError(trajFile, `has sha256 ${actual.slice(0, 12)}… but ${RUN_FILES.manifest} recorded ${manifest.trajectories_sha256.slice(0, 12)}… when the run completed`, FIX);
    }
  }
  if (!existsSync(runFile(dir, "metrics")) || trajectories.length === 0) return;
  const recorded = readRunJson(dir, "metrics", { fix: FIX }) as Record<string, unknown>;
  const config = readRunJson(dir, "config", { fix: FIX }) as { config?: { max_repair_steps?: unknown } } | undefined;
  const k = config?.config?.max_repair_steps;
  const recomputed = runMetrics(trajectories, typeof k === "number" ? { maxRepairSteps: k } : {}) as unknown as Record<string, unknown>;
  // Only the fields both have: a metric added by a later kit version is not a difference.
  const json = (v: unknown) => canonicalJson((v ?? null) as JsonValue);
  const field = Object.keys(recorded).sort().find((key) => key in recomputed && json(recorded[key]) !== json(recomputed[key]));
  if (field !== undefined) {
    const shown = (v: unknown) => (json(v).length > 60 ? `${json(v).slice(0, 57)}...` : json(v));
    throw new InputFileError(runFile(dir, "metrics"), `says ${field} ${shown(recorded[field])} but the run's ${RUN_FILES.trajectories} give ${shown(recomputed[field])}`, FIX);
  }
}
