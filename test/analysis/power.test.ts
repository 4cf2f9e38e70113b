// Tests lib/analysis/power.ts (minimum detectable effect, stream orders needed) and lib/analysis/holm.ts on hand-computed cases.
import { describe, expect, it } from "vitest";
import { bootstrapDeltas } from "../../lib/analysis/bootstrap.ts";
import { holmAdjust } from "../../lib/analysis/holm.ts";
import { mdeAt, pairedPower } from "../../lib/analysis/power.ts";

describe("pairedPower", () => {
  // d_qs (pp): q0 [100, 100], q1 [100, 0], q2 [0, 0], q3 [0, 0] → Δ = 300/8 = 37.5
  const a = [[1, 1], [1, 0], [0, 0], [1, 1]];
  const b = [[0, 0], [0, 0], [0, 0], [1, 1]];
  const r = pairedPower(a, b, { resamples: 20_000, seed: 3 });
  it("variance components, SE and MDE", () => {
    expect(r.delta).toBe(37.5);
    // within: only q1 varies, sample variance of [100, 0] = 5000 → σ_w² = 5000/4 = 1250
    expect(r.varWithin).toBe(1250);
    // per-query means 100, 50, 0, 0: sample variance 6875/3; σ_b² = 6875/3 − 1250/2 = 1666.67
    expect(r.varBetween).toBeCloseTo(6875 / 3 - 625, 9);
    // bootstrap SE of a mean of 4 draws: population sd / 2 = sqrt(6875/3 · 3/4) / 2 = 20.73
    expect(r.se).toBeCloseTo(Math.sqrt((6875 / 4) / 4), 0);
    expect(r.factor).toBeCloseTo(1.959964 + 0.841621, 5);
    expect(r.mde).toBeCloseTo(r.factor * r.se, 12);
    expect(mdeAt(r, 2)).toBeCloseTo(r.mde, 12);
  });
  it("the SE is the standard deviation of the same resamples as the interval", () => {
    const deltas = [...bootstrapDeltas(a, b, { resamples: 20_000, seed: 3 })];
    const mean = deltas.reduce((s, x) => s + x, 0) / deltas.length;
    const sd = Math.sqrt(deltas.reduce((s, x) => s + (x - mean) ** 2, 0) / (deltas.length - 1));
    expect(r.se).toBe(sd);
  });
  it("no number of stream orders helps when the between-query variance alone exceeds Δ", () => {
    // MDE(∞) = factor · SE · sqrt(σ_b² / (σ_b² + σ_w²/2)) ≈ 2.80 · 20.7 · 0.853 ≈ 49.5 > 37.5
    expect(mdeAt(r, Number.POSITIVE_INFINITY)).toBeGreaterThan(37.5);
    expect(r.ordersNeeded).toBeNull();
  });
  it("orders needed = the least S' with MDE(S') ≤ |Δ| (checked against a plain search)", () => {
    // 400 queries, 3 orders; per query a latent rate p, A correct with p + 0.04, B with p (seeded LCG)
    let x = 12345;
    const rnd = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const a: number[][] = [];
    const b: number[][] = [];
    for (let q = 0; q < 400; q++) {
      const p = rnd();
      a.push([0, 1, 2].map(() => (rnd() < Math.min(1, p + 0.04) ? 1 : 0)));
      b.push([0, 1, 2].map(() => (rnd() < p ? 1 : 0)));
    }
    const p = pairedPower(a, b, { resamples: 5000, seed: 0 });
    expect(p.delta).toBeCloseTo(10 / 3, 9); // 40 more correct cells of 1,200
    expect(p.mde).toBeGreaterThan(Math.abs(p.delta)); // not detectable with 3 orders …
    expect(mdeAt(p, Number.POSITIVE_INFINITY)).toBeLessThan(Math.abs(p.delta)); // … but with enough of them
    let plain: number | null = null;
    for (let s = 1; s <= 10_000 && plain === null; s++) if (mdeAt(p, s) <= Math.abs(p.delta)) plain = s;
    expect(plain).toBeGreaterThan(3);
    expect(p.ordersNeeded).toBe(plain);
    expect(mdeAt(p, p.ordersNeeded! - 1)).toBeGreaterThan(Math.abs(p.delta));
  });
  it("Δ = 0 or a single stream order: not computable", () => {
    expect(pairedPower([[1], [0]], [[0], [1]]).ordersNeeded).toBeNull();
    expect(pairedPower([[1, 0], [0, 1]], [[1, 0], [0, 1]]).ordersNeeded).toBeNull();
  });
});

describe("holmAdjust", () => {
  it("step-down, monotone, capped at 1, in input order", () => {
    expect(holmAdjust([0.01, 0.04, 0.03])).toEqual([0.03, 0.06, 0.06]);
    expect(holmAdjust([0.5, 0.01])).toEqual([0.5, 0.02]);
    expect(holmAdjust([0.4, 0.6, 0.9])).toEqual([1, 1, 1]);
    expect(holmAdjust([0.2])).toEqual([0.2]);
    expect(holmAdjust([])).toEqual([]);
  });
});
