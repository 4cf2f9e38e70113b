// Tests `merit report --diagnostics` (lib/cli/report.ts, lib/analysis/memory-diagnostics.ts) on a real
// run directory: MERIT on the scripted five-query scenario (test/helpers/scripted-scenario.ts: 426
// correct, A repaired at step 3, B never repaired in K = 7 steps, C repaired at step 1, 278 correct).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCsv } from "../../lib/analysis/csv.ts";
import { reportCommand } from "../../lib/cli/report.ts";
import { readRetrievalLog, readTrajectories } from "../../lib/experiment/run-dir.ts";
import { budget } from "../helpers/budget.ts";
import { A, B, C, closeScenario, openScenario, runScenario, type ScenarioFixture } from "../helpers/scripted-scenario.ts";

let fx: ScenarioFixture;
let runDir: string;
const sink = { out: () => {}, err: () => {} };

beforeAll(async () => {
  fx = await openScenario("report-diagnostics");
  runDir = join(fx.root, "runs", "merit");
  await runScenario({ method: "merit", ...fx, outDir: runDir });
}, budget(180_000));
afterAll(() => closeScenario(fx));

describe("merit report --diagnostics", () => {
  it("writes the utility table and the memory size figure from the run's trajectories, log and memory", async () => {
    const out = join(fx.root, "with");
    expect(await reportCommand.run([runDir, "--out", out, "--resamples", "20", "--diagnostics"], sink)).toBe(0);
    const trajectories = readTrajectories(runDir);
    const log = readRetrievalLog(runDir)!;
    const steps = Object.fromEntries(trajectories.map((t) => [t.query_id, t.repair_steps]));
    expect([steps[A], steps[B], steps[C]]).toEqual([3, 7, 1]); // 11 repair steps, 2 of them correct (A's 3rd, C's 1st)

    const [header, ...rows] = parseCsv(readFileSync(join(out, "tables", "memory-utility.csv"), "utf8"));
    expect(header.slice(0, 11)).toEqual(["Dataset", "Method", "Polarity", "Kind", "Retrievals", "Steps", "Step correct", "Episode correct", "Base steps", "Base step correct", "Base episode correct"]);
    const col = (name: string) => header.indexOf(name);
    for (const r of rows) expect(Number(r[col("Steps")]) + Number(r[col("Base steps")])).toBe(11);
    // every retrieved id of the log is counted once, in the group of its polarity and error type
    expect(rows.reduce((n, r) => n + Number(r[col("Retrievals")]), 0)).toBe(log.reduce((n, r) => n + r.retrieved_entry_ids.length, 0));
    for (const r of rows.filter((r) => r[2] !== "none")) {
      const hits = log.filter((l) => l.retrieved_entry_ids.some((_, i) => l.retrieved_polarities[i] === r[2] && l.retrieved_error_types[i] === r[3]));
      expect(Number(r[col("Steps")])).toBe(hits.length);
      // share of those steps whose attempt was correct: A's step 3 or C's step 1
      const correct = hits.filter((l) => (l.query_id === A && l.repair_iteration === 3) || (l.query_id === C && l.repair_iteration === 1)).length;
      expect(r[col("Step correct")]).toBe(((100 * correct) / hits.length).toFixed(1));
      expect(r[col("Base step correct")]).toBe(((100 * (2 - correct)) / (11 - hits.length)).toFixed(1));
    }
    // A (position 1) meets an empty memory (426 was initially correct): its 3 steps retrieve nothing
    expect(log.filter((l) => l.query_id === A).every((l) => l.retrieved_entry_ids.length === 0)).toBe(true);
    const none = rows.find((r) => r[2] === "none")!;
    expect(Number(none[col("Steps")])).toBeGreaterThanOrEqual(3);
    expect(rows.length).toBeGreaterThan(1); // B and C retrieve what A left
    // By hand: A (position 1) meets an empty memory; A's repair leaves a positive entry typed Syntax (the
    // failure it fixed), retrieved at B's 7 steps and C's step 1; B (position 2) leaves a negative entry
    // (Result Mismatch), retrieved at C's step 1. Correct steps: A's 3rd and C's 1st; A and C succeed.
    expect(rows.map((r) => r.slice(2, 11).join(" "))).toEqual([
      "positive Syntax 8 8 12.5 12.5 3 33.3 100.0", // B1–B7, C1: 1/8 correct, 1/8 episodes; base A1–A3: 1/3, 3/3
      "negative Result Mismatch 1 1 100.0 100.0 10 10.0 30.0", // C1; base A1–A3, B1–B7: 1/10, 3/10
      "none none 0 3 33.3 100.0 8 12.5 12.5", // A1–A3; base B1–B7, C1
    ]);

    expect(readFileSync(join(out, "tables", "memory-utility.md"), "utf8")).toContain("Retrieval utility");
    expect(readFileSync(join(out, "tables", "memory-utility.tex"), "utf8")).toContain("Retrievals");
    expect(readFileSync(join(out, "figures", "memory-size.svg"), "utf8")).toContain(">Items in memory</text>");
    expect(readFileSync(join(out, "figures", "memory-size.png")).subarray(1, 4).toString()).toBe("PNG");
    const size = readFileSync(join(out, "figures", "memory-size.csv"), "utf8").trim().split("\n");
    // positive entries born at A (position 1) and C (3), the negative one at B (2); 5 episodes
    expect(size).toEqual([
      "dataset,method,polarity,episodes,items",
      ...["positive,0,0", "positive,2,1", "positive,4,2", "positive,5,2", "negative,0,0", "negative,3,1", "negative,5,1"].map((p) => `Spider,MERIT,${p}.0000`),
    ]);
    expect(JSON.parse(readFileSync(join(out, "manifest.json"), "utf8")).memory_diagnostics).toEqual({ runs: 1 });
  });

  it("writes none of it without the flag", async () => {
    const out = join(fx.root, "without");
    expect(await reportCommand.run([runDir, "--out", out, "--resamples", "20"], sink)).toBe(0);
    expect(existsSync(join(out, "tables", "memory-utility.csv"))).toBe(false);
    expect(existsSync(join(out, "figures", "memory-size.svg"))).toBe(false);
    expect(existsSync(join(out, "figures", "memory-growth.svg"))).toBe(true);
    expect(JSON.parse(readFileSync(join(out, "manifest.json"), "utf8")).memory_diagnostics).toBeUndefined();
  });
});
