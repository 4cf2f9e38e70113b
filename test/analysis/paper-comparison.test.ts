// Tests lib/analysis/paper-comparison.ts and data/paper-numbers.json: the transcription's own identities (arXiv 2608.05906, METHOD.md §9), a bad file is one clear error, and COMPARISON.md puts each cell next to the paper's with the difference.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { paperComparison, readPaperNumbers } from "../../lib/analysis/paper-comparison.ts";
import type { Table } from "../../lib/analysis/table.ts";
import { InputFileError } from "../../lib/errors.ts";

const dir = mkdtempSync(join(tmpdir(), "merit-paper-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const { numbers } = readPaperNumbers();

describe("data/paper-numbers.json", () => {
  it("is the paper's: its source, and the identities METHOD.md §9 lists", () => {
    expect(numbers.source).toBe("arXiv:2608.05906");
    const t3 = (dataset: string, method: string) => numbers.table3.find((r) => r.dataset === dataset && r.method === method)!;
    // Spider Iterative calls 3,619 = 1,034 + 425 × 6.082; MERIT 3,419 ≈ 1,034 + 425 × 5.611
    expect(Math.round(1034 + 425 * t3("spider", "iterative").steps)).toBe(t3("spider", "iterative").llm_calls);
    expect(Math.abs(1034 + 425 * t3("spider", "merit").steps - t3("spider", "merit").llm_calls)).toBeLessThan(2);
    // Table 5 shares add up to 100 %, and Table 4's Δ = ablation − full
    for (const r of numbers.table5) expect(r.result_mismatch_pct + r.schema_linking_pct + r.other_pct).toBeCloseTo(100, 0);
    for (const r of numbers.table4.filter((x) => x.delta !== null)) {
      const full = numbers.table4.find((x) => x.dataset === r.dataset && x.method === "merit")!;
      expect(r.ex_mean - full.ex_mean).toBeCloseTo(r.delta!, 1);
    }
    // Table 1 MERIT equals Table 4 MERIT Full
    for (const d of ["spider", "bird"]) {
      expect(numbers.table1.find((r) => r.dataset === d && r.method === "merit")!.ex_mean).toBe(numbers.table4.find((r) => r.dataset === d && r.method === "merit")!.ex_mean);
    }
  });
  it("a broken file is one error naming it", () => {
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ ...numbers, table1: [{ dataset: "spider" }] }));
    expect(() => readPaperNumbers(bad)).toThrow(InputFileError);
    expect(() => readPaperNumbers(bad)).toThrow(/bad\.json.*table1\.0\.method/);
    expect(() => readPaperNumbers(join(dir, "absent.json"))).toThrow(/absent\.json/);
  });
});

describe("paperComparison", () => {
  const table1: Table = { id: "table1", title: "", columns: [], align: [], rows: [], notes: [], data: [{ method: "merit", dataset: "spider", ex_mean: 70.5, ex_std: 0.2, seeds: 3 }] };
  const table2: Table = { ...table1, id: "table2", data: [{ dataset: "bird", reference: "merit", other: "reflexion", delta: -2.5, lo: -4, hi: -1 }] };
  const md = paperComparison([table1, table2], numbers, { labels: { spider: "Spider", bird: "BIRD", merit: "MERIT", reflexion: "Reflexion-style" } }, ["TEST MODEL — numbers are meaningless"]);
  it("kit, paper and difference per cell; — where the report has no such cell", () => {
    expect(md).toContain("| Spider | MERIT | EX mean | 70.50 | 69.79 | +0.71 |");
    expect(md).toContain("| Spider | MERIT | EX std | 0.20 | 0.59 | -0.39 |");
    expect(md).toContain("| BIRD | MERIT vs Reflexion-style | Δ | -2.50 | -2.80 | +0.30 |");
    expect(md).toContain("| BIRD | MERIT vs Reflexion-style | CI low | -4.00 | -4.15 | +0.15 |");
    expect(md).toContain("| BIRD | MERIT | EX mean | — | 48.44 | — |");
    expect(md).toContain("**TEST MODEL — numbers are meaningless**");
    expect(md).toContain("arXiv:2608.05906");
  });
});
