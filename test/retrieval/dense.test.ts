// Tests lib/retrieval/dense.ts and vector.ts: exact scoring, the HNSW path above the exact limit (pool filter, exact rescoring, growth, replaced vectors).
import { describe, expect, it } from "vitest";
import { PyRandom } from "../../lib/experiment/random.ts";
import { DenseIndex, exactDenseScores } from "../../lib/retrieval/dense.ts";
import { dot, l2Normalize, VectorError } from "../../lib/retrieval/vector.ts";

function randomUnit(rng: PyRandom, dim: number): Float32Array {
  return l2Normalize(Array.from({ length: dim }, () => rng.random() * 2 - 1));
}

describe("vector helpers", () => {
  it("l2Normalize: (3, 4) → (0.6, 0.8); zero vector is an error", () => {
    expect(Array.from(l2Normalize([3, 4]))).toEqual([Math.fround(0.6), Math.fround(0.8)]);
    expect(() => l2Normalize([0, 0])).toThrow(VectorError);
  });
  it("dot", () => {
    expect(dot(Float32Array.from([1, 2, 3]), Float32Array.from([4, 5, 6]))).toBe(32);
  });
});

describe("DenseIndex", () => {
  it("scores the whole pool exactly at or below the limit", () => {
    const vectors = [Float32Array.from([1, 0]), Float32Array.from([0.6, 0.8]), Float32Array.from([0, 1])];
    const index = new DenseIndex(2, { exactPoolLimit: 3 });
    const r = index.scores(Float32Array.from([1, 0]), vectors, [2, 0, 1], 1);
    expect(r.mode).toBe("exact");
    expect(r.rows).toEqual([2, 0, 1]);
    expect(r.scores.map((s) => Number(s.toFixed(6)))).toEqual([0, 1, 0.6]);
    expect(index.indexedCount).toBe(0); // no HNSW index is built for exact pools
  });

  it("above the limit: an HNSW shortlist of pool rows only, rescored exactly, containing the exact best", () => {
    const rng = new PyRandom(7);
    const dim = 16;
    const vectors = Array.from({ length: 1200 }, () => randomUnit(rng, dim)); // > initial capacity 1024 → resizeIndex
    const index = new DenseIndex(dim, { exactPoolLimit: 100, minShortlist: 20 });
    const pool = vectors.map((_, i) => i).filter((i) => i % 3 !== 0);
    const query = randomUnit(rng, dim);
    const r = index.scores(query, vectors, pool, 4);
    expect(r.mode).toBe("hnsw");
    expect(index.indexedCount).toBe(1200);
    expect(r.rows).toHaveLength(20); // max(4·4, 20)
    const poolSet = new Set(pool);
    expect(r.rows.every((row) => poolSet.has(row))).toBe(true);
    expect(r.rows).toEqual([...r.rows].sort((a, b) => a - b)); // kept in pool (row) order
    expect(r.scores).toEqual(exactDenseScores(query, vectors, r.rows));
    const exact = exactDenseScores(query, vectors, pool);
    const bestRow = pool[exact.indexOf(Math.max(...exact))];
    expect(r.rows).toContain(bestRow);
  });

  it("picks up appended rows and replaced (re-embedded) vectors on the next call", () => {
    const rng = new PyRandom(3);
    const dim = 8;
    const vectors = Array.from({ length: 50 }, () => randomUnit(rng, dim));
    const index = new DenseIndex(dim, { exactPoolLimit: 10, minShortlist: 4 });
    const query = randomUnit(rng, dim);
    const all = () => vectors.map((_, i) => i);
    index.scores(query, vectors, all(), 1);
    vectors[17] = query; // a merge replaced row 17's vector with the query direction
    vectors.push(l2Normalize(query.map((x, i) => (i === 0 ? x + 0.01 : x)))); // new row 50, nearly the query
    const r = index.scores(query, vectors, all(), 1);
    expect(index.indexedCount).toBe(51);
    expect(r.rows).toContain(17);
    expect(r.rows).toContain(50);
  });
});
