// The int8 prefilter (lib/retrieval/int8-scan.ts): its bounds bracket the exact float64 score of
// every row (both kernels, several dimensions, rows of several groups, zero and constant vectors),
// its candidates hold the exact top k and every row tied with the k-th — and, on distinct vectors,
// far fewer rows than the pool — and it declines (null) what it cannot vouch for.
import { describe, expect, it } from "vitest";
import { exactDenseScores } from "../../lib/retrieval/dense.ts";
import { Int8Rows } from "../../lib/retrieval/int8-scan.ts";
import { PyRandom } from "../../lib/random.ts";

const unit = (rng: PyRandom, d: number): Float32Array => {
  const v = Float32Array.from({ length: d }, () => rng.random() * 2 - 1);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};

/** A store of `n` rows (unit vectors; row 3 zero, row 5 constant when present) spread over three groups. */
function store(seed: number, n: number, d: number): { rng: PyRandom; rows: Int8Rows; vectors: Float32Array[] } {
  const rng = new PyRandom(seed);
  const rows = new Int8Rows(d);
  const vectors = Array.from({ length: n }, (_, i) => (i === 3 ? new Float32Array(d) : i === 5 ? new Float32Array(d).fill(1 / Math.sqrt(d)) : unit(rng, d)));
  vectors.forEach((v, i) => expect(rows.add(v, ["a", "b", "c"][i % 3])).toBe(i));
  return { rng, rows, vectors };
}

/** The exact top k of `pool` (indices into it), ties in pool order, and every index tied with the k-th. */
function exactTop(scores: number[], k: number): { top: number[]; tied: number[] } {
  const order = scores.map((s, i) => ({ s, i })).sort((a, b) => b.s - a.s || a.i - b.i);
  const kth = order[Math.min(k, order.length) - 1].s;
  return { top: order.slice(0, k).map((x) => x.i), tied: order.filter((x) => x.s === kth).map((x) => x.i) };
}

describe("Int8Rows", () => {
  it("brackets every row's exact score, with the same sums from both kernels, in several dimensions", () => {
    for (const d of [16, 24, 1000, 1024]) {
      const { rng, rows, vectors } = store(d, 300, d);
      const contiguous = Array.from({ length: 300 }, (_, i) => i); // runs: one row at a time
      const strewn = Array.from({ length: 300 }, (_, i) => (i * 7) % 300); // no runs: four at a time
      for (const query of [unit(rng, d), unit(rng, d), vectors[10], new Float32Array(d)]) {
        for (const pool of [contiguous, strewn]) {
          const b = rows.bounds(query, pool);
          expect(b).not.toBeNull();
          const exact = exactDenseScores(query, vectors, pool);
          exact.forEach((s, i) => {
            expect(b!.lower[i]).toBeLessThanOrEqual(s);
            expect(b!.upper[i]).toBeGreaterThanOrEqual(s);
          });
        }
        // the same row, read by either kernel: the same bounds (integer sums)
        const a = rows.bounds(query, contiguous)!;
        const lower = Float64Array.from(a.lower.subarray(0, 300));
        const c = rows.bounds(query, strewn)!;
        strewn.forEach((row, i) => expect(c.lower[i]).toBe(lower[row]));
      }
    }
  });

  it("keeps the exact top k and every row tied with the k-th, in pool order, and cuts a pool of distinct vectors", () => {
    const { rng, rows, vectors } = store(7, 2000, 64);
    // ties: rows 1500… repeat earlier vectors
    const tied = new Int8Rows(64);
    const withTies = vectors.map((v, i) => (i >= 1500 ? vectors[i % 40] : v));
    withTies.forEach((v, i) => tied.add(v, i % 2 === 0 ? "x" : "y"));
    for (let q = 0; q < 8; q++) {
      const query = q === 0 ? vectors[17] : unit(rng, 64);
      for (const [store8, vs] of [[rows, vectors], [tied, withTies]] as const) {
        for (const pool of [Array.from({ length: 2000 }, (_, i) => i), Array.from({ length: 700 }, (_, i) => (i * 3) % 2000).sort((a, b) => a - b)]) {
          const scores = exactDenseScores(query, vs, pool);
          for (const k of [1, 4, 64]) {
            const got = store8.candidates(query, pool, k);
            expect(got).not.toBeNull();
            const kept = [...got!];
            expect(kept).toEqual([...kept].sort((a, b) => a - b));
            const { top, tied: ties } = exactTop(scores, k);
            for (const i of [...top, ...ties]) expect(kept).toContain(i);
            if (store8 === rows && k <= 4) expect(kept.length).toBeLessThan(pool.length / 4);
          }
        }
      }
    }
  });

  it("declines what it cannot vouch for", () => {
    const { rng, rows } = store(3, 50, 32);
    const query = unit(rng, 32);
    expect(rows.bounds(query, [0, 50])).toBeNull(); // a row not stored
    expect(rows.bounds(query, [0, 1.5])).toBeNull();
    expect(rows.bounds(unit(rng, 16), [0, 1])).toBeNull(); // another length
    expect(rows.bounds(Float32Array.from(query, (x, i) => (i === 2 ? Number.NaN : x)), [0, 1])).toBeNull();
    expect(rows.candidates(query, [0, 1, 2], 0)).toEqual(new Int32Array(0));
    expect([...rows.candidates(query, [4, 9, 2], 5)!]).toEqual([0, 1, 2]);
    rows.add(Float32Array.from(query, (x, i) => (i === 0 ? Number.POSITIVE_INFINITY : x)));
    expect(rows.bounds(query, [0, 1])).toBeNull(); // from a row that is not finite on
    expect(rows.candidates(query, [0, 1], 1)).toBeNull();
  });
});
