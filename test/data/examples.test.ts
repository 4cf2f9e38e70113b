// Tests lib/data/examples.ts: ids, stripping, evidence, difficulty and invalid/duplicate records (METHOD.md §1.2).
import { describe, expect, it } from "vitest";
import { InputFileError } from "../../lib/errors.ts";
import { assertAllValid, parseExamples } from "../../lib/data/examples.ts";

describe("parseExamples", () => {
  it("uses the source index for Spider and strips fields; Spider evidence is always empty", () => {
    const { examples, invalid } = parseExamples(
      [
        { db_id: " a ", question: " Q1? ", query: " SELECT 1 ", evidence: "ignored" },
        { db_id: "b", question: "Q2", query: "SELECT 2", hardness: "hard" },
      ],
      "spider",
      "dev.json",
    );
    expect(invalid).toEqual([]);
    expect(examples).toEqual([
      { id: "0", sourceIndex: 0, dbId: "a", question: "Q1?", evidence: "", goldSql: "SELECT 1", difficulty: "unknown" },
      { id: "1", sourceIndex: 1, dbId: "b", question: "Q2", evidence: "", goldSql: "SELECT 2", difficulty: "hard" },
    ]);
  });

  it("uses String(question_id) for BIRD, falling back to the index when it is null", () => {
    const { examples } = parseExamples(
      [
        { question_id: 7, db_id: "x", question: "q", evidence: " e ", SQL: "SELECT 1", difficulty: "simple" },
        { question_id: null, db_id: "x", question: "q", SQL: "SELECT 2" },
      ],
      "bird",
      "dev.json",
    );
    expect(examples.map((e) => [e.id, e.evidence, e.difficulty, e.goldSql])).toEqual([
      ["7", "e", "simple", "SELECT 1"],
      ["1", "", "unknown", "SELECT 2"],
    ]);
  });

  it("collects invalid records with reasons, and assertAllValid lists the first few", () => {
    const parsed = parseExamples(
      [
        { db_id: "", question: "q", query: "SELECT 1" },
        { db_id: "a", question: "   ", query: "SELECT 1" },
        { db_id: 3, question: "q", query: "SELECT 1" },
        { db_id: "a", question: "q", query: "SELECT 1" },
        { question: "q" },
      ],
      "spider",
      "dev.json",
    );
    expect(parsed.examples.map((e) => e.id)).toEqual(["3"]);
    expect(parsed.invalid.map((x) => x.sourceIndex)).toEqual([0, 1, 2, 4]);
    expect(parsed.invalid[0].reason).toBe("missing or empty db_id");
    expect(parsed.invalid[3].reason).toBe("missing or empty db_id, query");
    expect(() => assertAllValid(parsed, "dev.json")).toThrow(InputFileError);
    expect(() => assertAllValid(parsed, "dev.json")).toThrow(/4 invalid example\(s\) \(index 0: .*index 1: .*index 2: db_id: .*; and 1 more\)/);
  });

  it("treats a duplicate id as fatal, naming both indices", () => {
    const records = [
      { question_id: 5, db_id: "x", question: "q", SQL: "SELECT 1" },
      { question_id: 6, db_id: "x", question: "q", SQL: "SELECT 1" },
      { question_id: 5, db_id: "x", question: "q", SQL: "SELECT 1" },
    ];
    expect(() => parseExamples(records, "bird", "dev.json")).toThrow(/duplicate example id "5" at source indices 0 and 2/);
  });

  it("rejects a document that is not a list", () => {
    expect(() => parseExamples({ a: 1 }, "spider", "dev.json")).toThrow(/expected a JSON list of examples, found object/);
  });
});
