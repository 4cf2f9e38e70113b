// Tests the report line of the Makefile's reproduce target (issue 15 §3): --paper-numbers always, --gold-labels results/annotations/cases.csv only when that file exists (`make -n` in a copy, nothing runs).
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
