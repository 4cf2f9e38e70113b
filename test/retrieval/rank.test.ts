// Tests lib/retrieval/rank.ts: Python round(x, 12), min–max with the 1e−12 rules, renormalised weights, fusion with bonus, the 5-key sort (METHOD.md §5.4).
import { describe, expect, it } from "vitest";
import { channelWeights, compareRanked, minMaxNormalize, pyRound, rankCandidates, type RankedScore } from "../../lib/retrieval/rank.ts";

describe("pyRound (CPython round(x, 12))", () => {
  it("exact ties round half to even", () => {
    // 2^-13 = 0.0001220703125 exactly: 13 decimals ending in 5 → tie at 12; the kept digit 2 is even.
    expect(pyRound(2 ** -13, 12)).toBe(0.000122070312);
    expect((2 ** -13).toFixed(12)).toBe("0.000122070313"); // what plain toFixed would give (half up)
    // 3·2^-13 = 0.0003662109375: tie, kept digit 7 is odd → up to 8.
    expect(pyRound(3 * 2 ** -13, 12)).toBe(0.000366210938);
    expect(pyRound(-(2 ** -13), 12)).toBe(-0.000122070312);
    // 0.5 has one decimal: no rounding at 12.
    expect(pyRound(0.5, 12)).toBe(0.5);
  });
  it("non-ties round the exact binary value (values checked against CPython 3)", () => {
    expect(pyRound(1 / 3, 12)).toBe(0.333333333333);
    expect(pyRound(0.1234567890125, 12)).toBe(0.123456789012);
    expect(pyRound(0.9999999999995, 12)).toBe(0.999999999999);
    expect(pyRound(0.30000000000000004, 12)).toBe(0.3);
    expect(pyRound(2.5e-13, 12)).toBe(0);
    expect(pyRound(1.5e-12, 12)).toBe(2e-12);
  });
  it("passes through zero, non-finite and huge values", () => {
    expect(pyRound(0)).toBe(0);
    expect(pyRound(Infinity)).toBe(Infinity);
    expect(pyRound(2 ** 60)).toBe(2 ** 60);
  });
});

describe("minMaxNormalize", () => {
  it("(s − min)/(max − min)", () => {
    expect(minMaxNormalize([1, 3, 2])).toEqual([0, 1, 0.5]);
    expect(minMaxNormalize([-1, 1])).toEqual([0, 1]);
    expect(minMaxNormalize([])).toEqual([]);
  });
  it("all equal and non-zero → every candidate 1.0", () => {
    expect(minMaxNormalize([0.4, 0.4, 0.4])).toEqual([1, 1, 1]);
    expect(minMaxNormalize([0.7])).toEqual([1]);
    expect(minMaxNormalize([0.3, 0.3 + 5e-13])).toEqual([1, 1]); // within 1e−12
  });
  it("all equal to ≈ 0 → every candidate 0.0", () => {
    expect(minMaxNormalize([0, 0])).toEqual([0, 0]);
    expect(minMaxNormalize([0])).toEqual([0]);
    expect(minMaxNormalize([1e-13, 2e-13])).toEqual([0, 0]);
  });
  it("a spread just above the tolerance is normalised", () => {
    expect(minMaxNormalize([0, 2e-12])).toEqual([0, 1]);
  });
});

describe("channelWeights", () => {
  it("0.75/0.25, renormalised when a channel is off", () => {
    expect(channelWeights({ dense: true, bm25: true })).toEqual({ dense: 0.75, bm25: 0.25 });
    expect(channelWeights({ dense: false, bm25: true })).toEqual({ dense: 0, bm25: 1 });
    expect(channelWeights({ dense: true, bm25: false })).toEqual({ dense: 1, bm25: 0 });
  });
});

describe("rankCandidates", () => {
  // raw dense 0.9 / 0.82 / 0.1 → min–max (range 0.8): 1, 0.9, 0
  // raw bm25  1.0 / 1.4 / 3.0  → min–max (range 2):   0, 0.2, 1
  // final = 0.75·dense + 0.25·bm25: c1 0.75, c2 0.675 + 0.05 = 0.725, c3 0.25
  const inputs = [
    { entryId: "c1", dense: 0.9, bm25: 1.0, typeMatch: 0 as const },
    { entryId: "c2", dense: 0.82, bm25: 1.4, typeMatch: 1 as const },
    { entryId: "c3", dense: 0.1, bm25: 3.0, typeMatch: 0 as const },
  ];
  it("fuses and sorts without bonus", () => {
    const r = rankCandidates(inputs, { dense: 0.75, bm25: 0.25, typeBonus: 0 });
    expect(r.map((x) => [x.entryId, x.dense, x.bm25, x.typeMatch, x.final])).toEqual([
      ["c1", 1, 0, 0, 0.75],
      ["c2", 0.9, 0.2, 0, 0.725],
      ["c3", 0, 1, 0, 0.25],
    ]);
    expect(r.map((x) => x.index)).toEqual([0, 1, 2]);
  });
  it("the 0.10 same-type bonus lifts c2 above c1 (0.725 + 0.1 = 0.825 > 0.75)", () => {
    const r = rankCandidates(inputs, { dense: 0.75, bm25: 0.25, typeBonus: 0.1 });
    expect(r.map((x) => [x.entryId, x.typeMatch, x.final])).toEqual([
      ["c2", 1, 0.825],
      ["c1", 0, 0.75],
      ["c3", 0, 0.25],
    ]);
  });
  it("renormalised weights: BM25 only ranks c3 (1), c2 (0.2), c1 (0)", () => {
    const r = rankCandidates(inputs, { ...channelWeights({ dense: false, bm25: true }), typeBonus: 0 });
    expect(r.map((x) => [x.entryId, x.final])).toEqual([
      ["c3", 1],
      ["c2", 0.2],
      ["c1", 0],
    ]);
  });
  it("tie on final → dense desc; tie on final and dense → bm25 desc; all tied → entry_id asc", () => {
    // weights 0.5/0.5: x (dense 1, bm25 0) and y (dense 0, bm25 1) both final 0.5 → x first (dense)
    const byDense = rankCandidates(
      [
        { entryId: "y", dense: 0, bm25: 1, typeMatch: 0 },
        { entryId: "x", dense: 1, bm25: 0, typeMatch: 0 },
      ],
      { dense: 0.5, bm25: 0.5, typeBonus: 0 },
    );
    expect(byDense.map((x) => x.entryId)).toEqual(["x", "y"]);
    // bonus 0.25 = bm25 weight: p (dense .5, bm25 1, no match) = 0.375 + 0.25 = 0.625; q (dense .5, bm25 0, match) = 0.375 + 0.25 → bm25 decides
    const byBm25 = rankCandidates(
      [
        { entryId: "q", dense: 0.5, bm25: 0, typeMatch: 1 },
        { entryId: "p", dense: 0.5, bm25: 1, typeMatch: 0 },
        { entryId: "lo", dense: 0, bm25: 0, typeMatch: 0 },
        { entryId: "hi", dense: 1, bm25: 0, typeMatch: 0 },
      ],
      { dense: 0.75, bm25: 0.25, typeBonus: 0.25 },
    );
    expect(byBm25.map((x) => x.entryId)).toEqual(["hi", "p", "q", "lo"]);
    expect(byBm25[1].final).toBe(byBm25[2].final);
    const same = rankCandidates(
      ["b2", "a1", "c3"].map((entryId) => ({ entryId, dense: 0.3, bm25: 2, typeMatch: 0 as const })),
      { dense: 0.75, bm25: 0.25, typeBonus: 0 },
    );
    // all equal non-zero → both components 1 → final 1 for all; order by entry_id
    expect(same.map((x) => [x.entryId, x.final])).toEqual([
      ["a1", 1],
      ["b2", 1],
      ["c3", 1],
    ]);
  });
  it("compareRanked uses type_match before entry_id", () => {
    const mk = (entryId: string, typeMatch: 0 | 1): RankedScore => ({ index: 0, entryId, dense: 0.5, bm25: 0.5, typeMatch, final: 0.5 });
    expect([mk("a", 0), mk("b", 1)].sort(compareRanked).map((x) => x.entryId)).toEqual(["b", "a"]);
  });
});
