// Tests lib/analysis/tables.ts (Tables 1–5), run-summary.ts and table-frame.ts on small hand-built runs with hand-computed values.
import { describe, expect, it } from "vitest";
import { summarizeRun, pairedMatrices, type RunSummary } from "../../lib/analysis/run-summary.ts";
import { renderCsv, renderMarkdown } from "../../lib/analysis/table.ts";
import { runsFrame, tableFrame } from "../../lib/analysis/table-frame.ts";
import { ablationTable, comparisonTable, exTable, failureTable, repairTable } from "../../lib/analysis/tables.ts";
import type { ErrorType, Trajectory } from "../../lib/repair/trajectory.ts";
import { buildTrajectory, repairTrajectory } from "./build-trajectory.ts";

/** Per query: initial failure type (null = initially correct) and final correctness per seed. */
type QuerySpec = [ErrorType | null, ...boolean[]];

/**
 * Spider: q0, q1 initially correct; q2 Syntax, q3 Result Mismatch initial failures.
 * BIRD: two Result Mismatch initial failures. A repaired query takes 1 step; an unrepaired one 7
 * (0 for zeroshot). Columns after the type are seeds 0, 1, 2.
 */
const SPEC: Record<string, Record<string, QuerySpec[]>> = {
  spider: {
    merit: [[null, true, true, true], [null, true, true, true], ["Syntax", true, true, true], ["Result Mismatch", true, false, false]],
    iterative: [[null, true, true, true], [null, true, true, true], ["Syntax", true, true, true], ["Result Mismatch", false, false, false]],
    zeroshot: [[null, true, true, true], [null, true, true, true], ["Syntax", false, false, false], ["Result Mismatch", false, false, false]],
  },
  bird: {
    merit: [["Result Mismatch", true, true, false], ["Result Mismatch", false, false, false]],
    iterative: [["Result Mismatch", true, true, true], ["Result Mismatch", true, true, true]],
    zeroshot: [["Result Mismatch", false, false, false], ["Result Mismatch", false, false, false]],
  },
};

function trajectory(dataset: string, method: string, seed: number, q: number, [type, ...finals]: QuerySpec): Trajectory {
  const common = { dataset, method, stream_seed: seed };
  if (type === null) return buildTrajectory({ query_id: String(q), attempts: [`SELECT ${q}`], statuses: ["CORRECT"], ...common });
  const repaired = finals[seed];
  const steps = repaired ? 1 : method === "zeroshot" ? 0 : 7;
  const status = type === "Syntax" ? "EXECUTION_ERROR" : "DENOTATION_MISMATCH";
  const t = repairTrajectory(String(q), steps, repaired, { ...common, error_types: undefined });
  return buildTrajectory({ query_id: t.query_id, attempts: t.attempts, statuses: [status, ...t.statuses.slice(1)], ...common });
}

const runs: RunSummary[] = Object.entries(SPEC).flatMap(([dataset, methods]) =>
  Object.entries(methods).flatMap(([method, queries]) => [0, 1, 2].map((seed) => summarizeRun(queries.map((spec, q) => trajectory(dataset, method, seed, q, spec))))),
);
const labels = { spider: "Spider", bird: "BIRD" };

describe("Table 1: EX mean ± sample std", () => {
  const t = exTable(runs, { labels });
  it("values, order and best/second marks", () => {
    // Spider merit: 100, 75, 75 → mean 83.33; deviations 16.67, −8.33, −8.33 → (277.78 + 69.44 + 69.44)/2 = 208.33 → std 14.43
    // BIRD merit: 50, 50, 0 → mean 33.33; (277.78 + 277.78 + 1111.11)/2 = 833.33 → std 28.87
    expect(renderMarkdown(t)).toBe(
      [
        "**Execution accuracy (EX, %) per method and dataset**",
        "",
        "| Method | Spider | BIRD |",
        "|:---|---:|---:|",
        "| iterative | <u>75.00 ± 0.00</u> | **100.00 ± 0.00** |",
        "| merit | **83.33 ± 14.43** | <u>33.33 ± 28.87</u> |",
        "| zeroshot | 50.00 ± 0.00 | 0.00 ± 0.00 |",
        "",
        "_Mean ± sample standard deviation (n − 1) over stream seeds 0, 1, 2; best in bold, second underlined._",
        "",
      ].join("\n"),
    );
    expect(t.data.find((r) => r.method === "merit" && r.dataset === "spider")?.ex_std).toBeCloseTo(Math.sqrt(625 / 3), 10);
  });
  it("is deterministic and renders CSV", () => {
    expect(renderCsv(exTable(runs, { labels }))).toBe(renderCsv(t));
    expect(renderCsv(t).split("\n")[0]).toBe("Method,Spider,BIRD");
  });
});

describe("Table 2: Δ of merit vs every other method", () => {
  const t = comparisonTable(runs, { reference: "merit", datasets: ["spider"], labels });
  it("Δ, interval, McNemar and provenance columns", () => {
    const iterative = t.data.find((r) => r.other === "iterative")!;
    // only q3 differs, in seed 0: Δ = 1/12 × 100 = 8.33 pp. Δ* = 8.33·k with k ~ Binomial(4, ¼):
    // P[k = 0] = 0.316 > 2.5% → lo = 0; P[k ≥ 3] = 0.051 > 2.5% > P[k = 4] = 0.004 → hi = 3 × 8.33 = 25
    expect(iterative).toMatchObject({ delta: 100 / 12, lo: 0, hi: 25, resamples: 10000, seed: 0, interval: "percentile", queries: 4, seeds: "0 1 2" });
    // majorities: q3 is 0 for both (merit 1 of 3 seeds) → no discordant query → p = 1
    expect(iterative).toMatchObject({ only_reference: 0, only_other: 0, p_mcnemar: 1 });
    // bootstrap p ≈ 2 · P[k = 0] = 2 · 0.316 = 0.633
    expect(iterative.p_bootstrap as number).toBeGreaterThan(0.6);
    expect(iterative.p_bootstrap as number).toBeLessThan(0.67);
    // zeroshot: q2 differs in 3 cells, q3 in 1 → Δ = 4/12 × 100 = 33.33; majorities differ on q2 only → p = 2 · ½ = 1
    expect(t.data.find((r) => r.other === "zeroshot")).toMatchObject({ delta: 400 / 12, only_reference: 1, only_other: 0, p_mcnemar: 1 });
    expect(t.rows[0].map((c) => c.text).slice(0, 4)).toEqual(["Spider", "merit vs iterative", "+8.33", "[+0.00, +25.00]"]);
    expect(t.columns.slice(-3)).toEqual(["B", "Seed", "Interval"]);
    expect(t.notes[0]).toContain("B = 10000, seed 0, percentile 95% interval");
  });
  it("refuses an unknown reference and misaligned runs", () => {
    expect(() => comparisonTable(runs, { reference: "mreit" })).toThrow(/no runs of the reference method "mreit"/);
    const short = runs.filter((r) => !(r.dataset === "spider" && r.method === "zeroshot" && r.stream_seed === 2));
    expect(() => pairedMatrices(short, "spider", "merit", "zeroshot")).toThrow(/merit has seeds \[0,1,2\] but zeroshot has seeds \[0,1\]/);
    const dropped = runs.map((r) => (r.dataset === "spider" && r.method === "iterative" && r.stream_seed === 1 ? { ...r, queries: r.queries.slice(0, 3) } : r));
    expect(() => pairedMatrices(dropped, "spider", "merit", "iterative")).toThrow(/query 3 of merit seed 0 is missing from run \(iterative, seed 1\)/);
  });
});

describe("Table 3: repair behaviour", () => {
  it("means over seeds", () => {
    const t = repairTable(runs, { labels, datasets: ["spider"] });
    const merit = t.data.find((r) => r.method === "merit")!;
    // repaired: 2, 1, 1 → 1.333; Steps: seed 0 (1 + 1)/2 = 1, seeds 1–2 (1 + 7)/2 = 4 → (1 + 4 + 4)/3 = 3
    // calls: 4 + 2 = 6; 4 + 8 = 12; 12 → 10; tokens: 4·110 + 2·220 = 880; 440 + 8·220 = 2,200 → 1,760 → 0.00176 M
    expect(merit.repaired).toBeCloseTo(4 / 3, 12);
    expect(merit.steps).toBe(3);
    expect(merit.llm_calls).toBe(10);
    expect(merit.tokens_millions).toBeCloseTo(0.00176, 12);
    expect(merit.oscillation_pct).toBe(0);
    // the paper's precision: Osc. 2 decimals, Tok. 3
    expect(t.rows.find((r) => r[1].text === "merit")!.map((c) => c.text)).toEqual(["Spider", "merit", "1.3", "3.000", "0.00", "0.002", "10"]);
  });
});

describe("Table 4: ablations", () => {
  it("Δ = ablation − full with an interval", () => {
    const t = ablationTable(runs, { full: "merit", ablations: ["iterative"], datasets: ["spider"], labels });
    expect(t.columns).toEqual(["Method", "Spider EX", "Spider Δ", "Spider 95% CI", "Spider p", "Spider p (Holm)"]);
    expect(t.rows.map((r) => r.map((c) => c.text).slice(0, 4))).toEqual([
      ["merit", "83.33 ± 14.43", "—", "—"],
      ["iterative", "75.00 ± 0.00", "-8.33", "[-25.00, +0.00]"], // mirror of Table 2's merit vs iterative
    ]);
    // a family of one: Holm leaves p as it is (≈ 2 · P[k = 0] = 0.633, as in Table 2)
    const it = t.data.find((r) => r.method === "iterative")!;
    expect(it.p_holm).toBe(it.p_bootstrap);
    expect(it.p_bootstrap as number).toBeGreaterThan(0.6);
  });
});

describe("Table 5: initial-failure composition", () => {
  it("counts and shares from the shared initial attempts", () => {
    const t = failureTable(runs, { labels });
    // Spider: q2 Syntax, q3 Result Mismatch → 1 (50%), 1 (50%); BIRD: 2 Result Mismatch (100%)
    // paper layout: one row per dataset, Result Mismatch / Schema Linking / Other (%), Acc., Macro-F1; the CSV adds counts
    expect(t.columns).toEqual(["Dataset", "Result Mismatch", "Schema Linking", "Other", "Acc. (%)", "Macro-F1", "Initial failures", "Annotated cases", "Syntax n", "Result Mismatch n"]);
    expect(t.rows.map((r) => r.map((c) => c.text))).toEqual([
      ["Spider", "50.00", "0.00", "50.00", "—", "—", "2", "—", "1", "1"],
      ["BIRD", "100.00", "0.00", "0.00", "—", "—", "2", "—", "0", "2"],
    ]);
    expect(renderMarkdown(t).split("\n")[2]).toBe("| Dataset | Result Mismatch | Schema Linking | Other | Acc. (%) | Macro-F1 |");
    expect(renderCsv(t).split("\n")[1]).toBe("Spider,50.00,0.00,50.00,—,—,2,—,1,1");
    expect(t.notes.join(" ")).toMatch(/No gold labels for Spider, BIRD.*--gold-labels/);
  });
  it("refuses runs that do not share the initial cache", () => {
    const other = summarizeRun([0, 1, 2, 3].map((q) => trajectory("spider", "odd", 0, q, [q < 3 ? null : "Syntax", false, false, false])));
    // issue 39 §8: the cause named is the initial failures themselves (3 against 2), not their labels
    expect(() => failureTable([...runs, other])).toThrow(/on spider, \(odd, seed 0\) has 1 initial failure but \(iterative, seed 0\) has 2 \(first difference: query 2\); the runs do not share one initial cache/);
  });
});

describe("DataFrames", () => {
  it("table data and per-run rows", () => {
    const frame = tableFrame(exTable(runs));
    expect(frame.shape).toEqual([6, 5]);
    expect(frame.columns).toEqual(["method", "dataset", "ex_mean", "ex_std", "seeds"]);
    const perRun = runsFrame(runs);
    expect(perRun.shape).toEqual([18, 15]);
    // sorted by (dataset, method, seed): bird first
    expect((perRun.values as unknown[][])[0].slice(0, 3)).toEqual(["bird", "iterative", 0]);
  });
});
