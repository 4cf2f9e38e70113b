// Tests lib/analysis/report-manifest.ts: the report manifest is byte-identical for the same inputs in any order, has no timestamps, and hashes runs without their paths.
import { describe, expect, it } from "vitest";
import { reportManifest } from "../../lib/analysis/report-manifest.ts";
import type { RunIdentity } from "../../lib/analysis/run-directory.ts";

const base: Omit<RunIdentity, "dir" | "method" | "stream_seed"> = {
  dataset: "spider",
  cache_hash: "c",
  dataset_checksum: "d",
  database_manifest_hash: "m",
  max_repair_steps: 7,
  config_hash: "cfg",
  trajectories_sha256: "t",
};
const runs: RunIdentity[] = [
  { ...base, dir: "runs/merit-1", method: "merit", stream_seed: 1 },
  { ...base, dir: "runs/iterative-0", method: "iterative", stream_seed: 0 },
  { ...base, dir: "runs/merit-0", method: "merit", stream_seed: 0 },
];
const settings = { resamples: 10_000, seed: 0, interval: "percentile" as const, level: 0.95 };

describe("reportManifest", () => {
  it("is deterministic and independent of input order", () => {
    const a = reportManifest(runs, 7, settings);
    expect(reportManifest([...runs].reverse(), 7, settings)).toBe(a);
    expect(a).not.toMatch(/_at"|time|date/i);
    const json = JSON.parse(a);
    expect(json.runs.map((r: { run_dir: string }) => r.run_dir)).toEqual(["runs/iterative-0", "runs/merit-0", "runs/merit-1"]);
    expect(json.bootstrap).toEqual({ resamples: 10_000, seed: 0, interval: "percentile", level: 0.95 });
    expect(json.max_repair_steps).toBe(7);
    expect(json.format_version).toBe("merit-report-v1");
    // keys are sorted (canonical JSON), so the first key is "bootstrap"
    expect(Object.keys(json)[0]).toBe("bootstrap");
  });
  it("changes with any input hash or setting, but inputs_hash ignores where the runs live", () => {
    const a = JSON.parse(reportManifest(runs, 7, settings));
    const moved = JSON.parse(reportManifest(runs.map((r) => ({ ...r, dir: `elsewhere/${r.dir}` })), 7, settings));
    expect(moved.inputs_hash).toBe(a.inputs_hash);
    const changed = JSON.parse(reportManifest([{ ...runs[0], trajectories_sha256: "t2" }, ...runs.slice(1)], 7, settings));
    expect(changed.inputs_hash).not.toBe(a.inputs_hash);
    expect(reportManifest(runs, 7, { ...settings, interval: "bca" })).not.toBe(reportManifest(runs, 7, settings));
    expect(JSON.parse(reportManifest(runs, 7, settings, { gold_labels_sha256: "g" })).gold_labels_sha256).toBe("g");
  });
});
