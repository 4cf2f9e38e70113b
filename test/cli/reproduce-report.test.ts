// Tests the report line of the Makefile's reproduce target (issue 15 §3): --paper-numbers always, --gold-labels results/annotations/cases.csv only when that file exists (`make -n` in a copy, nothing runs); and its grid lines (issue 22 §1): a plan first, the controls only with CONTROLS=1, the peers (and the report's --peers) only with PEERS=1.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const dir = mkdtempSync(join(tmpdir(), "merit-make-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
copyFileSync("Makefile", join(dir, "Makefile"));
for (const f of ["package.json", "package-lock.json"]) writeFileSync(join(dir, f), "{}");
const reportLine = () => execFileSync("make", ["-n", "reproduce"], { cwd: dir, encoding: "utf8" }).split("\n").find((l) => l.includes(" report "))!;

describe("make reproduce: the report step", () => {
  it("passes --gold-labels only when results/annotations/cases.csv exists", () => {
    expect(reportLine()).toContain("--paper-numbers");
    expect(reportLine()).not.toContain("--gold-labels");
    mkdirSync(join(dir, "results", "annotations"), { recursive: true });
    writeFileSync(join(dir, "results", "annotations", "cases.csv"), "");
    expect(reportLine()).toMatch(/--paper-numbers --gold-labels results\/annotations\/cases\.csv$/);
  });
});

describe("make reproduce: the grid steps", () => {
  const gridLines = (...args: string[]) => execFileSync("make", ["-n", "reproduce", ...args], { cwd: dir, encoding: "utf8" }).split("\n").filter((l) => l.includes(" grid "));
  const methods = (line: string) => /--methods (\S+)/.exec(line)![1].split(",");
  it("plan each grid first, then run the methods Tables 1-5 read; the controls only with CONTROLS=1", () => {
    const lines = gridLines();
    expect(lines.map((l) => l.includes("--plan"))).toEqual([true, true, false, false]);
    for (const line of lines) expect(methods(line)).not.toContain("transductive_batch");
    for (const line of gridLines("CONTROLS=1")) expect(methods(line)).toEqual(expect.arrayContaining(["transductive_batch", "zeroshot", "merit"]));
  });
  it("PEERS=1 adds the peers to both grids and the equal-budget control's grids (the plans still first) and names them to the report; without it neither", () => {
    const peers = ["reasoning_bank", "reasoning_bank_oracle", "dynamic_cheatsheet", "dynamic_cheatsheet_rs", "awm", "expel_online", "exprag", "exprecent", "error_fix_memory"];
    const all = gridLines("PEERS=1");
    expect(all.map((l) => l.includes("--plan"))).toEqual([true, true, true, true, true, true, false, false, false, false, false, false]);
    const control = all.filter((l) => l.includes("--arm iterative_budget"));
    expect(control.map((l) => /--out (\S+)/.exec(l)![1])).toEqual(["runs/paper/spider-budget", "runs/paper/bird-budget", "runs/paper/spider-budget", "runs/paper/bird-budget"]);
    for (const line of control) {
      expect(methods(line)).toEqual(["iterative"]);
      expect(line).toContain("--arm iterative_budget");
      expect(/--max-repair-steps budget:(\S+)/.exec(line)![1].split(",")).toEqual(peers);
      expect(line).toContain("--seeds 0,1,2");
    }
    // the long Iterative run the token-matched comparison reads at every K′ ≤ 15 (METHOD.md §13.8)
    const long = all.filter((l) => l.includes("--arm iterative_long"));
    expect(long.map((l) => /--out (\S+)/.exec(l)![1])).toEqual(["runs/paper/spider-long", "runs/paper/bird-long", "runs/paper/spider-long", "runs/paper/bird-long"]);
    for (const line of long) {
      expect(methods(line)).toEqual(["iterative"]);
      expect(line).toContain("--max-repair-steps 15");
      expect(line).toContain("--seeds 0,1,2");
    }
    const lines = all.filter((l) => !l.includes("--arm"));
    for (const line of lines) expect(methods(line)).toEqual(expect.arrayContaining(["merit", "iterative", ...peers]));
    for (const line of lines) expect(methods(line)).not.toContain("transductive_batch");
    for (const line of gridLines()) for (const p of peers) expect(methods(line)).not.toContain(p);
    const report = (...args: string[]) => execFileSync("make", ["-n", "reproduce", ...args], { cwd: dir, encoding: "utf8" }).split("\n").find((l) => l.includes(" report "))!;
    expect(/--peers (\S+)/.exec(report("PEERS=1"))?.[1].split(",")).toEqual([...peers, "iterative_budget"]);
    expect(report("PEERS=1")).toContain("--runs runs/paper/spider,runs/paper/bird,runs/paper/spider-budget,runs/paper/bird-budget,runs/paper/spider-long,runs/paper/bird-long ");
    expect(report("PEERS=1")).toContain("--conditions max_repair_steps");
    expect(report()).not.toContain("--peers");
    expect(report()).not.toContain("--conditions");
    expect(report()).toContain("--runs runs/paper/spider,runs/paper/bird ");
    expect(gridLines().some((l) => l.includes("--arm"))).toBe(false);
    // the learning curves (and order sensitivity) always (the report's default), with the peers when PEERS=1
    for (const line of [report(), report("PEERS=1")]) expect(line).not.toContain("curves");
    expect(report("PEERS=1")).toContain("--reference merit");
  });
});
