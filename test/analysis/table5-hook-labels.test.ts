// Tests Table 5 beside a method's classify hook (issue 39 §8): runs that share an initial cache pair
// whatever labels their classifiers give the same initial failures. Table 5 gives each classifier its
// row (named by its methods) and the hook's labels columns of their own in the Markdown — they used to
// fall under Other beside a Result Mismatch of 0.00, and `merit report` refused merit beside the
// shipped merit_fine_types with "the runs do not share one initial cache". Runs whose initial
// failures differ are still refused, naming the failures.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { summarizeRun } from "../../lib/analysis/run-summary.ts";
import { renderCsv, renderMarkdown } from "../../lib/analysis/table.ts";
import { failureTable } from "../../lib/analysis/tables.ts";
import { reportCommand } from "../../lib/cli/report.ts";
import type { Trajectory } from "../../lib/repair/trajectory.ts";
import { writeRunDir } from "../cli/run-dir-fixture.ts";
import { buildTrajectory, repairTrajectory } from "./build-trajectory.ts";

/** q0 correct; q1–q3 executed wrongly, q4 a schema-linking error; `fine` relabels the wrong answers. */
function trajectories(method: string, seed: number, fine: boolean): Trajectory[] {
  const mismatch = ["Mismatch: join", "Mismatch: filter", "Mismatch: join"];
  return [
    buildTrajectory({ query_id: "0", attempts: ["SELECT 0"], statuses: ["CORRECT"], method, stream_seed: seed }),
    ...[1, 2, 3].map((q) => {
      const t = repairTrajectory(String(q), 1, q !== 3, { method, stream_seed: seed });
      const later = t.error_types.slice(1).map((e) => (fine && e === "Result Mismatch" ? "Mismatch: projection" : e));
      return { ...t, error_types: [fine ? mismatch[q - 1] : "Result Mismatch", ...later] };
    }),
    (() => {
      const t = repairTrajectory("4", 1, false, { method, stream_seed: seed });
      const later = t.error_types.slice(1).map((e) => (fine && e === "Result Mismatch" ? "Mismatch: projection" : e));
      return { ...t, attempts: ["SELECT nope FROM t4", ...t.attempts.slice(1)], statuses: ["EXECUTION_ERROR" as const, ...t.statuses.slice(1)], error_types: ["Schema Linking", ...later] };
    })(),
  ];
}

const runs = [0, 1].flatMap((s) => [summarizeRun(trajectories("merit", s, false)), summarizeRun(trajectories("iterative", s, false)), summarizeRun(trajectories("merit_fine_types", s, true))]);

describe("Table 5 with a classify hook's labels", () => {
  it("one row per classifier, the hook's labels in columns of their own, — where a classifier has no such label", () => {
    const t = failureTable(runs, { labels: { spider: "Spider", merit_fine_types: "MERIT fine types" }, paperLayout: true });
    const md = renderMarkdown(t).split("\n");
    expect(md[2]).toBe("| Dataset | Result Mismatch | Schema Linking | Mismatch: filter | Mismatch: join | Other | Acc. (%) | Macro-F1 |");
    expect(md[4]).toBe("| Spider | 75.00 | 25.00 | — | — | 0.00 | — | — |");
    expect(md[5]).toBe("| Spider: MERIT fine types | — | 25.00 | 25.00 | 50.00 | 0.00 | — | — |");
    expect(t.notes.join(" ")).toMatch(/Labels of a method's classify hook \(Mismatch: filter, Mismatch: join\) are not METHOD\.md §3's types and have columns of their own/);
    // the CSV keeps the counts per label, and each row's data names its methods
    expect(renderCsv(t).split("\n")[2]).toBe("Spider: MERIT fine types,—,25.00,25.00,50.00,0.00,—,—,4,—,1,0,1,2");
    expect(t.data.filter((d) => d.error_type === "Mismatch: join").map((d) => `${d.methods} ${d.count}`)).toEqual(["iterative, merit 0", "merit_fine_types 2"]);
  });

  it("one classifier: the table as before (one row per dataset, no methods named)", () => {
    const t = failureTable(runs.filter((r) => r.method !== "merit_fine_types"), { labels: { spider: "Spider" }, paperLayout: true });
    expect(renderMarkdown(t).split("\n").slice(2, 5)).toEqual(["| Dataset | Result Mismatch | Schema Linking | Other | Acc. (%) | Macro-F1 |", "|:---|---:|---:|---:|---:|---:|", "| Spider | 75.00 | 25.00 | 0.00 | — | — |"]);
    expect(t.data.some((d) => "methods" in d)).toBe(false);
  });

  it("runs whose initial failures differ are refused, naming the failures", () => {
    const other = summarizeRun(trajectories("odd", 0, false).map((t, i) => (i === 1 ? { ...t, attempts: ["SELECT else", ...t.attempts.slice(1)] } : t)));
    expect(() => failureTable([...runs, other])).toThrow(/on spider, \(odd, seed 0\) has 4 initial failures but \(iterative, seed 0\) has 4 \(first difference: query 1\); the runs do not share one initial cache/);
  });
});

describe("merit report: merit beside merit_fine_types (examples/error-taxonomy.ts)", () => {
  const root = mkdtempSync(join(tmpdir(), "merit-table5-hook-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  it("exit 0; Table 5 shows the fine labels under their own columns", async () => {
    await import("../../examples/error-taxonomy.ts"); // registered, so the fixture writes its retrieval log
    for (const [method, fine] of [["merit", false], ["merit_fine_types", true]] as const) {
      for (const seed of [0, 1]) writeRunDir(join(root, "runs", `${method}-${seed}`), trajectories(method, seed, fine));
    }
    const dest = join(root, "report");
    const quiet = { out: () => undefined, err: () => undefined };
    expect(await reportCommand.run([join(root, "runs"), "--out", dest, "--resamples", "50", "--no-figures", "--no-curves", "--plugin", "examples/error-taxonomy.ts"], quiet)).toBe(0);
    const md = readFileSync(join(dest, "tables", "table5.md"), "utf8").split("\n");
    expect(md[2]).toBe("| Dataset | Result Mismatch | Schema Linking | Mismatch: filter | Mismatch: join | Other | Acc. (%) | Macro-F1 |");
    expect(md[5]).toMatch(/^\| Spider: merit_fine_types \| — \| 25\.00 \| 25\.00 \| 50\.00 \| 0\.00 \|/);
    // --methods leaving the hook's method out: no row and no column of its labels (issue 39 §3)
    const only = join(root, "report-merit");
    expect(await reportCommand.run([join(root, "runs"), "--out", only, "--resamples", "50", "--no-figures", "--no-curves", "--methods", "merit", "--plugin", "examples/error-taxonomy.ts"], quiet)).toBe(0);
    expect(readFileSync(join(only, "tables", "table5.md"), "utf8").split("\n").slice(2, 5)).toEqual(["| Dataset | Result Mismatch | Schema Linking | Other | Acc. (%) | Macro-F1 |", "|:---|---:|---:|---:|---:|---:|", "| Spider | 75.00 | 25.00 | 0.00 | — | — |"]);
  });
});
