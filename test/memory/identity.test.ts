// Tests lib/memory/identity.ts: the SQL delta string, normalizeTransformation and entryId (METHOD.md §4.2, §4.4).
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { entryId, normalizeErrorType, normalizeTransformation, sqlDelta } from "../../lib/memory/identity.ts";

describe("sqlDelta", () => {
  it("joins the stripped before and after SQL with ' => '", () => {
    expect(sqlDelta("  SELECT a FROM t \n", "\tSELECT b FROM t ")).toBe("SELECT a FROM t => SELECT b FROM t");
  });
  it("uses 'initial SQL' when there is no previous attempt", () => {
    expect(sqlDelta(null, " SELECT 1 ")).toBe("initial SQL => SELECT 1");
  });
  it("keeps an empty SQL as empty", () => {
    expect(sqlDelta("SELECT 1", "")).toBe("SELECT 1 => ");
  });
});

describe("normalizeTransformation", () => {
  const cases: [string, string, string][] = [
    // lower-case, collapse "  " to " ", " => " loses both spaces (next to '=' and '>'), " = " loses both, quotes verbatim
    ["arrow and equals", "SELECT  Name FROM t => SELECT name FROM t WHERE x = 'A B'", "select name from t=>select name from t where x='A B'"],
    ["double quotes kept verbatim, doubled quote escape", `WHERE "Col  Name" = 'It''s  OK'`, `where "Col  Name"='It''s  OK'`],
    ["backslash escape does not close the region", "WHERE a = 'x\\'  Y' AND B", "where a='x\\'  Y' and b"],
    ["square brackets are a quoted region", "SELECT [My  Col] FROM T", "select [My  Col] from t"],
    ["doubled closing bracket", "SELECT [a]]b  C] FROM T", "select [a]]b  C] from t"],
    ["backticks, space before comma dropped", "SELECT `A  B` ,X", "select `A  B`,x"],
    ["every punctuation mark", "COUNT ( * ) , a + b - c / d != e <= f > g < h", "count(*),a+b-c/d!=e<=f>g<h"],
    ["tabs and newlines collapse", "SELECT\ta\n\n  FROM   t", "select a from t"],
    ["trimmed", "   X   ", "x"],
    ["unterminated quote runs to the end", "WHERE a = 'Abc  D", "where a='Abc  D"],
    ["initial SQL marker", "initial SQL => SELECT 1", "initial sql=>select 1"],
    ["space between two quoted regions is kept", "'A'  'B'", "'A' 'B'"],
    ["dot and semicolon are not punctuation", "T1 . a ; B", "t1 . a ; b"],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => expect(normalizeTransformation(input)).toBe(expected));
  }
});

describe("entryId", () => {
  it("is sha256 of the canonical JSON {error_type, transformation} (hand-written JSON)", () => {
    // error type "  Schema   Linking " → trimmed, collapsed, lower-cased = "schema linking";
    // delta "SELECT A => select a" → "select a=>select a"; keys sorted, no spaces.
    const json = '{"error_type":"schema linking","transformation":"select a=>select a"}';
    const expected = createHash("sha256").update(json, "utf8").digest("hex");
    expect(entryId("  Schema   Linking ", "SELECT A => select a")).toBe(expected);
  });
  it("ignores case and spacing differences but not quoted content", () => {
    expect(entryId("Syntax", "SELECT a FROM t => SELECT b FROM t")).toBe(entryId("syntax", "select A  from T=>select b from t"));
    expect(entryId("Syntax", "x = 'A'")).not.toBe(entryId("Syntax", "x = 'a'"));
    expect(entryId("Syntax", "x")).not.toBe(entryId("Execution", "x"));
  });
  it("normalizes error types", () => {
    expect(normalizeErrorType(" Result \t Mismatch ")).toBe("result mismatch");
  });
});
