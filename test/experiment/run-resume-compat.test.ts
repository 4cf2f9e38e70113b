// Resuming a run whose manifest predates the recorded executor and the per-run plugin list
// (lib/experiment/run.ts `comparableManifests`): an absent `executor` is the SQLite sandbox, and a
// recorded plugin the run does not use is not compared; a used plugin must match.
import { describe, expect, it } from "vitest";
import { comparableManifests, firstDifference } from "../../lib/experiment/run.ts";

const MMR = { path: "examples/mmr.ts", sha256: "a".repeat(64) };
const DATA = { path: "studies/x/data.ts", sha256: "b".repeat(64) };

describe("comparableManifests", () => {
  it("an old manifest (every loaded plugin, no executor) stays resumable for a run that uses none of them", () => {
    const { recorded, now } = comparableManifests({ method: "merit", plugins: [MMR] }, { method: "merit", executor: "sqlite" });
    expect(firstDifference(recorded, now)).toBeNull();
  });
  it("a plugin the run uses is still compared, and another executor is a difference", () => {
    const edited = { ...MMR, sha256: "c".repeat(64) };
    const a = comparableManifests({ method: "merit_mmr", plugins: [DATA, MMR] }, { method: "merit_mmr", executor: "sqlite", plugins: [edited] });
    expect(firstDifference(a.recorded, a.now)?.path).toBe("plugins");
    const b = comparableManifests({ method: "merit_mmr", plugins: [DATA, MMR] }, { method: "merit_mmr", executor: "sqlite", plugins: [MMR] });
    expect(firstDifference(b.recorded, b.now)).toBeNull();
    const c = comparableManifests({ method: "merit" }, { method: "merit", executor: "sql.js" });
    expect(firstDifference(c.recorded, c.now)).toEqual({ path: "executor", there: undefined, here: "sql.js" });
    const d = comparableManifests({ method: "merit", executor: "sqlite" }, { method: "merit", executor: "sqlite" });
    expect(firstDifference(d.recorded, d.now)).toBeNull();
  });
});
