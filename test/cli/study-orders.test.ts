// A study file with a structured order and the equal-budget control, end to end on the tiny models
// (issue 37 §4; issue 39 #14): `merit study run --initial-only` builds only the initial cache, the
// plan counts the runs of every order, `merit study run` runs each order into its own folder and
// writes one report per order whose every table note and manifest name the order and the database
// set, and the study's peers table holds its control with the Holm family in the note.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { budget } from "../helpers/budget.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "merit-study-orders-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const file = join(tmp, "study.ts");
const runs = join(tmp, "runs");
const out = join(tmp, "out");
writeFileSync(join(tmp, "package.json"), '{"type":"module"}\n');
writeFileSync(
  file,
  `import { defineStudy } from ${JSON.stringify(pathToFileURL(join(ROOT, "lib", "experiment", "study.ts")).href)};
export default defineStudy({
  name: "orders-e2e",
  methods: ["iterative", "merit", "reasoning_bank", "iterative_budget_e2e"],
  arms: { iterative_budget_e2e: { method: "iterative", max_repair_steps: 3 } },
  orders: [0, "by_database"],
  reference: "merit",
  queries: 3,
  subset: { rule: "initially_failed", initially_correct: 1 },
  max_repair_steps: 1,
});
`,
);

function merit(...args: string[]) {
  const r = spawnSync(process.execPath, ["lib/bin.mjs", ...args], { cwd: ROOT, encoding: "utf8", timeout: budget(600_000), env: { ...process.env, NO_COLOR: "1", MERIT_THREADS: "1", NODE_LLAMA_CPP_SKIP_DOWNLOAD: "true" } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("a study with orders and an equal-budget control", () => {
  it("--initial-only builds the initial cache and nothing else; the plan counts every order's runs and names the database set", () => {
    const r = merit("study", "run", file, "--runs", runs, "--out", out, "--initial-only");
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(runs, "initial", "spider.json"))).toBe(true);
    expect(readdirSync(runs).sort()).toEqual(["configs", "initial", "llm-call-cache.sqlite"]);
    expect(r.stderr).toMatch(/the initial caches are built .*; run `merit study run` without --initial-only for the grid/);
    const plan = merit("study", "plan", file, "--runs", runs);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain("stream orders the paper's shuffle, seed 0; by_database (seed 0) (each structured order reported apart");
    expect(plan.stdout).toContain("databases: spider on its single databases (one per db_id; not the paper's test-suite EX; the tiny test models' default, as merit demo)");
    expect(plan.stdout).toContain("runs: 8 (4 methods × 2 stream orders × 1 dataset), 0 already complete");
  });

  it("run: one report per order, each table note and manifest naming its order and database set; the peers table holds the control", () => {
    const r = merit("study", "run", file, "--runs", runs, "--out", out, "--no-html");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("study: spider, order by_database: 4 runs, 0 already complete, 4 to run");
    expect(r.stderr).toContain("study: causal audit of 8 runs: 0 violations");
    expect(r.stdout).toContain(`the report over the by_database stream order: ${join(out, "order-by_database")}`);
    expect(JSON.parse(readFileSync(join(runs, "order-by_database", "spider", "merit-s0", "config.json"), "utf8")).config.order).toBe("by_database");
    for (const [dir, order] of [[out, "Stream orders: the paper's seeded shuffle (config order random), seed 0."], [join(out, "order-by_database"), "Stream order: by_database (config order; METHOD.md §7), seed 0: every number here is over this order only, not over the paper's shuffled orders."]] as const) {
      for (const table of readdirSync(join(dir, "tables")).filter((f) => f.endsWith(".md"))) {
        const text = readFileSync(join(dir, "tables", table), "utf8");
        expect(text, `${dir} ${table}`).toContain(`_${order}_`);
        expect(text, `${dir} ${table}`).toContain("_Databases: spider scored on its single databases, one per db_id (not the paper's test-suite EX)._");
      }
    }
    expect(JSON.parse(readFileSync(join(out, "order-by_database", "manifest.json"), "utf8")).setting).toEqual({ stream_order: "by_database", seeds: [0], database_sets: { spider: "single" } });
    expect(JSON.parse(readFileSync(join(out, "manifest.json"), "utf8")).setting.stream_order).toBe("random");
    const peers = readFileSync(join(out, "tables", "peers.md"), "utf8");
    expect(peers).toMatch(/^\| Spider \| iterative_budget_e2e \| /m);
    expect(peers).toContain("_Holm families per dataset: Spider: 2 comparisons with MERIT (reasoning_bank, iterative_budget_e2e); Spider: 3 comparisons with Iterative (MERIT, reasoning_bank, iterative_budget_e2e)._");
    const plan = merit("study", "plan", file, "--runs", runs);
    expect(plan.stdout).toContain("runs: 8 (4 methods × 2 stream orders × 1 dataset), all 8 already complete: none left to compute");
  }, budget(900_000));
});
