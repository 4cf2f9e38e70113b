// Tests lib/memory/entry.ts validation (METHOD.md §4.1) and lib/memory/entry-text.ts (dense text §4.6, BM25 document §5.2).
import { describe, expect, it } from "vitest";
import { entryProblems, InvalidEntryError, validateEntry } from "../../lib/memory/entry.ts";
import { bm25Document, denseText } from "../../lib/memory/entry-text.ts";
import { makeEntry } from "./fixtures.ts";

describe("validateEntry", () => {
  it("accepts well-formed positive and negative entries", () => {
    expect(entryProblems(makeEntry({ polarity: "positive" }))).toEqual([]);
    expect(entryProblems(makeEntry({ polarity: "negative" }))).toEqual([]);
  });
  it("positive requires outcome CORRECT and a successful_direction", () => {
    const e = makeEntry({ polarity: "positive" });
    expect(() => validateEntry({ ...e, observed_outcome: "DENOTATION_MISMATCH" })).toThrow(/positive entry must have observed_outcome CORRECT/);
    expect(() => validateEntry({ ...e, successful_direction: "" })).toThrow(/non-empty successful_direction/);
  });
  it("negative forbids outcome CORRECT", () => {
    expect(() => validateEntry({ ...makeEntry({ polarity: "negative" }), observed_outcome: "CORRECT" })).toThrow(InvalidEntryError);
  });
  it("required fields must be non-empty and counters consistent", () => {
    const e = makeEntry();
    expect(entryProblems({ ...e, source_db_id: "" })).toEqual(["source_db_id must be a non-empty string"]);
    expect(entryProblems({ ...e, confirmation_count: 2 }).join()).toMatch(/confirmation_count \(2\) must equal/);
    expect(entryProblems({ ...e, provenance_history: [] }).join()).toMatch(/provenance_history/);
  });
});

describe("entry texts", () => {
  const e = makeEntry({ polarity: "negative", delta: "SELECT A  FROM t => SELECT b FROM t", dbError: "no such column: b" });
  it("dense text has the seven labelled parts in order, normalised transformation", () => {
    expect(denseText(e)).toBe(
      "QUESTION: How many singers are there? SCHEMA: Database: db1\n\nTable: t\n  - a (text) " +
        "FAILURE: attempted_sql=SELECT a FROM t; status=EXECUTION_ERROR; db_error=no such column: b " +
        "TRANSFORMATION: select a from t=>select b from t ERROR: Schema Linking OUTCOME: EXECUTION_ERROR DB ERROR: no such column: b",
    );
    expect(denseText({ ...e, observed_db_error: null })).toMatch(/DB ERROR: \(none\)$/);
  });
  it("BM25 document: question, context, raw delta, type, outcome, db error or '', direction; no schema", () => {
    expect(bm25Document(e)).toBe(
      "How many singers are there? attempted_sql=SELECT a FROM t; status=EXECUTION_ERROR; db_error=no such column: b " +
        "SELECT A  FROM t => SELECT b FROM t Schema Linking EXECUTION_ERROR no such column: b ",
    );
    const p = makeEntry({ polarity: "positive", delta: "x => y" });
    expect(bm25Document(p).endsWith("Schema Linking CORRECT  Observed successful transition: x => y")).toBe(true);
  });
});
