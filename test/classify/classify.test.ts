/**
 * Tests lib/classify.ts (METHOD.md §3) on literal messages: each rule's label, the rule order (a
 * message matching two rules gets the earlier one), case-insensitivity, the word boundaries the spec
 * names (and no others), and the non-DBMS branches (Result Mismatch, Unknown/none, CORRECT → null).
 */
import { describe, expect, it } from "vitest";
import { classifyFailure, HIGH_RELIABILITY_TYPES, NO_EVIDENCE, RESULT_MISMATCH_EVIDENCE } from "../../lib/classify.ts";

/** `[type, subtype]` of an EXECUTION_ERROR with this message. */
const label = (dbError: string) => {
  const c = classifyFailure({ status: "EXECUTION_ERROR", dbError });
  return [c?.errorType, c?.errorSubtype];
};

describe("each DBMS rule (METHOD.md §3 step 1)", () => {
  const cases: [string, string, string][] = [
    ["TIMEOUT", "Execution", "Timeout"],
    ["query timed out after 30 s", "Execution", "Timeout"],
    ["no such table: singers", "Schema Linking", "Missing Table"],
    ["no such column: nme", "Schema Linking", "Missing Column"],
    ["no such view: v", "Schema Linking", "Missing View"],
    ["ambiguous column name: singer_id", "Schema Linking", "Ambiguous Column"],
    ["no such function: foo", "Syntax", "Unknown Function"],
    ['near "FROM": syntax error', "Syntax", "Parse Failure"],
    ["incomplete input", "Syntax", "Parse Failure"],
    ['unrecognized token: "@"', "Syntax", "Parse Failure"],
    ["misuse of aggregate function count()", "Aggregation", "DBMS Aggregate Misuse"],
    ["aggregate functions are not allowed in the GROUP BY clause", "Aggregation", "DBMS Aggregate Misuse"],
    ["datatype mismatch", "Filter/Value", "Type Mismatch"],
    ["type mismatch in comparison", "Filter/Value", "Type Mismatch"],
    ["attempt to write a readonly database", "Execution", "Read Only Violation"],
    ["only SELECT or WITH queries are allowed", "Execution", "Read Only Violation"],
    ["database not found: /data/spider/database/wta_1/wta_1.sqlite", "Execution", "DB Not Found"],
  ];
  for (const [message, type, subtype] of cases) {
    it(`${JSON.stringify(message)} → ${type} / ${subtype}`, () => {
      const c = classifyFailure({ status: "EXECUTION_ERROR", dbError: message });
      expect(c).toEqual({ errorType: type, errorSubtype: subtype, evidence: message, source: "dbms" });
    });
  }

  it("no rule → Unknown / Unknown with the message as evidence (source dbms)", () => {
    for (const message of [
      "not authorized",
      "You can only execute one statement at a time.",
      "sub-select returns 2 columns - expected 1",
      "wrong number of arguments to function substr()",
      "misuse of window function row_number()",
      "row value misused",
      "no single SQL statement in model output", // the kit's own message, METHOD.md §11.3
      "interrupted", // the oracle maps it to TIMEOUT (§2.5); the classifier does not
    ]) {
      expect(classifyFailure({ status: "EXECUTION_ERROR", dbError: message })).toEqual({
        errorType: "Unknown",
        errorSubtype: "Unknown",
        evidence: message,
        source: "dbms",
      });
    }
  });
});

describe("rule order: the earlier rule wins", () => {
  const cases: [string, string, string][] = [
    ["timed out; no such table: t", "Execution", "Timeout"],
    ["no such table: t (no such column: c)", "Schema Linking", "Missing Table"],
    ["no such column: c near x: syntax error", "Schema Linking", "Missing Column"],
    ["no such view: v, ambiguous column name: id", "Schema Linking", "Missing View"],
    ["ambiguous column name: id; no such function: f", "Schema Linking", "Ambiguous Column"],
    ["no such function: f: syntax error", "Syntax", "Unknown Function"],
    ["syntax error: misuse of aggregate", "Syntax", "Parse Failure"],
    ["misuse of aggregate: datatype mismatch", "Aggregation", "DBMS Aggregate Misuse"],
    ["datatype mismatch: attempt to write a readonly database", "Filter/Value", "Type Mismatch"],
    ["attempt to write a readonly database: database not found", "Execution", "Read Only Violation"],
  ];
  for (const [message, type, subtype] of cases) {
    it(`${JSON.stringify(message)} → ${type} / ${subtype}`, () => expect(label(message)).toEqual([type, subtype]));
  }
});

describe("case-insensitive search", () => {
  it("matches any letter case, including the timeout literal", () => {
    expect(label("NO SUCH TABLE: Singer")).toEqual(["Schema Linking", "Missing Table"]);
    expect(label("No Such Column: x")).toEqual(["Schema Linking", "Missing Column"]);
    expect(label("Near x: SYNTAX ERROR")).toEqual(["Syntax", "Parse Failure"]);
    expect(label("Only select or with queries")).toEqual(["Execution", "Read Only Violation"]);
    expect(label("DATABASE NOT FOUND: x")).toEqual(["Execution", "DB Not Found"]);
    expect(label("timeout")).toEqual(["Execution", "Timeout"]);
    expect(label("  TimeOut \n")).toEqual(["Execution", "Timeout"]); // trimmed before the comparison
    expect(label("Statement TIMED OUT")).toEqual(["Execution", "Timeout"]);
  });

  it("the timeout literal must be the whole (trimmed) message", () => {
    expect(label("TIMEOUTS")).toEqual(["Unknown", "Unknown"]);
    expect(label("timeout after 30 s")).toEqual(["Unknown", "Unknown"]);
  });
});

describe("word boundaries where the spec names them (rules 1, 6, 10) and nowhere else", () => {
  it("rule 1 needs the colon and a word boundary before `no`", () => {
    expect(label("no such table singers")).toEqual(["Unknown", "Unknown"]);
    expect(label("xno such table: t")).toEqual(["Unknown", "Unknown"]);
    expect(label("error: no such table: t")).toEqual(["Schema Linking", "Missing Table"]);
  });

  it("rule 6 phrases are word-bounded on both sides", () => {
    expect(label("syntax errors")).toEqual(["Unknown", "Unknown"]);
    expect(label("nosyntax error")).toEqual(["Unknown", "Unknown"]);
    expect(label("incomplete inputs")).toEqual(["Unknown", "Unknown"]);
    expect(label("unrecognized tokens")).toEqual(["Unknown", "Unknown"]);
    expect(label("(syntax error)")).toEqual(["Syntax", "Parse Failure"]);
  });

  it("rule 10 is word-bounded", () => {
    expect(label("mydatabase not found")).toEqual(["Unknown", "Unknown"]);
    expect(label("database not founds")).toEqual(["Unknown", "Unknown"]);
    expect(label("database not found")).toEqual(["Execution", "DB Not Found"]);
  });

  it("the other rules are plain substring searches", () => {
    expect(label("xno such column: a")).toEqual(["Schema Linking", "Missing Column"]);
    expect(label("subtype mismatch")).toEqual(["Filter/Value", "Type Mismatch"]);
    expect(label("misuse of aggregates")).toEqual(["Aggregation", "DBMS Aggregate Misuse"]);
  });
});

describe("non-DBMS branches (METHOD.md §3 steps 2 and 3)", () => {
  it("CORRECT is not classified", () => {
    expect(classifyFailure({ status: "CORRECT", dbError: null, predictedExecOk: true })).toBeNull();
  });

  it("an executed DENOTATION_MISMATCH is Result Mismatch (source semantic_hypothesis)", () => {
    const expected = { errorType: "Result Mismatch", errorSubtype: "Unknown", evidence: RESULT_MISMATCH_EVIDENCE, source: "semantic_hypothesis" };
    expect(classifyFailure({ status: "DENOTATION_MISMATCH", dbError: null, predictedExecOk: true })).toEqual(expected);
    expect(classifyFailure({ status: "DENOTATION_MISMATCH", dbError: null })).toEqual(expected); // inferred from the status
    expect(classifyFailure({ status: "DENOTATION_MISMATCH", dbError: "" })).toEqual(expected); // empty = no message
  });

  it("a DBMS message decides before the status", () => {
    expect(classifyFailure({ status: "DENOTATION_MISMATCH", dbError: "no such table: t", predictedExecOk: true })?.errorType).toBe("Schema Linking");
    expect(classifyFailure({ status: "TIMEOUT", dbError: "TIMEOUT", predictedExecOk: false })?.errorSubtype).toBe("Timeout");
  });

  it("otherwise Unknown / Unknown with source none", () => {
    const none = { errorType: "Unknown", errorSubtype: "Unknown", evidence: NO_EVIDENCE, source: "none" };
    expect(classifyFailure({ status: "EXECUTION_ERROR", dbError: null })).toEqual(none);
    expect(classifyFailure({ status: "DENOTATION_MISMATCH", dbError: null, predictedExecOk: false })).toEqual(none);
    expect(classifyFailure({ status: "TIMEOUT", dbError: null })).toEqual(none); // step 1 needs the message
  });

  it("a whitespace-only message is non-empty: Unknown from the DBMS, evidence verbatim", () => {
    expect(classifyFailure({ status: "EXECUTION_ERROR", dbError: "  " })).toEqual({ errorType: "Unknown", errorSubtype: "Unknown", evidence: "  ", source: "dbms" });
  });
});

describe("HIGH_RELIABILITY_TYPES", () => {
  it("is exactly {Syntax, Schema Linking, Execution}", () => {
    expect([...HIGH_RELIABILITY_TYPES].sort()).toEqual(["Execution", "Schema Linking", "Syntax"]);
    expect(HIGH_RELIABILITY_TYPES.has("Aggregation")).toBe(false);
    expect(HIGH_RELIABILITY_TYPES.has("Filter/Value")).toBe(false);
  });
});
