/**
 * Analysis stage, run alignment (METHOD.md §9 shared controls, §6.6): the runs one report compares
 * must share K everywhere and, per dataset, the initial cache and the data hashes — and every other
 * input resume compares besides method and seed (config, model, code; experiment/shared-inputs.ts);
 * otherwise their differences are not the methods' doing and the report is refused.
 * @module
 */
import { MeritError } from "../errors.ts";
import { readSharedInputs, sharedInputDifference, type SharedInputs } from "../experiment/shared-inputs.ts";
import type { RunIdentity } from "./run-directory.ts";

/** Runs that may not be compared; the message names the field, both values and both runs. */
export class RunMismatchError extends MeritError {
  readonly field: string;
  readonly first: RunIdentity;
  readonly second: RunIdentity;
  constructor(field: string, first: RunIdentity, second: RunIdentity, valueOf: (r: RunIdentity) => string, fix: string) {
    super(
      `runs differ in ${field}: ${first.dir} (${first.method}, seed ${first.stream_seed}) has ${valueOf(first)} but ` +
        `${second.dir} (${second.method}, seed ${second.stream_seed}) has ${valueOf(second)}; ${fix}`,
    );
    this.field = field;
    this.first = first;
    this.second = second;
  }
}

interface Control {
  field: string;
  value: (r: RunIdentity) => string;
  fix: string;
}

/** Compared per dataset (in this order, so the first mismatch reported is the most basic one). */
const PER_DATASET: Control[] = [
  { field: "dataset checksum (examples and tables files)", value: (r) => r.dataset_checksum, fix: "run every method on the same dataset files" },
  // Before the manifest hash, so mixing the single and the test-suite Spider databases is named as such.
  {
    field: "database set (single vs test-suite databases)",
    value: (r) => r.database_set ?? "not recorded",
    fix: "score every run on the same set: all on the test-suite databases (`merit data download spider-testsuite`), or all with --allow-single-db",
  },
  { field: "database manifest hash", value: (r) => r.database_manifest_hash, fix: "run every method on the same database files" },
  { field: "initial cache (cache_hash)", value: (r) => r.cache_hash, fix: "run every method from the same initial cache (`initial_cache` in the config)" },
];

/**
 * The experiment conditions a study's arms may vary (lib/experiment/study.ts `arms`): runs that
 * differ only in these (and their method) are still paired, when the report is told so
 * (`merit report --conditions`, which `merit study run` passes).
 */
export const RUN_CONDITIONS = ["feedback_regime", "feedback_noise", "max_repair_steps"] as const;
export type RunCondition = (typeof RUN_CONDITIONS)[number];

/** Shared inputs without the config fields of `conditions`. */
function withoutConditions(inputs: SharedInputs, conditions: readonly RunCondition[]): SharedInputs {
  if (conditions.length === 0) return inputs;
  const config = { ...(inputs.config.config as Record<string, unknown>) };
  for (const c of conditions) delete config[c];
  return { ...inputs, config: { ...inputs.config, config } };
}

/** Compared across all runs: the Steps metric and repair budgets assume one K. */
const GLOBAL: Control[] = [
  { field: "K (max_repair_steps in config.json)", value: (r) => String(r.max_repair_steps), fix: "run every method with the same max_repair_steps" },
];

/**
 * Throws RunMismatchError for the first control two runs disagree on, comparing every run with the
 * first run (in input order) of its dataset, resp. with the very first run for K. Returns the
 * shared K.
 */
export function assertAlignedRuns(runs: readonly RunIdentity[], conditions: readonly RunCondition[] = []): number {
  if (runs.length === 0) throw new MeritError("no runs to align; pass run directories");
  const firstOf = new Map<string, RunIdentity>();
  for (const run of runs) {
    const first = firstOf.get(run.dataset);
    if (first === undefined) {
      firstOf.set(run.dataset, run);
      continue;
    }
    for (const c of PER_DATASET) if (c.value(first) !== c.value(run)) throw new RunMismatchError(c.field, first, run, c.value, c.fix);
  }
  if (!conditions.includes("max_repair_steps")) {
    for (const run of runs) {
      for (const c of GLOBAL) if (c.value(runs[0]) !== c.value(run)) throw new RunMismatchError(c.field, runs[0], run, c.value, c.fix);
    }
  }
  const seen = new Map<string, RunIdentity>();
  for (const run of runs) {
    const key = `${run.dataset}\u0000${run.method}\u0000${run.stream_seed}`;
    const other = seen.get(key);
    if (other) throw new MeritError(`${other.dir} and ${run.dir} are both (${run.dataset}, ${run.method}, seed ${run.stream_seed}); pass each run once`);
    seen.set(key, run);
  }
  return runs[0].max_repair_steps;
}

/**
 * Throws RunMismatchError when two runs of one dataset differ in an input besides their method and
 * seed — config.json (decoding, retrieval, limit, …), the model and embedder hashes, the code hash,
 * prompts, package versions (experiment/shared-inputs.ts, the fields resume compares) — comparing
 * every run with the first run of its dataset. Run after assertAlignedRuns, whose messages are more
 * specific for the data, the initial cache and K.
 */
export function assertSharedInputs(runs: readonly RunIdentity[], conditions: readonly RunCondition[] = []): void {
  const firstOf = new Map<string, { run: RunIdentity; inputs: SharedInputs }>();
  for (const run of runs) {
    const read = readSharedInputs(run.dir, "restore the run's files or re-run it");
    if (read === null) continue; // readRunIdentity has required both files; nothing to compare otherwise
    const inputs = withoutConditions(read, conditions);
    const first = firstOf.get(run.dataset);
    if (first === undefined) {
      firstOf.set(run.dataset, { run, inputs });
      continue;
    }
    const d = sharedInputDifference(first.inputs, inputs);
    if (d) throw new RunMismatchError(d.what, first.run, run, (r) => (r === run ? d.second : d.first), "report only runs made with the same inputs (re-run the odd ones with the others' config, model and code)");
  }
}
