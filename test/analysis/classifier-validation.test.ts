// Tests lib/analysis/classifier-validation.ts and the confusion table: hand-computed accuracy, macro-F1 over the label union, and every input check of METHOD.md §8.
import { describe, expect, it } from "vitest";
import { classifierValidation, type AnnotationRow } from "../../lib/analysis/classifier-validation.ts";
import { confusionTable, failureTable } from "../../lib/analysis/tables.ts";
import { summarizeRun } from "../../lib/analysis/run-summary.ts";
import { buildTrajectory } from "./build-trajectory.ts";

const trajectories = [0, 1, 2, 3, 4, 5].map((q) => ({ query_id: String(q), db_id: "db", initial_correct: q === 5 }));

/** [query, gold, predicted, annotators] */
const CASES: [number, string, string, string[]][] = [
  [0, "Schema Linking", "Schema Linking", ["ann1", "ann2"]],
  [1, "Schema Linking", "Syntax", ["ann1"]],
  [2, "Syntax", "Syntax", ["ann2", "ann1"]],
  [3, "Result Mismatch", "Result Mismatch", ["ann1"]],
  [4, "Result Mismatch", "Unknown", ["ann2"]],
];
const rows: AnnotationRow[] = CASES.flatMap(([q, gold, predicted, annotators]) =>
  annotators.map((annotator_id) => ({ query_id: String(q), db_id: "db", predicted_sql: `SELECT ${q}`, error_message: "", predicted_type: predicted, gold_type: gold, annotator_id })),
);
const small = { minCases: 5, maxCases: 5, minDoubleAnnotated: 2 };

describe("classifierValidation", () => {
  const v = classifierValidation(rows, trajectories, small);
  it("accuracy, coverage and macro-F1 over the union of labels", () => {
    expect(v.cases).toBe(5);
    expect(v.double_annotated).toBe(2); // q0, q2
    expect(v.accuracy).toBe(0.6); // 3 of 5 agree
    expect(v.coverage).toBe(0.8); // one Unknown prediction
    expect(v.unknown_rate).toBeCloseTo(0.2, 15);
    // labels in METHOD.md §3 order; Unknown is a label because it was predicted
    expect(v.labels).toEqual(["Schema Linking", "Syntax", "Result Mismatch", "Unknown"]);
    // SL: P 1/1, R 1/2 → F1 2/3; Syntax: P 1/2, R 1/1 → 2/3; RM: P 1/1, R 1/2 → 2/3; Unknown: no gold, tp 0 → 0
    expect(v.per_label.map((l) => l.f1)).toEqual([2 / 3, 2 / 3, 2 / 3, 0]);
    expect(v.macro_f1).toBeCloseTo(0.5, 15); // (3 · 2/3 + 0) / 4
    expect(v.confusion).toEqual([
      [1, 1, 0, 0],
      [0, 1, 0, 0],
      [0, 0, 1, 1],
      [0, 0, 0, 0],
    ]);
  });
  it("confusion table with totals, and Table 5 classifier rows", () => {
    const t = confusionTable(v, "Spider");
    expect(t.id).toBe("table5-confusion-spider");
    expect(t.rows.map((r) => r.map((c) => c.text))).toEqual([
      ["Schema Linking", "1", "1", "0", "0", "2"],
      ["Syntax", "0", "1", "0", "0", "1"],
      ["Result Mismatch", "0", "0", "1", "1", "2"],
      ["Unknown", "0", "0", "0", "0", "0"],
      ["Total", "1", "2", "1", "1", "5"],
    ]);
    const run = summarizeRun([buildTrajectory({ query_id: "0", attempts: ["SELEC 1"], statuses: ["EXECUTION_ERROR"] })]);
    const t5 = failureTable([run], { validation: { spider: v } });
    // paper layout: Acc. (%) and Macro-F1 columns of the dataset's row; the CSV-only column gives the cases
    const row = t5.rows[0].map((c) => c.text);
    expect([row[4], row[5], row[7]]).toEqual(["60.00", "0.500", "5"]);
  });
  it("checks of METHOD.md §8", () => {
    expect(() => classifierValidation(rows, trajectories)).toThrow(/5 cases, but 150–200 are required/);
    expect(() => classifierValidation(rows, trajectories, { ...small, minDoubleAnnotated: 3 })).toThrow(/2 cases have two annotators, 3 are required/);
    const correct = [...rows, { ...rows[0], query_id: "5" }];
    expect(() => classifierValidation(correct, trajectories, small)).toThrow(/case \(db, 5\) was initially correct/);
    expect(() => classifierValidation([{ ...rows[0], query_id: "9" }], trajectories, small)).toThrow(/case \(db, 9\) has no trajectory/);
    const split = rows.map((r, i) => (i === 1 ? { ...r, gold_type: "Syntax" } : r));
    expect(() => classifierValidation(split, trajectories, small)).toThrow(/rows disagree on gold_type \("Schema Linking" vs "Syntax"\)/);
  });
});
