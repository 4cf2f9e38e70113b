/**
 * Tests lib/cli/study.ts end to end, as a user runs it from the clone (real subprocesses of
 * `node lib/bin.mjs`): `merit study new demo-study` writes the template, `merit study plan` prints
 * the runs, the most model calls and the power before any compute, `merit study run` builds the
 * initial cache from the bundled predictions, runs the grid on the tiny test models (the committed
 * demo call cache answers most calls), audits every run and writes the report with the study's
 * method in Tables 1–3; a second `run` computes nothing. The study folder, its runs and its report
 * are written under os.tmpdir() and removed.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { loadDataset } from "../../lib/data/index.ts";
import { budget } from "../helpers/budget.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "merit-study-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const studies = join(tmp, "studies");
const file = join(studies, "demo-study", "study.ts");
const runs = join(tmp, "runs");
const results = join(tmp, "results");

function merit(...args: string[]) {
  const r = spawnSync(process.execPath, ["lib/bin.mjs", ...args], { cwd: ROOT, encoding: "utf8", timeout: budget(480_000), env: { ...process.env, NO_COLOR: "1", MERIT_THREADS: "1", NODE_LLAMA_CPP_SKIP_DOWNLOAD: "true" } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
const table = (id: string) => readFileSync(join(results, "tables", `${id}.md`), "utf8");

describe("merit study new, plan, run on the tiny models", () => {
  it("new writes the template under the name and refuses an existing folder or a bad name", () => {
    const r = merit("study", "new", "demo-study", "--dir", studies);
    expect(r.code, r.stderr).toBe(0);
    for (const f of ["study.ts", "my-method.ts", "study.test.ts"]) expect(existsSync(join(studies, "demo-study", f))).toBe(true);
    expect(readFileSync(file, "utf8")).toContain('name: "demo-study",');
    const again = merit("study", "new", "demo-study", "--dir", studies);
    expect(again.code).toBe(2);
    expect(again.stderr.trim().split("\n")).toHaveLength(1);
    expect(again.stderr).toMatch(/already exists; choose another NAME or delete the folder/);
    expect(merit("study", "new", "Bad Name", "--dir", studies).stderr).toMatch(/study name "Bad Name": use lower-case letters/);
  });

  it("plan says what will run and what each comparison can detect, before any compute", () => {
    const r = merit("study", "plan", file, "--runs", runs, "--target", "5");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("runs: 3 (3 methods × 1 stream order × 1 dataset), 0 already complete");
    expect(r.stdout).toContain("spider: 6 queries per stream, at most 5 initially failed (the initial cache is not built yet)");
    // iterative, merit, my_method: K = 7 repairs for each of at most 5 initially failed queries
    expect(r.stdout).toMatch(/^most model calls: 105 /m);
    expect(r.stdout).toMatch(/^estimated time: at most ~\d+ s \(assumed 0\.5 s per call/m);
    expect(r.stdout).toMatch(/^\| spider \| my_method vs merit \| 6 \| 1 \| \d+\.\d\d \| [\d,]+ \| needs a pilot \| paper Table 2, /m);
    expect(existsSync(runs)).toBe(false);
  });

  it("run builds the initial cache, runs the grid, audits it and reports the study's method in Tables 1-3", () => {
    const r = merit("study", "run", file, "--runs", runs, "--out", results, "--no-html");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("study: spider: 3 runs, 0 already complete, 3 to run");
    expect(r.stderr).toContain("study: causal audit of 3 runs: 0 violations");
    expect(table("table1")).toMatch(/^\| Spider \| my_method \| /m);
    expect(table("table1")).toMatch(/^\| Spider \| MERIT \| /m);
    expect(table("table2")).toMatch(/^\| Spider \| my_method vs Iterative \| /m);
    expect(table("table2")).toMatch(/^\| Spider \| my_method vs MERIT \| /m);
    expect(table("table3")).toMatch(/^\| Spider \| my_method \| /m);
    const manifest = JSON.parse(readFileSync(join(results, "manifest.json"), "utf8"));
    expect(manifest.table_selection).toEqual({ all_methods: false, all_comparisons: false, methods: ["iterative", "merit", "my_method"], comparisons: ["my_method:iterative", "my_method:merit"] });
  }, budget(600_000));

  it("a second run computes nothing, and plan then reads the initial cache and the finished runs", () => {
    const r = merit("study", "run", file, "--runs", runs, "--out", results, "--no-html");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("study: spider: 3 runs, 3 already complete, 0 to run");
    expect(r.stderr).not.toMatch(/^LLM calls:/m);
    const plan = merit("study", "plan", file, "--runs", runs);
    expect(plan.stdout).toContain("3 already complete");
    expect(plan.stdout).toMatch(/spider: 6 queries per stream, \d initially failed \(from the initial cache\)/);
    expect(plan.stdout).toContain("estimated time: no model call left to compute");
    // the finished runs are the pilot; their outcomes are identical, so the paper's variance stays
    expect(plan.stdout).toMatch(/\| spider \| my_method vs merit \| 6 \| 1 \| .*\(the pilot shows identical outcomes, so no variance: the paper's is used\)/);
    // a shard runs only its streams (i, i+n, ...) and stops before the audit and the report
    const shard = merit("study", "run", file, "--runs", runs, "--out", results, "--shard", "0/2");
    expect(shard.code, shard.stderr).toBe(0);
    expect(shard.stderr).toContain("study: spider: 2 runs (shard 0/2 of 3), 2 already complete, 0 to run");
    expect(shard.stdout).toMatch(/shard 0\/2 done; .*rerun without --shard for the audit and the report/);
    expect(shard.stderr).not.toContain("causal audit");
  }, budget(600_000));

  it("a causal violation stops the run before the report, with exit 1", async () => {
    // plant the gold SQL of a query into its own first repair prompt (as test/experiment/audit.test.ts does)
    const prompts = join(runs, "spider", "iterative-s0", "prompts.jsonl");
    const lines = readFileSync(prompts, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as { kind: string; query_id: string; prompt: string });
    const first = lines.find((l) => l.kind === "repair")!;
    const dataset = await loadDataset({ name: "spider", dir: join(ROOT, "data", "spider") });
    first.prompt = first.prompt.replace("LOCAL ATTEMPT HISTORY:\n", `LOCAL ATTEMPT HISTORY:\n${dataset.examples.find((e) => e.id === first.query_id)!.goldSql}\n`);
    writeFileSync(prompts, lines.map((l) => JSON.stringify(l) + "\n").join(""));
    rmSync(results, { recursive: true, force: true });
    const r = merit("study", "run", file, "--runs", runs, "--out", results, "--no-html");
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^audit .*iterative-s0: gold-sql\tquery /m);
    expect(r.stderr).toMatch(/^study demo-study: the causal audit found 1 violations \(listed above\); the report is not written$/m);
    expect(existsSync(results)).toBe(false);
  }, budget(600_000));
});
