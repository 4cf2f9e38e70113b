/**
 * Tests lib/analysis/bootstrap.ts (METHOD.md §9): the bulk-drawn resamples (the memo path and the
 * path for streams too long to keep) equal, bit for bit, the plain definition — n consecutive
 * `PyRandom(seed).randbelow(n)` calls per resample, Δ* = Σ diff[drawn] × 100 / (n · s) — on random
 * inputs, seeds and sizes, including n = 1, n > 2^16 and the first size above the memo limit.
 */
import { describe, expect, it } from "vitest";
import { bootstrapDeltas, bootstrapPValue, pairedClusterBootstrap } from "../../lib/analysis/bootstrap.ts";
import { PyRandom } from "../../lib/random.ts";
import { budget } from "../helpers/budget.ts";

/** A reproducible 0/1 matrix n × s. */
function outcomes(rng: PyRandom, n: number, s: number, p: number): number[][] {
  return Array.from({ length: n }, () => Array.from({ length: s }, () => (rng.random() < p ? 1 : 0)));
}

/** The plain definition of the resampled Δ values, in draw order. */
function plainDeltas(a: number[][], b: number[][], resamples: number, seed: number): Float64Array {
  const n = a.length;
  const s = a[0].length;
  const diff = a.map((row, q) => row.reduce((sum, v, j) => sum + v - b[q][j], 0));
  const rng = new PyRandom(seed);
  const out = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    let total = 0;
    for (let i = 0; i < n; i++) total += diff[rng.randbelow(n)];
    out[r] = (total * 100) / (n * s);
  }
  return out;
}

const sameBits = (x: Float64Array, y: Float64Array) => x.length === y.length && Buffer.from(x.buffer, x.byteOffset, x.byteLength).equals(Buffer.from(y.buffer, y.byteOffset, y.byteLength));

describe("bulk-drawn bootstrap equals the plain definition", () => {
  it("random sizes and seeds, edge sizes (n = 1, 2, 623–625, B = 1), twice each (memo miss, then hit)", () => {
    const pick = new PyRandom(77);
    const cases: [number, number, number, number][] = [[1, 1, 1, 0], [1, 3, 50, 4], [2, 3, 1, 0], [623, 3, 7, 1], [624, 2, 5, 2], [625, 3, 3, 9], [1034, 3, 40, 0]];
    for (let i = 0; i < 12; i++) cases.push([1 + pick.randbelow(1500), 1 + pick.randbelow(5), 1 + pick.randbelow(300), pick.randbelow(2 ** 32)]);
    for (const [n, s, resamples, seed] of cases) {
      const a = outcomes(pick, n, s, 0.55);
      const b = outcomes(pick, n, s, 0.5);
      const expected = plainDeltas(a, b, resamples, seed);
      for (let twice = 0; twice < 2; twice++) {
        expect(sameBits(bootstrapDeltas(a, b, { resamples, seed }), expected), `n ${n}, s ${s}, B ${resamples}, seed ${seed}`).toBe(true);
      }
    }
  });

  it("the interval and p-value are the plain definition's sorted resamples", () => {
    const rng = new PyRandom(3);
    const a = outcomes(rng, 400, 3, 0.6);
    const b = outcomes(rng, 400, 3, 0.5);
    const sorted = plainDeltas(a, b, 2000, 11).sort();
    const type7 = (p: number) => {
      const h = (sorted.length - 1) * p;
      const below = Math.floor(h);
      return sorted[below] + (h - below) * (sorted[below + 1] - sorted[below]);
    };
    const r = pairedClusterBootstrap(a, b, { resamples: 2000, seed: 11 });
    expect([r.lo, r.hi]).toEqual([type7(0.025), type7(0.975)]);
    let low = 0;
    let high = 0;
    for (const v of sorted) {
      if (v <= 0) low++;
      if (v >= 0) high++;
    }
    expect(bootstrapPValue(a, b, { resamples: 2000, seed: 11 })).toBe(Math.min(1, (2 * (Math.min(low, high) + 1)) / 2001));
  });

  it("a stream above the memo limit (n = 65,537 > 2^16, B = 513: 33.6M draws) is drawn per resample, same values", () => {
    const rng = new PyRandom(9);
    const n = 65_537;
    const a = outcomes(rng, n, 1, 0.5);
    const b = outcomes(rng, n, 1, 0.5);
    expect(n * 513).toBeGreaterThan(1 << 25);
    expect(sameBits(bootstrapDeltas(a, b, { resamples: 513, seed: 4 }), plainDeltas(a, b, 513, 4))).toBe(true);
  }, budget(60_000));
});
