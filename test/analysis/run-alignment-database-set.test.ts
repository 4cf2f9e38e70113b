// Tests lib/analysis/run-alignment.ts on the database set (METHOD.md §1.4, §2.3): runs scored on the
// single Spider databases and runs scored on the test-suite databases are never compared in one report.
import { describe, expect, it } from "vitest";
import { assertAlignedRuns, RunMismatchError } from "../../lib/analysis/run-alignment.ts";
import type { RunIdentity } from "../../lib/analysis/run-directory.ts";

const id = (dir: string, over: Partial<RunIdentity> = {}): RunIdentity => ({
  dir,
  dataset: "spider",
  method: "merit",
  stream_seed: 0,
  cache_hash: "cache-A",
  dataset_checksum: "data-A",
  database_manifest_hash: "db-A",
  database_set: "test-suite",
  max_repair_steps: 7,
  config_hash: "cfg",
  trajectories_sha256: "t",
  ...over,
});

describe("assertAlignedRuns: database set", () => {
  it("refuses single and test-suite runs together in one line, before the manifest hash", () => {
    const runs = [id("r/merit-0"), id("r/iterative-0", { method: "iterative", database_set: "single", database_manifest_hash: "db-B" })];
    expect(() => assertAlignedRuns(runs)).toThrow(RunMismatchError);
    expect(() => assertAlignedRuns(runs)).toThrow(
      "runs differ in database set (single vs test-suite databases): r/merit-0 (merit, seed 0) has test-suite but r/iterative-0 (iterative, seed 0) has single; score every run on the same set: all on the test-suite databases (`merit data download spider-testsuite`), or all with --allow-single-db",
    );
  });
  it("a manifest that did not record its set is not mixed with one that did; same sets pass", () => {
    expect(() => assertAlignedRuns([id("a"), id("b", { stream_seed: 1, database_set: undefined })])).toThrow(/has test-suite but b .* has not recorded/);
    expect(assertAlignedRuns([id("a"), id("b", { stream_seed: 1 })])).toBe(7);
  });
});
