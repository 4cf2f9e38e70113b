// Tests lib/cli/report.ts: `merit report` over synthetic run directories writes every table and figure and ends with a JSON summary line.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { reportCommand } from "../../lib/cli/report.ts";
import { MeritError } from "../../lib/errors.ts";
import { buildTrajectory, repairTrajectory } from "../analysis/build-trajectory.ts";
import { writeRunDir } from "./run-dir-fixture.ts";

const root = mkdtempSync(join(tmpdir(), "merit-report-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// spider, 3 queries: q0 initially correct; merit repairs q1 (step 1) and q2 (step 2); iterative repairs q1 only.
for (const method of ["merit", "iterative"]) {
  for (const seed of [0, 1, 2]) {
    const lines = [
      buildTrajectory({ query_id: "0", attempts: ["SELECT 0"], statuses: ["CORRECT"], method, stream_seed: seed }),
      repairTrajectory("1", 1, true, { method, stream_seed: seed }),
      method === "merit" ? repairTrajectory("2", 2, true, { method, stream_seed: seed }) : repairTrajectory("2", 7, false, { method, stream_seed: seed }),
    ].map((t) => JSON.stringify(t));
    writeRunDir(join(root, "runs", `${method}-${seed}`), lines.map((l) => JSON.parse(l)));
  }
}

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, sink: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
}

describe("merit report", () => {
  it("writes tables, runs.csv and figures from a folder of runs", async () => {
    const { out, err, sink } = io();
    const dest = join(root, "report");
    const code = await reportCommand.run([join(root, "runs"), "--out", dest, "--resamples", "200", "--labels", "spider=Spider,merit=MERIT"], sink);
    expect(code).toBe(0);
    expect(err[0]).toBe("report: 6 runs from 6 files; bootstrap B = 200, seed 0, percentile");
    // 5 tables × 3 formats (with the order sensitivity) + runs.csv + manifest.json + 7 figures × 2
    // formats (incl. the MDE figure and the learning curves) + the learning curves' CSV
    expect(JSON.parse(out.at(-1)!)).toEqual({ runs: 6, tables: ["table1", "table2", "table3", "table5", "order-sensitivity"], files: 5 * 3 + 1 + 1 + 14 + 1, resamples: 200, seed: 0, interval: "percentile" });
    // EX: merit 3/3 = 100 on every seed, iterative 2/3 = 66.67; the paper's order and display names
    const t1 = readFileSync(join(dest, "tables", "table1.csv"), "utf8");
    expect(t1).toBe("Dataset,Method,EX (%)\nSpider,Iterative,66.67 ± 0.00\nSpider,MERIT,100.00 ± 0.00\n"); // issue 20 §8: datasets as row blocks (was "Method,Spider\nIterative,…")
    expect(readFileSync(join(dest, "tables", "table2.tex"), "utf8")).toContain("MERIT vs Iterative & +33.33");
    // iterative seed 0: calls 1 + 2 + 8 = 11; tokens 110 + (110 + 220) + (110 + 7 · 220) = 2,090; attempts 1 + 2 + 8 = 11;
    // Steps (1 + 7)/2 = 4
    expect(readFileSync(join(dest, "runs.csv"), "utf8").split("\n")[1]).toBe("spider,iterative,0,3,0.333333,0.666667,1,1,4.000000,0.000000,2090,11,11,0,0");
    for (const name of ["ex-per-method", "forest-delta", "cumulative-repairs", "tokens-vs-ex"]) expect(existsSync(join(dest, "figures", `${name}.png`))).toBe(true);
  });
  it("refuses missing inputs", async () => {
    await expect(reportCommand.run(["--out", join(root, "x")], io().sink)).rejects.toThrow(/at least one run directory/);
    await expect(reportCommand.run([join(root, "nothing"), "--out", join(root, "x")], io().sink)).rejects.toThrow(MeritError);
    await expect(reportCommand.run([join(root, "runs"), "--out", join(root, "x"), "--full", "merit"], io().sink)).rejects.toThrow(/--ablations/);
  });
});
