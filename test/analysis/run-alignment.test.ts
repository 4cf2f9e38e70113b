// Tests lib/analysis/run-alignment.ts: aligned runs pass and return K; each mismatch is refused with a message naming the field, both values and both runs.
import { describe, expect, it } from "vitest";
import { assertAlignedRuns, RunMismatchError } from "../../lib/analysis/run-alignment.ts";
import type { RunIdentity } from "../../lib/analysis/run-directory.ts";

function id(dir: string, over: Partial<RunIdentity> = {}): RunIdentity {
  return {
    dir,
    dataset: "spider",
    method: "merit",
    stream_seed: 0,
    cache_hash: "cache-A",
    dataset_checksum: "data-A",
    database_manifest_hash: "db-A",
    max_repair_steps: 7,
    config_hash: "cfg",
    trajectories_sha256: "t",
    ...over,
  };
}

describe("assertAlignedRuns", () => {
  it("accepts runs sharing cache, data and K, and returns K", () => {
    expect(assertAlignedRuns([id("r/merit-0"), id("r/it-0", { method: "iterative" }), id("r/merit-1", { stream_seed: 1 })])).toBe(7);
  });
  it("compares cache and data hashes within a dataset only", () => {
    const bird = id("r/bird", { dataset: "bird", cache_hash: "cache-B", dataset_checksum: "data-B", database_manifest_hash: "db-B" });
    expect(assertAlignedRuns([id("r/spider"), bird])).toBe(7);
  });
  it("refuses a different initial cache, naming both runs and both hashes", () => {
    const runs = [id("r/merit-0"), id("r/iterative-0", { method: "iterative", cache_hash: "cache-Z" })];
    expect(() => assertAlignedRuns(runs)).toThrow(RunMismatchError);
    expect(() => assertAlignedRuns(runs)).toThrow(
      "runs differ in initial cache (cache_hash): r/merit-0 (merit, seed 0) has cache-A but r/iterative-0 (iterative, seed 0) has cache-Z; run every method from the same initial cache (`initial_cache` in the config)",
    );
  });
  it("refuses different dataset files and database files", () => {
    expect(() => assertAlignedRuns([id("a"), id("b", { stream_seed: 1, dataset_checksum: "data-Z" })])).toThrow(/differ in dataset checksum .*a \(merit, seed 0\) has data-A but b \(merit, seed 1\) has data-Z/);
    expect(() => assertAlignedRuns([id("a"), id("b", { stream_seed: 1, database_manifest_hash: "db-Z" })])).toThrow(/differ in database manifest hash: a .* has db-A but b .* has db-Z/);
  });
  it("refuses a different K, even across datasets", () => {
    const bird = id("r/bird", { dataset: "bird", cache_hash: "cache-B", max_repair_steps: 3 });
    expect(() => assertAlignedRuns([id("r/spider"), bird])).toThrow(/differ in K \(max_repair_steps in config\.json\): r\/spider \(merit, seed 0\) has 7 but r\/bird \(merit, seed 0\) has 3/);
  });
  it("reports the data mismatch before the cache mismatch, and refuses a run given twice", () => {
    expect(() => assertAlignedRuns([id("a"), id("b", { stream_seed: 1, dataset_checksum: "data-Z", cache_hash: "cache-Z" })])).toThrow(/dataset checksum/);
    expect(() => assertAlignedRuns([id("a"), id("copy-of-a")])).toThrow(/^a and copy-of-a are both \(spider, merit, seed 0\)/);
    expect(() => assertAlignedRuns([])).toThrow(/^no runs to align; pass run directories$/); // the CLI adds "merit report: " (no "report: report:")
  });
});
