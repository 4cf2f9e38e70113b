// Tests lib/analysis/bootstrap.ts: known answers of the paired query-cluster bootstrap (METHOD.md §9), seeding, BCa, p-value, input checks.
import { describe, expect, it } from "vitest";
import { bootstrapPValue, jackknifeAcceleration, pairedClusterBootstrap } from "../../lib/analysis/bootstrap.ts";
import { MeritError } from "../../lib/errors.ts";
import { PyRandom } from "../../lib/random.ts";

/** n × s matrix filled by f(q, s). */
const matrix = (n: number, s: number, f: (q: number, s: number) => number) => Array.from({ length: n }, (_, q) => Array.from({ length: s }, (_, j) => f(q, j)));

/** A reproducible noisy 0/1 matrix (PyRandom-seeded; only used as "some data"). */
function noisy(n: number, p: number, seed: number): number[][] {
  const rng = new PyRandom(seed);
  return matrix(n, 3, () => (rng.random() < p ? 1 : 0));
}

describe("pairedClusterBootstrap known answers", () => {
  it("identical methods ⇒ Δ = 0 with a zero-width interval", () => {
    const a = noisy(300, 0.6, 1);
    for (const method of ["percentile", "bca"] as const) {
      expect(pairedClusterBootstrap(a, a.map((r) => [...r]), { method, resamples: 500 })).toEqual({ delta: 0, lo: 0, hi: 0, resamples: 500, seed: 0 });
    }
  });

  it("a constant per-query shift ⇒ Δ equals it and the interval collapses", () => {
    // every query: A correct under all 3 seeds, B under none → every cell differs by 1 → 100 pp
    expect(pairedClusterBootstrap(matrix(50, 3, () => 1), matrix(50, 3, () => 0), { resamples: 200 })).toMatchObject({ delta: 100, lo: 100, hi: 100 });
    // every query: exactly one of its 3 seeds flips 0 → 1 → each drawn query adds 1 of 3 cells → Δ = 100/3 pp in every resample
    const b = noisy(40, 0.5, 2).map((row) => row.map(() => 0));
    const a = b.map((row, q) => row.map((_, s) => (s === q % 3 ? 1 : 0)));
    const r = pairedClusterBootstrap(a, b, { resamples: 300, method: "bca" });
    expect(r).toMatchObject({ delta: 100 / 3, lo: 100 / 3, hi: 100 / 3 });
    // and the opposite direction is negative
    expect(pairedClusterBootstrap(b, a, { resamples: 300 }).delta).toBe(-100 / 3);
  });

  it("two queries with diffs 3 and 0: Δ = 50 and the 95% interval spans [0, 100]", () => {
    // cells: q0 contributes 3 − 0, q1 0 − 0 → Δ = 3/6 × 100 = 50. A resample draws {q0,q0} → 100,
    // {q0,q1} → 50, {q1,q1} → 0 with probabilities ¼, ½, ¼: both 2.5% and 97.5% quantiles sit in the ¼ masses.
    const a = [[1, 1, 1], [0, 0, 0]];
    const b = [[0, 0, 0], [0, 0, 0]];
    expect(pairedClusterBootstrap(a, b)).toEqual({ delta: 50, lo: 0, hi: 100, resamples: 10000, seed: 0 });
    // jackknife: θ(−q0) = 0, θ(−q1) = 100, symmetric around 50 → â = 0, ẑ0 ≈ 0 → BCa gives the same interval
    expect(pairedClusterBootstrap(a, b, { method: "bca" })).toMatchObject({ delta: 50, lo: 0, hi: 100 });
  });
});

describe("seeding", () => {
  const a = noisy(200, 0.55, 3);
  const b = noisy(200, 0.5, 4);

  it("is bit-identical for a fixed seed, also after other seeds were used in between", () => {
    const first = pairedClusterBootstrap(a, b, { seed: 7, resamples: 2000 });
    pairedClusterBootstrap(a, b, { seed: 8, resamples: 2000 });
    pairedClusterBootstrap(a, b, { seed: 7, resamples: 1999 });
    const again = pairedClusterBootstrap(a, b, { seed: 7, resamples: 2000 });
    expect(again).toStrictEqual(first);
    expect(Object.is(again.lo, first.lo) && Object.is(again.hi, first.hi)).toBe(true);
  });

  it("seed 0 is a real seed: the default, distinct from seed 1, drawing PyRandom(0).randbelow(n)", () => {
    const explicit = pairedClusterBootstrap(a, b, { seed: 0, resamples: 2000 });
    expect(pairedClusterBootstrap(a, b, { resamples: 2000 })).toStrictEqual(explicit);
    expect(explicit.seed).toBe(0);
    const one = pairedClusterBootstrap(a, b, { seed: 1, resamples: 2000 });
    expect([one.lo, one.hi]).not.toEqual([explicit.lo, explicit.hi]);
    // With B = 1 the interval is the single resample: n draws of randbelow(n) from PyRandom(0),
    // Δ* = Σ diff[drawn] × 100 / (n · 3).
    const rng = new PyRandom(0);
    let sum = 0;
    for (let i = 0; i < 200; i++) {
      const q = rng.randbelow(200);
      sum += a[q][0] - b[q][0] + a[q][1] - b[q][1] + a[q][2] - b[q][2];
    }
    const single = pairedClusterBootstrap(a, b, { seed: 0, resamples: 1 });
    expect(single.lo).toBe((sum * 100) / 600);
    expect(single.hi).toBe(single.lo);
  });
});

describe("BCa", () => {
  // 50 queries: 5 with A right / B wrong under all 3 seeds, 45 ties → Δ = 15/150 × 100 = 10 pp
  const a = matrix(50, 3, (q) => (q < 5 ? 1 : 0));
  const b = matrix(50, 3, () => 0);

  it("acceleration from the query jackknife, by hand", () => {
    // θ(−i) = 1200/147 for the 5 shifted queries, 1500/147 for the 45 others; mean 10.
    // d = 270/147 (×5) and −30/147 (×45): Σd³ = (5·270³ − 45·30³)/147³ = 97,200,000/147³,
    // Σd² = (5·270² + 45·30²)/147² = 405,000/147² ⇒ â = 97,200,000 / (6 · 405,000^1.5) ≈ 0.06285
    const diff = Float64Array.from({ length: 50 }, (_, q) => (q < 5 ? 3 : 0));
    expect(jackknifeAcceleration(diff, { queries: 50, seeds: 3 })).toBeCloseTo(97_200_000 / (6 * 405_000 ** 1.5), 12);
    expect(jackknifeAcceleration(new Float64Array([2, 2, 2]), { queries: 3, seeds: 3 })).toBe(0);
  });

  it("shifts the interval right of the percentile one for this right-skewed Δ*", () => {
    // â > 0 and ẑ0 = Φ⁻¹(P[Δ* < 10] + ½P[Δ* = 10]) ≈ Φ⁻¹(0.52) > 0 both move the bounds up
    const p = pairedClusterBootstrap(a, b, { resamples: 4000 });
    const bca = pairedClusterBootstrap(a, b, { resamples: 4000, method: "bca" });
    expect(p.delta).toBe(10);
    expect(bca.delta).toBe(10);
    expect(bca.lo).toBeGreaterThanOrEqual(p.lo);
    expect(bca.hi).toBeGreaterThan(p.hi);
    expect(bca.lo).toBeLessThanOrEqual(10);
    expect(bca.hi).toBeGreaterThanOrEqual(10);
  });
});

describe("bootstrapPValue", () => {
  it("identical methods ⇒ p = 1; a constant shift ⇒ p = 2 / (B + 1)", () => {
    const a = noisy(30, 0.5, 5);
    expect(bootstrapPValue(a, a)).toBe(1);
    // no resample has Δ* ≤ 0: p = 2 · (0 + 1) / (10,000 + 1)
    expect(bootstrapPValue(matrix(20, 3, () => 1), matrix(20, 3, () => 0))).toBe(2 / 10001);
  });
});

describe("input checks", () => {
  const ok = [[1, 0, 1]];
  it("mismatched query counts", () => expect(() => pairedClusterBootstrap(ok, [[1, 0, 1], [0, 0, 0]])).toThrow(/a has 1 queries but b has 2/));
  it("ragged rows", () => {
    expect(() => pairedClusterBootstrap([[1, 0, 1], [1, 0]], [[1, 0, 1], [0, 0, 0]])).toThrow(/a\[1\] has 2 stream orders but a\[0\] has 3/);
    expect(() => pairedClusterBootstrap(ok, [[1, 0]])).toThrow(/b\[0\] has 2 stream orders/);
  });
  it("values other than 0/1", () => expect(() => pairedClusterBootstrap(ok, [[1, 0.5, 1]])).toThrow(/b\[0\]\[1\] is 0.5/));
  it("empty input", () => expect(() => pairedClusterBootstrap([], [])).toThrow(MeritError));
  it("bad options", () => {
    expect(() => pairedClusterBootstrap(ok, ok, { resamples: 0 })).toThrow(/resamples/);
    expect(() => pairedClusterBootstrap(ok, ok, { seed: -1 })).toThrow(/seed/);
    expect(() => pairedClusterBootstrap(ok, ok, { level: 95 })).toThrow(/level/);
    expect(() => pairedClusterBootstrap(ok, ok, { method: "basic" as "bca" })).toThrow(/method/);
  });
});
