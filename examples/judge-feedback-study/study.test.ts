// Tests examples/judge-feedback-study (issue 29 §6) end to end as a user runs it (a subprocess of
// `node lib/bin.mjs`): `merit study plan` counts the judge arm's calls, and `merit study run` runs
// three grids (the oracle, dbms_only and llm_judge arms of merit) on the tiny test models, audits
// them, and writes a report that pairs the arms (they differ only in feedback_regime) with the
// feedback-confusion table and Table 2's Holm p. Runs and report go to a temp folder.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { budget } from "../../test/helpers/budget.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const STUDY = "examples/judge-feedback-study/study.ts";
const tmp = mkdtempSync(join(tmpdir(), "merit-judge-study-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const runs = join(tmp, "runs");
const results = join(tmp, "results");

function merit(...args: string[]) {
  const r = spawnSync(process.execPath, ["lib/bin.mjs", ...args], { cwd: ROOT, encoding: "utf8", timeout: budget(900_000), env: { ...process.env, NO_COLOR: "1", MERIT_THREADS: "1", NODE_LLAMA_CPP_SKIP_DOWNLOAD: "true" } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("the judge-feedback study", () => {
  it("plan counts the judge calls of the llm_judge arm", () => {
    const r = merit("study", "plan", STUDY, "--runs", runs);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("methods merit, merit_dbms_only, merit_judge");
    // merit, dbms_only: 2 repairs × 3 failed; llm_judge: every one of 4 queries may repair (2) and each of its 3 attempts is judged.
    expect(r.stdout).toMatch(/^most model calls: 32 /m);
  });

  it("run pairs the three arms, audits them and reports the feedback's confusion", () => {
    const r = merit("study", "run", STUDY, "--runs", runs, "--out", results, "--no-html");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/causal audit of 3 runs: 0 violations/);
    const config = (m: string) => JSON.parse(readFileSync(join(runs, "spider", `${m}-s0`, "config.json"), "utf8")).config;
    expect([config("merit").feedback_regime, config("merit_dbms_only").feedback_regime, config("merit_judge").feedback_regime]).toEqual(["denotation_confirmed", "dbms_only", "llm_judge"]);
    const manifest = JSON.parse(readFileSync(join(runs, "spider", "merit_judge-s0", "manifest.json"), "utf8"));
    expect(manifest.method_parts).toEqual(JSON.parse(readFileSync(join(runs, "spider", "merit-s0", "manifest.json"), "utf8")).method_parts);
    const judged = readFileSync(join(runs, "spider", "merit_judge-s0", "trajectories.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(judged.some((t: { call_kinds: string[] }) => t.call_kinds.includes("judge"))).toBe(true);
    const confusion = readFileSync(join(results, "tables", "feedback-confusion.md"), "utf8");
    expect(confusion).toMatch(/\| Spider \| merit_dbms_only \| dbms_only \|/);
    expect(confusion).toMatch(/\| Spider \| merit_judge \| llm_judge \|/);
    expect(confusion).not.toMatch(/\| merit \| denotation_confirmed/);
    const table2 = readFileSync(join(results, "tables", "table2.md"), "utf8");
    expect(table2).toContain("p (Holm)");
    expect(table2).toMatch(/^\| Spider \| MERIT vs merit_judge \| /m);
    expect(JSON.parse(readFileSync(join(results, "manifest.json"), "utf8")).table_selection.conditions).toEqual(["feedback_regime"]);
  }, budget(900_000));

  it("plan of the finished study reads its runs (the arms differ in feedback by design) and says none is left", () => {
    const r = merit("study", "plan", STUDY, "--runs", runs);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("runs: 3 (3 methods × 1 stream order × 1 dataset), all 3 already complete: none left to compute");
    expect(r.stdout).toMatch(/^\| spider \| merit vs merit_judge \| 4 \| 1 \| .*\| pilot: the study's runs /m);
  });
});
