// Tests lib/analysis/mcnemar.ts and normal.ts: exact McNemar p-values by hand, per-query majority, normal CDF/quantile known values.
import { describe, expect, it } from "vitest";
import { mcnemarExact } from "../../lib/analysis/bootstrap.ts";
import { binomialTwoSided } from "../../lib/analysis/mcnemar.ts";
import { normalCdf, normalQuantile } from "../../lib/analysis/normal.ts";

/** Matrices with `onlyA` queries A wins (by majority), `onlyB` B wins, `both` concordant correct, `neither` concordant wrong. */
function pairs(onlyA: number, onlyB: number, both: number, neither: number): [number[][], number[][]] {
  const a: number[][] = [];
  const b: number[][] = [];
  const add = (x: number[], y: number[], n: number) => {
    for (let i = 0; i < n; i++) {
      a.push(x);
      b.push(y);
    }
  };
  add([1, 1, 0], [0, 0, 1], onlyA); // majorities 1 vs 0
  add([0, 1, 0], [1, 0, 1], onlyB); // majorities 0 vs 1
  add([1, 1, 1], [0, 1, 1], both); // 1 vs 1 (a seed-level difference that the majority hides)
  add([0, 0, 0], [1, 0, 0], neither); // 0 vs 0
  return [a, b];
}

describe("mcnemarExact", () => {
  it("b = 10, c = 2: p = 2 · (C(12,0) + C(12,1) + C(12,2)) / 2^12 = 2 · 79 / 4096", () => {
    const [a, b] = pairs(10, 2, 7, 5);
    const r = mcnemarExact(a, b);
    expect(r.onlyA).toBe(10);
    expect(r.onlyB).toBe(2);
    expect(r.pValue).toBeCloseTo(158 / 4096, 14); // 0.03857421875
  });
  it("b = 0, c = 5: p = 2 / 2^5 = 0.0625; symmetric in A and B", () => {
    const [a, b] = pairs(0, 5, 3, 3);
    expect(mcnemarExact(a, b).pValue).toBeCloseTo(0.0625, 14);
    expect(mcnemarExact(b, a)).toMatchObject({ onlyA: 5, onlyB: 0 });
    expect(mcnemarExact(b, a).pValue).toBeCloseTo(0.0625, 14);
  });
  it("no discordant queries ⇒ p = 1; equal discordant counts ⇒ p capped at 1", () => {
    const [a, b] = pairs(0, 0, 4, 4);
    expect(mcnemarExact(a, b)).toEqual({ onlyA: 0, onlyB: 0, pValue: 1 });
    const [c, d] = pairs(3, 3, 0, 0);
    expect(mcnemarExact(c, d).pValue).toBe(1);
  });
  it("an even number of seeds: a 1-1 tie is not a majority", () => {
    expect(mcnemarExact([[1, 0]], [[0, 0]])).toMatchObject({ onlyA: 0, onlyB: 0 });
  });
  it("large n does not underflow to NaN", () => {
    // b = 1, n = 1,534: 2 · (1 + 1534) / 2^1534 is below the smallest double → 0, not NaN
    expect(binomialTwoSided(1, 1534)).toBe(0);
    // b = c = 767: P[X ≤ 767] > ½ → capped at 1
    expect(binomialTwoSided(767, 1534)).toBe(1);
    // n = 60, m = 20: reference value 2 · P[Binom(60, ½) ≤ 20] — compared with the exact rational sum
    let exact = 0n;
    let c = 1n;
    for (let k = 0n; k <= 20n; k++) {
      if (k > 0n) c = (c * (60n - k + 1n)) / k;
      exact += c;
    }
    expect(binomialTwoSided(20, 60)).toBeCloseTo((2 * Number(exact)) / 2 ** 60, 14);
  });
});

describe("normal distribution", () => {
  it("Φ known values", () => {
    expect(normalCdf(0)).toBe(0.5);
    expect(normalCdf(1.959963984540054)).toBeCloseTo(0.975, 14);
    expect(normalCdf(-1)).toBeCloseTo(0.15865525393145707, 14);
    expect(normalCdf(-5)).toBeCloseTo(2.866515718791939e-7, 20);
    expect(normalCdf(-8) / 6.22096057427178e-16).toBeCloseTo(1, 10);
    expect(normalCdf(-50)).toBe(0);
    expect(normalCdf(50)).toBe(1);
  });
  it("Φ⁻¹ known values and round trip", () => {
    expect(normalQuantile(0.5)).toBe(0);
    expect(normalQuantile(0.975)).toBeCloseTo(1.959963984540054, 12);
    expect(normalQuantile(0.025)).toBeCloseTo(-1.959963984540054, 12);
    expect(normalQuantile(0.95)).toBeCloseTo(1.6448536269514722, 12);
    expect(normalQuantile(1e-10)).toBeCloseTo(-6.361340902404056, 8);
    for (const p of [0.001, 0.01, 0.2, 0.7, 0.99]) expect(normalCdf(normalQuantile(p))).toBeCloseTo(p, 14);
    expect(normalQuantile(0)).toBe(-Infinity);
    expect(() => normalQuantile(1.5)).toThrow(/outside \[0, 1\]/);
  });
});
