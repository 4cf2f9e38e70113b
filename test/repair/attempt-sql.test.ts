// Tests lib/repair/attempt-sql.ts: METHOD.md §8 normalisation, every oscillation edge case, token edit distance.
import { describe, expect, it } from "vitest";
import { isOscillating, normalizeAttemptSql, normalizedEditDistance, sqlTokens, tokenLevenshtein } from "../../lib/repair/attempt-sql.ts";

describe("normalizeAttemptSql", () => {
  it("strips, drops trailing semicolons, lower-cases and collapses whitespace", () => {
    expect(normalizeAttemptSql("  SELECT  *\n\tFROM T;; ")).toBe("select * from t");
    // whitespace before the semicolon disappears with the final trim (Python " ".join(s.split()))
    expect(normalizeAttemptSql("SELECT 1 ;")).toBe("select 1");
    // only TRAILING semicolons go
    expect(normalizeAttemptSql("SELECT ';' ;")).toBe("select ';'");
    expect(normalizeAttemptSql("")).toBe("");
  });
});

describe("isOscillating (METHOD.md §8)", () => {
  it("a repair that repeats the initial SQL oscillates", () => {
    expect(isOscillating(["SELECT a FROM t", "SELECT b FROM t", "SELECT a FROM t"])).toBe(true);
  });
  it("two empty attempts count as equal", () => {
    expect(isOscillating(["SELECT x", "", ""])).toBe(true);
    expect(isOscillating(["SELECT x", "", "SELECT y", ""])).toBe(true);
  });
  it("one empty attempt alone does not oscillate", () => {
    expect(isOscillating(["SELECT x", ""])).toBe(false);
  });
  it("trailing semicolons, case and whitespace differences are ignored", () => {
    expect(isOscillating(["SELECT a FROM t;", "select  a\nFROM t ;;"])).toBe(true);
    // lower-casing applies to literals too: 'A' and 'a' normalise alike
    expect(isOscillating(["SELECT * FROM t WHERE x = 'A'", "SELECT * FROM t WHERE x = 'a'"])).toBe(true);
  });
  it("a repeat of a non-initial attempt oscillates", () => {
    expect(isOscillating(["A", "B", "C", "b"])).toBe(true);
  });
  it("no repairs, or initially correct (one attempt), never oscillates", () => {
    expect(isOscillating(["SELECT 1"])).toBe(false);
    expect(isOscillating([""])).toBe(false);
  });
  it("distinct attempts do not oscillate, even when differing only inside a token", () => {
    expect(isOscillating(["SELECT a FROM t", "SELECT ab FROM t", "SELECT a FROM t2"])).toBe(false);
  });
});

describe("token edit distance", () => {
  it("tokenises words and single symbols", () => {
    expect(sqlTokens("count(*)>=2 and t1.name_x")).toEqual(["count", "(", "*", ")", ">", "=", "2", "and", "t1", ".", "name_x"]);
    expect(sqlTokens("")).toEqual([]);
  });
  it("Levenshtein over tokens", () => {
    // kitten → sitting on characters-as-tokens: 3 (2 substitutions + 1 insertion)
    expect(tokenLevenshtein([..."kitten"], [..."sitting"])).toBe(3);
    expect(tokenLevenshtein([], ["a", "b"])).toBe(2);
  });
  it("normalises by the larger token count", () => {
    // [select a from t] vs [select b from t]: 1 substitution / 4 tokens
    expect(normalizedEditDistance("SELECT a FROM t", "SELECT b FROM t")).toBe(0.25);
    // 4 insertions (where x = 1) / 8 tokens
    expect(normalizedEditDistance("SELECT b FROM t", "SELECT b FROM t WHERE x = 1")).toBe(0.5);
    // two empty attempts: 0 / max(0, 0, 1)
    expect(normalizedEditDistance("", "")).toBe(0);
    // equal after normalisation
    expect(normalizedEditDistance("SELECT count(*) FROM t", "select COUNT(*) from t;")).toBe(0);
  });
});
