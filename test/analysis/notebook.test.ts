// Tests lib/analysis/notebook.ts: readRuns over a folder of runs (order, summaries) and the plain Markdown table the notebooks display.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { markdownTable, readRuns } from "../../lib/analysis/notebook.ts";
import { writeRunDir } from "../cli/run-dir-fixture.ts";
import { tempDir } from "../helpers/run-fixture.ts";
import { buildTrajectory, repairTrajectory } from "./build-trajectory.ts";

describe("readRuns", () => {
  it("summarises every run directory below a folder, in name order", () => {
    const root = tempDir("notebook-runs");
    const run = (method: string, seed: number) => [buildTrajectory({ query_id: "0", attempts: ["SELECT 0"], statuses: ["CORRECT"], method, stream_seed: seed }), repairTrajectory("1", 1, true, { method, stream_seed: seed })];
    writeRunDir(join(root, "merit-s1"), run("merit", 1));
    writeRunDir(join(root, "iterative-s0"), run("iterative", 0));
    const { dirs, runs } = readRuns(root);
    expect(dirs).toEqual([join(root, "iterative-s0"), join(root, "merit-s1")]);
    expect(runs.map((r) => [r.method, r.stream_seed, r.metrics.total, r.metrics.repaired_count])).toEqual([["iterative", 0, 2, 1], ["merit", 1, 2, 1]]);
  });
});

describe("markdownTable", () => {
  it("writes the header, the --- row and one row per line", () => {
    expect(markdownTable(["seed", "EX (%)"], [[0, "44.65"], [1, "—"]])).toBe("| seed | EX (%) |\n| --- | --- |\n| 0 | 44.65 |\n| 1 | — |");
    expect(markdownTable(["only"], [])).toBe("| only |\n| --- |");
  });
});
