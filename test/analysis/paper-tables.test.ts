// Tests the paper's table style of lib/analysis (issue 20 §7, §8, §10): difference() and "0.00", paperLayout in tables.ts / table-ablation.ts / table-failures.ts (row blocks, bold/underline per dataset, the paper's names), the population-weighted classifier accuracy (classifier-validation.ts) and COMPARISON.md's 130 cells.
import { describe, expect, it } from "vitest";
import { classifierValidation, type AnnotationRow } from "../../lib/analysis/classifier-validation.ts";
import { difference, differenceInterval, signed } from "../../lib/analysis/number-format.ts";
import { paperComparison, readPaperNumbers } from "../../lib/analysis/paper-comparison.ts";
import { datasetTitles, paperAblationSelection, paperSelection, paperTableSelection } from "../../lib/analysis/paper-layout.ts";
import { registerDataset } from "../../lib/data/datasets/index.ts";
import { spider } from "../../lib/data/datasets/spider.ts";
import { summarizeRun, type RunSummary } from "../../lib/analysis/run-summary.ts";
import { renderCsv, renderLatex, renderMarkdown } from "../../lib/analysis/table.ts";
import { ablationTable, comparisonTable, exTable, failureTable, repairTable } from "../../lib/analysis/tables.ts";
import type { ErrorType } from "../../lib/repair/trajectory.ts";
import { buildTrajectory, repairTrajectory } from "./build-trajectory.ts";

describe("difference: the paper's sign convention", () => {
  it("zero (as shown) prints unsigned, other values keep their sign", () => {
    expect(difference(0, 2)).toBe("0.00");
    expect(difference(-0.004, 2)).toBe("0.00");
    expect(difference(0.004, 2)).toBe("0.00");
    expect(difference(0.58, 2)).toBe("+0.58");
    expect(difference(-2.74, 2)).toBe("-2.74");
    expect(differenceInterval(0, 2.17, 2)).toBe("[0.00, +2.17]");
    expect(signed(0, 2)).toBe("+0.00"); // the kit's own tables are unchanged
  });
});

/**
 * Spider, 6 queries: q0, q1 initially correct; q2–q5 initial failures (q2 Syntax, q3–q5 Result
 * Mismatch). Finally correct per method (every seed alike, except merit seed 2 loses q5):
 * iterative q2; dynamic_rag q2, q3; merit q2, q3, q4 (q5 on seeds 0, 1); no_bm25 q2, q3, q4, q5.
 */
const FIXED: Record<string, number[]> = { iterative: [2], dynamic_rag: [2, 3], merit: [2, 3, 4, 5], no_bm25: [2, 3, 4, 5] };
function run(method: string, seed: number, dataset = "spider"): RunSummary {
  return summarizeRun(
    [0, 1, 2, 3, 4, 5].map((q) => {
      const common = { dataset, method, stream_seed: seed };
      if (q < 2) return buildTrajectory({ query_id: String(q), attempts: [`SELECT ${q}`], statuses: ["CORRECT"], ...common });
      const repaired = FIXED[method].includes(q) && !(method === "merit" && seed === 2 && q === 5);
      const type: ErrorType = q === 2 ? "Syntax" : "Result Mismatch";
      const t = repairTrajectory(String(q), repaired ? 1 + (q % 2) : 7, repaired, common);
      return { ...t, error_types: [type, ...t.error_types.slice(1)] };
    }),
  );
}
const runs = ["iterative", "dynamic_rag", "merit", "no_bm25"].flatMap((m) => [0, 1, 2].flatMap((s) => [run(m, s), run(m, s, "bird")]));
// the paper's methods only (issue 39 §3: a report shows every method of its runs, so leave no_bm25 out here)
const sel = paperTableSelection(runs.filter((r) => r.method !== "no_bm25"));

describe("paperTableSelection: the report's tables in the paper's names and style", () => {
  it("Dyn. RAG in the tables, Dynamic RAG kept for figures; --labels still win", () => {
    expect(sel.labels?.dynamic_rag).toBe("Dyn. RAG");
    expect(sel.paperLayout).toBe(true);
    expect(paperSelection(runs).labels?.dynamic_rag).toBe("Dynamic RAG");
    expect(paperTableSelection(runs, { labels: { dynamic_rag: "DynRAG" } }).labels?.dynamic_rag).toBe("DynRAG");
    expect(paperAblationSelection(sel, "merit").labels?.merit).toBe("MERIT Full");
    expect(paperAblationSelection(sel, "merit", { merit: "Ours" })).toBe(sel);
    expect(paperAblationSelection(sel, "dynamic_rag")).toBe(sel);
  });
});

describe("Table 1 in dataset row blocks", () => {
  const t = exTable(runs, sel);
  it("Dataset | Method | EX, one block per dataset in the paper's order, marks within each block", () => {
    // EX: iterative 3/6 = 50; dynamic_rag 4/6 = 66.67; merit 6/6, 6/6, 5/6 → 94.44 ± 9.62
    expect(renderMarkdown(t).split("\n").slice(2, 12)).toEqual([
      "| Dataset | Method | EX (%) |",
      "|:---|:---|---:|",
      "| Spider | Iterative | 50.00 ± 0.00 |",
      "| Spider | Dyn. RAG | <u>66.67 ± 0.00</u> |",
      "| Spider | MERIT | **94.44 ± 9.62** |",
      "| BIRD | Iterative | 50.00 ± 0.00 |",
      "| BIRD | Dyn. RAG | <u>66.67 ± 0.00</u> |",
      "| BIRD | MERIT | **94.44 ± 9.62** |",
      "",
      "_Mean ± sample standard deviation (n − 1) over stream seeds 0, 1, 2; per dataset, best in bold, second underlined._",
    ]);
    expect(renderCsv(t).split("\n")[3]).toBe("Spider,MERIT,94.44 ± 9.62");
    expect(t.data).toHaveLength(6);
  });
  it("the extras follow a rule in every block (by default, as with --all-methods) and are not ranked: the marks rank the paper's methods", () => {
    expect(paperTableSelection(runs)).toEqual(paperTableSelection(runs, { allMethods: true }));
    const all = exTable(runs, paperTableSelection(runs));
    const md = renderMarkdown(all).split("\n");
    expect(md[5]).toBe("| Spider | Dyn. RAG | <u>66.67 ± 0.00</u> |");
    expect(md[7]).toBe("| — | — | — |");
    expect(md[8]).toBe("| Spider | No BM25 | 100.00 ± 0.00 |");
    expect(md[6]).toBe("| Spider | MERIT | **94.44 ± 9.62** |");
    expect(all.rulesBefore).toEqual([3, 7]);
    expect(all.notes.join(" ")).toContain("among the paper's methods (above the rule");
    expect(renderLatex(all)).toContain("Spider & MERIT & \\textbf{94.44 $\\pm$ 9.62} \\\\\n\\midrule\nSpider & No BM25 & 100.00 $\\pm$ 0.00 \\\\");
  });
});

describe("Table 3: best bold, second underlined per dataset and column", () => {
  const t = repairTable(runs, sel);
  it("Rep. highest; Steps, Osc., Tok., Calls lowest", () => {
    const spider = t.rows.slice(0, 3);
    const marks = (col: number) => spider.map((r) => (r[col].bold ? "bold" : r[col].underline ? "under" : ""));
    expect(marks(2)).toEqual(["", "under", "bold"]); // Rep. 1, 2, 3.67
    expect(marks(3)).toEqual(["", "under", "bold"]); // Steps: fewer generations for more repairs
    expect(marks(6)).toEqual(["", "under", "bold"]); // Calls
    expect(t.notes.join(" ")).toContain("Per dataset, best in bold, second underlined");
    expect(repairTable(runs, { labels: sel.labels }).rows.flat().some((c) => c.bold || c.underline)).toBe(false); // the kit's layout: no marks
  });
});

describe("Table 2 and Table 4 in the paper's style", () => {
  it("a zero Δ and a zero bound print 0.00", () => {
    const t2 = comparisonTable(runs, { ...sel, reference: "merit", others: ["iterative"], datasets: ["spider"], resamples: 200 });
    // merit vs iterative: Δ = (3 + 3 + 2)/18 = 44.44 pp keeps its sign
    expect(t2.rows[0][2].text).toBe("+44.44");
    const same = comparisonTable([...runs, ...[0, 1, 2].map((s) => ({ ...run("dynamic_rag", s), method: "dyn_copy" }))], { ...sel, reference: "dynamic_rag", others: ["dyn_copy"], datasets: ["spider"], resamples: 200 });
    expect(same.rows[0].slice(1, 4).map((c) => c.text)).toEqual(["Dyn. RAG vs dyn_copy", "0.00", "[0.00, 0.00]"]);
  });
  it("Table 4: MERIT Full, best EX bold and second underlined per dataset, Δ unsigned at zero", () => {
    const t4 = ablationTable(runs, { ...paperAblationSelection(sel, "merit"), full: "merit", ablations: ["no_bm25", "dynamic_rag"], resamples: 200 });
    const md = renderMarkdown(t4).split("\n");
    expect(md[2]).toBe("| Method | Spider EX | Spider Δ | Spider 95% CI | Spider p | Spider p (Holm) | BIRD EX | BIRD Δ | BIRD 95% CI | BIRD p | BIRD p (Holm) |");
    expect(md[4]).toMatch(/^\| MERIT Full \| <u>94\.44 ± 9\.62<\/u> \| — \|/);
    expect(md[5]).toMatch(/^\| No BM25 \| \*\*100\.00 ± 0\.00\*\* \| \+5\.56 \| \[0\.00, \+16\.67\] \|/);
    expect(md[6]).toMatch(/^\| Dyn\. RAG \| 66\.67 ± 0\.00 \| -27\.78 \|/);
    expect(t4.notes.join(" ")).toContain("the best EX in bold");
  });
});

describe("Table 5: population-weighted accuracy", () => {
  // 20 initial failures: 10 Result Mismatch, 5 Schema Linking, 5 Syntax (q0–q19); q20–q21 initially correct.
  const typeOf = (q: number): ErrorType => (q < 10 ? "Result Mismatch" : q < 15 ? "Schema Linking" : "Syntax");
  const trajectories = Array.from({ length: 22 }, (_, q) => ({ query_id: String(q), db_id: "db", initial_correct: q >= 20, error_types: q >= 20 ? [null] : [typeOf(q)] }));
  const row = (q: number, gold: string, annotator = "a"): AnnotationRow => ({ query_id: String(q), db_id: "db", predicted_sql: "", error_message: "", predicted_type: typeOf(q), gold_type: gold, annotator_id: annotator });
  // Result Mismatch: q0 right, q1 wrong → ½; Schema Linking: q10–q13 all right → 1; Syntax: none sampled
  const rows = [row(0, "Result Mismatch"), row(1, "Syntax"), row(10, "Schema Linking"), row(11, "Schema Linking"), row(12, "Schema Linking"), row(13, "Schema Linking"), row(0, "Result Mismatch", "b"), row(10, "Schema Linking", "b")];
  const v = classifierValidation(rows, trajectories, { minCases: 6, maxCases: 6, minDoubleAnnotated: 2 });
  it("each stratum's accuracy weighted by its share of all initial failures, over the sampled strata", () => {
    expect(v.accuracy).toBeCloseTo(5 / 6, 15); // plain: 5 of 6 right
    // weighted over Result Mismatch (10) and Schema Linking (5): (10 · ½ + 5 · 1) / 15 = 2/3
    expect(v.weighting).toEqual({
      population: 20,
      strata: [
        { type: "Schema Linking", population: 5, cases: 4, correct: 4 },
        { type: "Syntax", population: 5, cases: 0, correct: 0 },
        { type: "Result Mismatch", population: 10, cases: 2, correct: 1 },
      ],
      accuracy: 10 / 15,
      covered_share: 0.75,
      type_mismatches: 0,
    });
    expect(classifierValidation(rows, trajectories.map(({ error_types: _, ...t }) => t), { minCases: 6, maxCases: 6, minDoubleAnnotated: 2 }).weighting).toBeUndefined();
  });
  it("the paper's layout shows the weighted Acc., the plain one beside it, and notes the unsampled stratum", () => {
    const runs5 = [summarizeRun(trajectories.map((t, q) => ({ ...repairTrajectory(t.query_id, 7, false, { dataset: "spider", method: "merit", stream_seed: 0 }), ...(t.initial_correct ? { initial_correct: true } : {}), error_types: [t.error_types[0], ...Array(7).fill("Result Mismatch")] })).map((t, q) => (q >= 20 ? buildTrajectory({ query_id: String(q), attempts: ["SELECT 1"], statuses: ["CORRECT"], dataset: "spider", method: "merit", stream_seed: 0 }) : t)))];
    const t = failureTable(runs5, { ...paperTableSelection(runs5), validation: { spider: v }, minGoldLabels: 6 });
    const md = renderMarkdown(t).split("\n");
    expect(md[2]).toBe("| Dataset | Result Mismatch | Schema Linking | Other | Acc. (%) | Macro-F1 | Acc., plain (%) |");
    expect(md[4]).toMatch(/^\| Spider \| 50\.00 \| 25\.00 \| 25\.00 \| 66\.67 \| \d\.\d{3} \| 83\.33 \|$/);
    expect(t.notes.join("\n")).toContain("Spider: no annotated case of Syntax (25.00%) of the initial failures; the weighted Acc. is over the other types (75.00% of the initial failures).");
    expect(t.data.find((r) => r.error_type === null)).toMatchObject({ accuracy: 5 / 6, weighted_accuracy: 10 / 15, weighted_covered_share: 0.75 });
    // without gold labels the paper's layout has no plain column either
    expect(failureTable(runs5, paperTableSelection(runs5)).columns.slice(4, 7)).toEqual(["Acc. (%)", "Macro-F1", "Initial failures"]);
    // without paperLayout the kit's table is as before: the plain accuracy, no extra column
    const kit = failureTable(runs5, { validation: { spider: v } });
    expect(kit.columns.slice(4, 7)).toEqual(["Acc. (%)", "Macro-F1", "Initial failures"]);
    expect(kit.rows[0][4].text).toBe("83.33");
  });
});

describe("COMPARISON.md: every one of the paper's 130 numbers", () => {
  it("Table 4's ± std cells included (14), each with kit, paper and difference", () => {
    const { numbers } = readPaperNumbers();
    const md = paperComparison([], numbers);
    expect(md.split("\n").filter((l) => /^\| (spider|bird) \|/.test(l))).toHaveLength(130);
    const t4 = md.slice(md.indexOf("## Table 4"), md.indexOf("## Table 5"));
    expect(t4).toContain("| spider | no_bm25 | EX std | — | 0.20 | — |");
    expect(t4.split("\n").filter((l) => l.includes("| EX std |"))).toHaveLength(14);
  });
});

describe("datasetTitles", () => {
  it("names a dataset the paper does not name by its adapter's title (a plugin's too), never by its registry name", () => {
    registerDataset({ ...spider, name: "geo-plugin", title: "GeoQuery (plugin)" });
    expect(datasetTitles(["spider", "bird", "spider-syn", "geo-plugin", "geo-plugin", "unregistered"])).toEqual({ "spider-syn": "Spider-Syn dev", "geo-plugin": "GeoQuery (plugin)" });
    const sel = paperTableSelection([], { labels: { ...datasetTitles(["geo-plugin"]), "spider-syn": "Syn" } });
    expect(sel.labels).toMatchObject({ spider: "Spider", "geo-plugin": "GeoQuery (plugin)", "spider-syn": "Syn" });
  });
});
