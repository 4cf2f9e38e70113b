// Tests `merit report --methods` and `--comparisons` (lib/analysis/study-layout.ts): exactly the
// named methods in Tables 1 and 3, Table 2 as the named pairs with the uninformative words, the
// manifest's table_selection, and the one-line refusals.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseComparisonPairs } from "../../lib/analysis/study-layout.ts";
import { reportCommand } from "../../lib/cli/report.ts";
import { buildTrajectory, repairTrajectory } from "../analysis/build-trajectory.ts";
import { writeRunDir } from "./run-dir-fixture.ts";

const root = mkdtempSync(join(tmpdir(), "merit-report-study-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// spider, 3 queries, seed 0: my_method and merit repair q1 and q2, iterative only q1, dynamic_rag none
const repaired: Record<string, string[]> = { my_method: ["1", "2"], merit: ["1", "2"], iterative: ["1"], dynamic_rag: [] };
for (const [method, fixed] of Object.entries(repaired)) {
  const trajectories = [
    buildTrajectory({ query_id: "0", attempts: ["SELECT 0"], statuses: ["CORRECT"], method, stream_seed: 0 }),
    ...["1", "2"].map((q) => (fixed.includes(q) ? repairTrajectory(q, 1, true, { method, stream_seed: 0 }) : repairTrajectory(q, 7, false, { method, stream_seed: 0 }))),
  ];
  writeRunDir(join(root, "runs", `${method}-s0`), trajectories);
}
const sink = { out: () => undefined, err: () => undefined };
const read = (dest: string, file: string) => readFileSync(join(dest, file), "utf8");

describe("merit report --methods --comparisons", () => {
  it("shows exactly the named methods in order and the named pairs in Table 2", async () => {
    const dest = join(root, "study");
    const argv = [join(root, "runs"), "--out", dest, "--resamples", "200", "--no-figures", "--methods", "merit,my_method,iterative", "--comparisons", "my_method:merit,my_method:iterative"];
    expect(await reportCommand.run(argv, sink)).toBe(0);
    expect(read(dest, "tables/table1.csv")).toBe("Dataset,Method,EX (%)\nSpider,MERIT,100.00\nSpider,my_method,100.00\nSpider,Iterative,66.67\n");
    expect(read(dest, "tables/table3.csv").split("\n").slice(1, 4).map((l) => l.split(",")[1])).toEqual(["MERIT", "my_method", "Iterative"]);
    const t2 = read(dest, "tables/table2.md");
    expect(t2.split("\n")[0]).toBe("**Difference in EX (pp) of each comparison (my_method vs MERIT, my_method vs Iterative; Δ = first − second)**");
    expect(t2).toMatch(/^\| Spider \| my_method vs MERIT \| 0\.00 \| \[0\.00, 0\.00\] \| 1\.0000 \| 1\.0000 \| 0\.00 \|$/m); // p (bootstrap), p (Holm over the study's pairs)
    expect(t2).toMatch(/^\| Dataset \| Comparison \| Δ EX \(pp\) \| 95% CI \| p \(bootstrap\) \| p \(Holm\) \| MDE \(pp\) \|$/m);
    expect(t2).toMatch(/^\| Spider \| my_method vs Iterative \| \+33\.33 \| /m);
    expect(t2).toContain("_Uninformative — my_method vs MERIT on Spider: identical outcomes on all 3 paired queries × 1 stream order:");
    expect(t2).toMatch(/_Uninformative — my_method vs Iterative on Spider: underpowered: with 3 paired queries × 1 stream order the MDE \d+\.\d\d pp exceeds \\\|Δ\\\| = 33\.33 pp/);
    expect(JSON.parse(read(dest, "manifest.json")).table_selection).toEqual({ all_methods: false, all_comparisons: false, methods: ["merit", "my_method", "iterative"], comparisons: ["my_method:merit", "my_method:iterative"] });
  });

  it("without them, the paper's layout: the paper's methods first, my_method after them (issue 39 §3: was left out)", async () => {
    const dest = join(root, "paper");
    expect(await reportCommand.run([join(root, "runs"), "--out", dest, "--resamples", "200", "--no-figures"], sink)).toBe(0);
    expect(read(dest, "tables/table1.csv").trim().split("\n").slice(1).map((l) => l.split(",")[1])).toEqual(["Iterative", "Dyn. RAG", "MERIT", "my_method"]);
    expect(read(dest, "tables/table3.csv")).toContain("my_method");
  });

  it("refuses an unknown method, a bad pair, and flags they replace, in one line", async () => {
    const run = (...flags: string[]) => reportCommand.run([join(root, "runs"), "--out", join(root, "bad"), ...flags], sink);
    await expect(run("--methods", "merit,my_methd")).rejects.toThrow(/--methods: no run of method "my_methd" \(did you mean "my_method"\?\)/);
    await expect(run("--comparisons", "my_method")).rejects.toThrow(/--comparisons: "my_method" is not a pair a:b/);
    await expect(run("--comparisons", "my_method:merit", "--reference", "merit")).rejects.toThrow(/drop --reference and --all-comparisons/);
    await expect(run("--methods", "merit", "--all-methods")).rejects.toThrow(/pass --methods or --all-methods, not both/);
    expect(parseComparisonPairs("a:b, c : d")).toEqual([["a", "b"], ["c", "d"]]);
  });
});
