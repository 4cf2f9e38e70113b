// Tests `merit study run --diagnostics` (issue 39 §13: study run had no --diagnostics): the study's
// report gains the memory diagnostics `merit report --diagnostics` writes (tables/memory-utility.*,
// figures/memory-size.*); a --shard run, which writes no report, refuses the flag in one line.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import { studyReportArgs } from "../../lib/cli/study.ts";
import { defineStudy } from "../../lib/experiment/study.ts";
import { budget } from "../helpers/budget.ts";

const tmp = mkdtempSync(join(tmpdir(), "merit-study-diagnostics-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function merit(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

describe("merit study run --diagnostics", () => {
  it("with --shard: one line, exit 2, nothing run", async () => {
    const r = await merit(["study", "run", "studies/template/study.ts", "--shard", "1/2", "--diagnostics", "--runs", join(tmp, "shard-runs")]);
    expect(r.code).toBe(2);
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toMatch(/--diagnostics adds to the report, which a --shard run does not write/);
    expect(existsSync(join(tmp, "shard-runs"))).toBe(false);
  });

  it("the report command line of a study carries --diagnostics when asked", () => {
    const study = defineStudy({ name: "diag", datasets: ["spider"], methods: ["iterative", "merit"], seeds: [0], reference: "merit", queries: 6 });
    expect(studyReportArgs(study, ["runs/spider"], "out", true, true).at(-1)).toBe("--diagnostics");
    expect(studyReportArgs(study, ["runs/spider"], "out", true)).not.toContain("--diagnostics");
  });

  it("the study's report holds the memory diagnostics", async () => {
    const results = join(tmp, "results");
    const r = await merit(["study", "run", "studies/template/study.ts", "--runs", join(tmp, "runs"), "--out", results, "--no-html", "--diagnostics"]);
    expect(r.code, r.err.slice(-5).join("\n")).toBe(0);
    expect(existsSync(join(results, "tables", "memory-utility.md"))).toBe(true);
    expect(existsSync(join(results, "figures", "memory-size.svg"))).toBe(true);
    // issue 39 §13: the saved config carries the study's queries, so `merit grid --config` on it plans the study's streams
    expect(JSON.parse(readFileSync(join(tmp, "runs", "configs", "spider.json"), "utf8")).limit).toBe(6);
  }, budget(300_000));
});
