// Tests lib/retrieval/bm25.ts against hand-computed BM25 (METHOD.md §5.2): tokenizer, a 3-document corpus, repeated query tokens, parameters.
import { describe, expect, it } from "vitest";
import { bm25Scores, bm25Tokens, createBm25 } from "../../lib/retrieval/bm25.ts";

describe("bm25Tokens", () => {
  it("lower-cases and keeps maximal runs of [a-z0-9_]", () => {
    expect(bm25Tokens("SELECT T1.name, COUNT(*) FROM x_y WHERE a='Bob';")).toEqual(["select", "t1", "name", "count", "from", "x_y", "where", "a", "bob"]);
  });
  it("treats non-ASCII letters and punctuation as separators, yields nothing for empty text", () => {
    expect(bm25Tokens("Café-Noir  ")).toEqual(["caf", "noir"]);
    expect(bm25Tokens("")).toEqual([]);
    expect(bm25Tokens(" ;; ")).toEqual([]);
  });
});

describe("bm25Scores on a 3-document corpus (computed by hand)", () => {
  // d0 = "a b c" (|d| = 3), d1 = "a a d" (3), d2 = "B e" (2) → N = 3, avgdl = 8/3.
  // df(a) = 2, df(b) = 2 → idf = ln(1 + (3 − 2 + 0.5)/(2 + 0.5)) = ln(1.6) for both.
  // Length factor K(|d|) = k1·(1 − b + b·|d|/avgdl):
  //   K(3) = 1.5·(0.25 + 0.75·3/(8/3)) = 1.5·(0.25 + 0.84375) = 1.640625
  //   K(2) = 1.5·(0.25 + 0.75·2/(8/3)) = 1.5·(0.25 + 0.5625)  = 1.21875
  // term score = idf·tf·(k1 + 1)/(tf + K) with k1 + 1 = 2.5.
  const docs = ["a b c", "a a d", "B e"];
  const L = Math.log(1.6);
  it("query 'a b'", () => {
    const [s0, s1, s2] = bm25Scores("a b", docs);
    expect(s0).toBeCloseTo(L * 2.5 / 2.640625 + L * 2.5 / 2.640625, 12); // a: tf 1, b: tf 1 → 2·L·2.5/(1 + 1.640625) ≈ 0.88995
    expect(s1).toBeCloseTo((L * 2 * 2.5) / 3.640625, 12); //                 a: tf 2 → L·5/(2 + 1.640625) ≈ 0.6455
    expect(s2).toBeCloseTo((L * 2.5) / 2.21875, 12); //                      b: tf 1, |d| 2 → L·2.5/(1 + 1.21875) ≈ 0.5296
    expect(s0).toBeCloseTo(0.88995, 5); // ln 1.6 = 0.4700036; × 5/2.640625 = × 1.8934911 → 0.889948
  });
  it("repeated query tokens count again: 'a a b' = 2·a + b", () => {
    const [s0, s1, s2] = bm25Scores("a a b", docs);
    expect(s0).toBeCloseTo((3 * L * 2.5) / 2.640625, 12);
    expect(s1).toBeCloseTo((2 * L * 5) / 3.640625, 12);
    expect(s2).toBeCloseTo((L * 2.5) / 2.21875, 12);
  });
  it("a token in every document still has positive idf: ln(1 + 0.5/2.5)", () => {
    // "a" in all of ["a", "a b"]: N = 2, df = 2 → idf = ln(1 + 0.5/2.5) = ln(1.2); avgdl = 1.5
    // d0: |d| = 1 → K = 1.5·(0.25 + 0.75/1.5) = 1.125 → ln(1.2)·2.5/2.125
    const [s0, s1] = bm25Scores("a", ["a", "a b"]);
    expect(s0).toBeCloseTo((Math.log(1.2) * 2.5) / 2.125, 12);
    // d1: |d| = 2 → K = 1.5·(0.25 + 0.75·2/1.5) = 1.875 → ln(1.2)·2.5/2.875
    expect(s1).toBeCloseTo((Math.log(1.2) * 2.5) / 2.875, 12);
  });
  it("unknown tokens score 0; empty corpus gives []", () => {
    expect(bm25Scores("zzz", docs)).toEqual([0, 0, 0]);
    expect(bm25Scores("a", [])).toEqual([]);
    expect(bm25Scores("a", ["", ""])).toEqual([0, 0]);
  });
  it("k1 and b are parameters: b = 0 removes length normalisation", () => {
    // b = 0: K = k1 = 1.5 for every document; d2 "b": ln(1.6)·2.5/2.5 = ln(1.6)
    expect(bm25Scores("b", docs, { b: 0 })[2]).toBeCloseTo(L, 12);
    // k1 = 0: every matching term scores idf·tf·1/tf = idf
    expect(bm25Scores("a", docs, { k1: 0 })[1]).toBeCloseTo(L, 12);
  });
  it("the configured scorer equals the one-shot function and accepts token arrays", () => {
    const scorer = createBm25(docs.map(bm25Tokens));
    expect(scorer.size).toBe(3);
    expect(scorer.averageLength).toBeCloseTo(8 / 3, 15);
    expect(scorer.scores("a b")).toEqual(bm25Scores("a b", docs));
    expect(scorer.scoresForTokens(["a", "b"])).toEqual(bm25Scores("a b", docs));
  });
});
