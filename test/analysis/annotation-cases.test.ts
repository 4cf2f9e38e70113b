// Tests lib/analysis/annotation-cases.ts: the failed-case population, CPython-compatible sampling, the CSV round trip with nasty SQL, and gold-label metrics by hand.
import { describe, expect, it } from "vitest";
import { ANNOTATION_COLUMNS, casesCsv, failedCases, goldLabelRows, sampleCases, type AnnotationCase } from "../../lib/analysis/annotation-cases.ts";
import { classifierValidation } from "../../lib/analysis/classifier-validation.ts";
import { parseCsv } from "../../lib/analysis/csv.ts";
import { buildTrajectory, repairTrajectory } from "./build-trajectory.ts";

const NASTY = [
  `SELECT "name", 'a,b' FROM singer WHERE note = 'say ""hi""'`,
  "SELECT *\nFROM t\nWHERE x = 'line\r\nbreak';",
  `SELECT count(*) , ',' FROM "t""q"`,
];

// 12 queries in source order; the even ones (0, 2, …, 10) are initially correct, the odd ones fail.
const trajectories = Array.from({ length: 12 }, (_, i) =>
  i % 2 === 0
    ? buildTrajectory({ query_id: String(i), attempts: ["SELECT 1"], statuses: ["CORRECT"] })
    : i < 7
      ? buildTrajectory({ query_id: String(i), attempts: [NASTY[(i - 1) / 2]], statuses: ["EXECUTION_ERROR"] })
      : repairTrajectory(String(i), 1, true),
).reverse(); // file order must not matter
const questions = new Map(Array.from({ length: 12 }, (_, i) => [String(i), `Question ${i}, with a comma?`]));

describe("failedCases", () => {
  it("keeps initially failed queries in source order with their initial attempt", () => {
    const cases = failedCases(trajectories, questions);
    expect(cases.map((c) => c.query_id)).toEqual(["1", "3", "5", "7", "9", "11"]);
    expect(cases[0]).toEqual({
      query_id: "1",
      db_id: "db",
      question: "Question 1, with a comma?",
      predicted_sql: NASTY[0],
      error_message: 'near "x": syntax error',
      predicted_type: "Syntax",
    });
    // a DENOTATION_MISMATCH has no DBMS message
    expect(cases[3]).toMatchObject({ predicted_sql: "SELECT c0 FROM t7", error_message: "", predicted_type: "Result Mismatch" });
    expect(() => failedCases(trajectories, new Map())).toThrow(/not in the dataset's examples/);
  });
});

describe("sampleCases", () => {
  it("draws like CPython random.Random(0).sample(range(6), 4) = [3, 5, 0, 1]", () => {
    // CPython 3.11.7 prints [3, 5, 0, 1] for random.Random(0).sample(range(6), 4) (pool branch, n = 6 ≤ 21)
    const cases = failedCases(trajectories, questions);
    const picked = sampleCases(cases, 4, 0).map((c) => c.query_id);
    expect(picked).toEqual([3, 5, 0, 1].map((i) => cases[i].query_id));
    expect(sampleCases(cases, 4, 0)).toEqual(sampleCases(cases, 4, 0));
    expect(sampleCases(cases, 4, 1).map((c) => c.query_id)).not.toEqual(picked);
    expect(() => sampleCases(cases, 7, 0)).toThrow(/only 6 initially failed queries/);
  });
});

describe("casesCsv and goldLabelRows", () => {
  it("round-trips nasty SQL and questions through RFC 4180", () => {
    const cases = failedCases(trajectories, questions);
    const text = casesCsv(cases);
    const records = parseCsv(text);
    expect(records[0]).toEqual([...ANNOTATION_COLUMNS]);
    expect(records.slice(1).map((r) => r[3])).toEqual(cases.map((c) => c.predicted_sql));
    expect(records.slice(1).every((r) => r.length === 8 && r[6] === "" && r[7] === "")).toBe(true);
    // an annotator fills in the two empty columns (last two fields of each record)
    const labelled = records.map((r, i) => (i === 0 ? r : [...r.slice(0, 6), "Syntax", "ann1"]));
    const back = goldLabelRows(labelled.map((r) => r.map((f) => (/[",\r\n]/.test(f) ? `"${f.replace(/"/g, '""')}"` : f)).join(",")).join("\r\n"), "cases.csv");
    expect(back.map((r) => r.predicted_sql)).toEqual(cases.map((c: AnnotationCase) => c.predicted_sql));
    expect(back[0]).toEqual({ query_id: "1", db_id: "db", predicted_sql: NASTY[0], error_message: 'near "x": syntax error', predicted_type: "Syntax", gold_type: "Syntax", annotator_id: "ann1" });
  });
  it("refuses unlabelled rows and missing columns", () => {
    const text = casesCsv(failedCases(trajectories, questions));
    expect(() => goldLabelRows(text, "cases.csv")).toThrow(/cases\.csv: record 2 \(query 1\) has an empty gold_type; label every case/);
    expect(() => goldLabelRows("query_id,db_id\n1,db\n", "x.csv")).toThrow(/missing column\(s\) predicted_sql, error_message, predicted_type, gold_type, annotator_id/);
  });
});

describe("gold-label metrics (METHOD.md §8)", () => {
  it("accuracy, macro-F1 over the union of labels and the confusion matrix, by hand", () => {
    // 6 failed cases, columns gold/predicted (case 1 annotated twice, by ann1 and ann2):
    //   q1 Syntax/Syntax, q3 Syntax/Syntax, q5 Syntax/Schema Linking,
    //   q7 Result Mismatch/Result Mismatch, q9 Filter/Value/Result Mismatch, q11 Result Mismatch/Unknown
    const header = "query_id,db_id,question,predicted_sql,error_message,predicted_type,gold_type,annotator_id";
    const rows = [
      ["1", "Syntax", "Syntax", "ann1"],
      ["1", "Syntax", "Syntax", "ann2"],
      ["3", "Syntax", "Syntax", "ann1"],
      ["5", "Schema Linking", "Syntax", "ann1"],
      ["7", "Result Mismatch", "Result Mismatch", "ann1"],
      ["9", "Result Mismatch", "Filter/Value", "ann1"],
      ["11", "Unknown", "Result Mismatch", "ann1"],
    ].map(([q, p, g, a]) => `${q},db,"Q, ${q}","SELECT "",""",,${p},${g},${a}`);
    const v = classifierValidation(goldLabelRows([header, ...rows].join("\n") + "\n", "g.csv"), trajectories, { minCases: 6, maxCases: 6, minDoubleAnnotated: 1 });
    // accuracy = (q1, q3, q7) = 3/6
    expect(v.accuracy).toBeCloseTo(0.5, 12);
    // coverage: 5 of 6 predicted ≠ Unknown
    expect(v.coverage).toBeCloseTo(5 / 6, 12);
    // labels (METHOD.md §3 order): Schema Linking, Syntax, Filter/Value, Result Mismatch, Unknown
    expect(v.labels).toEqual(["Schema Linking", "Syntax", "Filter/Value", "Result Mismatch", "Unknown"]);
    // F1: Schema Linking P 0/1 → 0; Syntax P 2/2, R 2/3 → 2·(2/3)/(5/3) = 0.8; Filter/Value R 0/1 → 0;
    // Result Mismatch P 1/2, R 1/2 → 0.5; Unknown P 0/1 → 0. macro = (0 + 0.8 + 0 + 0.5 + 0) / 5 = 0.26
    expect(v.macro_f1).toBeCloseTo(0.26, 12);
    expect(v.confusion).toEqual([
      [0, 0, 0, 0, 0],
      [1, 2, 0, 0, 0],
      [0, 0, 0, 1, 0],
      [0, 0, 0, 1, 1],
      [0, 0, 0, 0, 0],
    ]);
    expect(v.double_annotated).toBe(1);
  });
});
