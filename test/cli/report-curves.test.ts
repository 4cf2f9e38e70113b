// Tests the learning curves of `merit report` (lib/cli/report.ts, lib/analysis/learning-curves.ts): the learning-curve figure and CSV are written in every report unless --no-curves, and the manifest records the band's bootstrap.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { reportCommand } from "../../lib/cli/report.ts";
import { buildTrajectory, repairTrajectory } from "../analysis/build-trajectory.ts";
import { writeRunDir } from "./run-dir-fixture.ts";

const root = mkdtempSync(join(tmpdir(), "merit-report-curves-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// spider, 3 queries in a different order per seed: q0 initially correct, q1 repaired, q2 repaired by merit only.
for (const method of ["merit", "iterative"]) {
  for (const seed of [0, 1]) {
    const trajectories = [
      buildTrajectory({ query_id: "0", attempts: ["SELECT 0"], statuses: ["CORRECT"], method, stream_seed: seed }),
      repairTrajectory("1", 1, true, { method, stream_seed: seed }),
      method === "merit" ? repairTrajectory("2", 2, true, { method, stream_seed: seed }) : repairTrajectory("2", 7, false, { method, stream_seed: seed }),
    ];
    // writeRunDir numbers stream positions in the given order
    writeRunDir(join(root, "runs", `${method}-s${seed}`), seed === 0 ? trajectories : [...trajectories].reverse());
  }
}
const sink = { out: () => {}, err: () => {} };

describe("merit report --curves", () => {
  it("writes the learning curves and records their bootstrap", async () => {
    const dest = join(root, "with");
    expect(await reportCommand.run([join(root, "runs"), "--out", dest, "--resamples", "50", "--curves", "--curve-resamples", "40", "--seed", "2"], sink)).toBe(0);
    expect(readFileSync(join(dest, "figures", "learning-curves.svg"), "utf8")).toContain("Stream position");
    expect(readFileSync(join(dest, "figures", "learning-curves.png")).subarray(1, 4).toString()).toBe("PNG");
    const csv = readFileSync(join(dest, "figures", "learning-curves.csv"), "utf8").trim().split("\n");
    // 2 methods × 2 curves × 3 positions; merit's EX: seed 0 (0, 1, 2) 100, 100, 100; seed 1 (2, 1, 0) likewise
    expect(csv).toHaveLength(1 + 12);
    expect(csv.filter((l) => l.includes(",ex,")).length).toBe(6);
    const manifest = JSON.parse(readFileSync(join(dest, "manifest.json"), "utf8"));
    expect(manifest.learning_curves).toEqual({ resamples: 40, seed: 2, level: 0.95 });
    // merit and iterative each have 2 orders with equal EX here: spread 0
    expect(readFileSync(join(dest, "tables", "order-sensitivity.csv"), "utf8")).toContain("0.00");
  });
  it("writes them by default (issue 31: in every report), with the band's default B = 1000", async () => {
    const dest = join(root, "default");
    expect(await reportCommand.run([join(root, "runs"), "--out", dest, "--resamples", "50", "--no-figures"], sink)).toBe(0);
    expect(readFileSync(join(dest, "figures", "learning-curves.csv"), "utf8").trim().split("\n")).toHaveLength(1 + 12);
    expect(JSON.parse(readFileSync(join(dest, "manifest.json"), "utf8")).learning_curves).toEqual({ resamples: 1000, seed: 0, level: 0.95 });
    expect(existsSync(join(dest, "tables", "order-sensitivity.csv"))).toBe(true);
  });
  it("writes nothing of them with --no-curves, and refuses --curve-resamples or --curves beside it", async () => {
    const dest = join(root, "without");
    expect(await reportCommand.run([join(root, "runs"), "--out", dest, "--resamples", "50", "--no-curves"], sink)).toBe(0);
    expect(existsSync(join(dest, "figures", "learning-curves.svg"))).toBe(false);
    expect(existsSync(join(dest, "figures", "learning-curves.csv"))).toBe(false);
    expect(JSON.parse(readFileSync(join(dest, "manifest.json"), "utf8")).learning_curves).toBeUndefined();
    expect(existsSync(join(dest, "tables", "order-sensitivity.csv"))).toBe(false);
    await expect(reportCommand.run([join(root, "runs"), "--out", join(root, "x"), "--no-curves", "--curve-resamples", "10"], sink)).rejects.toThrow(/--no-curves leaves out/);
    await expect(reportCommand.run([join(root, "runs"), "--out", join(root, "y"), "--no-curves", "--curves"], sink)).rejects.toThrow(/contradict/);
  });
});
