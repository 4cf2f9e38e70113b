// Tests lib/retrieval/dense.ts and lib/vector.ts: exact scoring (bit-identical to `dot`), the HNSW path above the exact limit (pool filter, exact rescoring, growth, replaced vectors, shards by key).
import { describe, expect, it } from "vitest";
import { PyRandom } from "../../lib/random.ts";
import { DenseIndex, dotInOrder, exactDenseScores } from "../../lib/retrieval/dense.ts";
import { dot, l2Normalize, VectorError } from "../../lib/vector.ts";

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

describe("exact scoring is bit-identical to dot", () => {
  it("dotInOrder === dot for lengths around the unroll width and at 1,024 dims", () => {
    const rng = new PyRandom(11);
    for (const n of [1, 2, 3, 4, 5, 7, 8, 9, 1023, 1024]) {
      for (let trial = 0; trial < 20; trial++) {
        const a = Float32Array.from({ length: n }, () => rng.random() * 2 - 1);
        const b = Float32Array.from({ length: n }, () => rng.random() * 2 - 1);
        expect(dotInOrder(a, b)).toBe(dot(a, b)); // same float64 additions in the same order
      }
    }
  });
  it("exactDenseScores === dot per row, in row-list order", () => {
    const rng = new PyRandom(12);
    const vectors = Array.from({ length: 30 }, () => randomUnit(rng, 1024));
    const query = randomUnit(rng, 1024);
    const rows = [29, 0, 7, 7, 13];
    expect(exactDenseScores(query, vectors, rows)).toEqual(rows.map((row) => dot(query, vectors[row])));
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

describe("DenseIndex shards (one HNSW graph per key)", () => {
  const dim = 8;
  // Rows 0..299: key "A" for even rows, "B" for odd rows.
  const setup = (seed: number) => {
    const rng = new PyRandom(seed);
    const vectors = Array.from({ length: 300 }, () => randomUnit(rng, dim));
    const keys = vectors.map((_, row) => (row % 2 === 0 ? "A" : "B"));
    const index = new DenseIndex(dim, { exactPoolLimit: 10, minShortlist: 5 });
    return { rng, vectors, keys, index, keyOf: (row: number) => keys[row] };
  };

  it("a pool that is one whole shard: shortlist of that shard's rows containing its exact best", () => {
    const { rng, vectors, index, keyOf } = setup(21);
    const pool = vectors.map((_, i) => i).filter((i) => i % 2 === 0);
    const query = randomUnit(rng, dim);
    const r = index.scores(query, vectors, pool, 1, keyOf);
    expect(r.mode).toBe("hnsw");
    expect(r.rows).toHaveLength(5); // max(4·1, 5)
    expect(r.rows.every((row) => row % 2 === 0)).toBe(true);
    expect(index.indexedCount).toBe(150); // only shard A's graph was built
    const exact = exactDenseScores(query, vectors, pool);
    expect(r.rows).toContain(pool[exact.indexOf(Math.max(...exact))]);
    expect(r.scores).toEqual(exactDenseScores(query, vectors, r.rows));
  });

  it("a pool across shards: each shard's shortlist, cut to the best rows overall; a small part is taken whole", () => {
    const { rng, vectors, index, keyOf } = setup(22);
    const query = randomUnit(rng, dim);
    // Rows 1, 3, 5 (shard B) become nearly the query: B contributes only these 3 pool rows (≤ 5 → taken whole).
    for (const row of [1, 3, 5]) vectors[row] = l2Normalize(query.map((x, i) => x + (i === row ? 0.001 : 0)));
    const pool = [...vectors.map((_, i) => i).filter((i) => i % 2 === 0), 1, 3, 5].sort((a, b) => a - b);
    const r = index.scores(query, vectors, pool, 1, keyOf);
    expect(r.rows).toHaveLength(5);
    expect(r.rows).toEqual([...r.rows].sort((a, b) => a - b)); // pool order
    expect(r.rows.filter((row) => row % 2 === 1)).toEqual([1, 3, 5]); // the near-copies, plus 2 rows of A
    const top3 = [...r.scores].sort((a, b) => b - a).slice(0, 3);
    expect([1, 3, 5].map((row) => r.scores[r.rows.indexOf(row)]).sort((a, b) => b - a)).toEqual(top3);
    expect(index.indexedCount).toBe(150); // shard B's graph is never needed
  });

  it("a row whose key changes leaves its old shard's graph", () => {
    const { rng, vectors, keys, index, keyOf } = setup(23);
    const query = randomUnit(rng, dim);
    const shardA = () => vectors.map((_, i) => i).filter((i) => keys[i] === "A");
    vectors[10] = query; // row 10 (shard A) is exactly the query: A's best
    expect(index.scores(query, vectors, shardA(), 1, keyOf).rows).toContain(10);
    expect(index.indexedCount).toBe(150);
    vectors[20] = query; // a merge re-embedded row 20 (now exactly the query) …
    vectors[10] = randomUnit(rng, dim); // … and row 10, moving it to shard B
    keys[10] = "B";
    const r = index.scores(query, vectors, shardA(), 1, keyOf);
    // Had row 10 stayed live in A's graph (searched without a filter: the pool is all of A), it
    // would take a shortlist place and be dropped as outside the pool, leaving 4 rows.
    expect(r.rows).toHaveLength(5);
    expect(r.rows).toContain(20);
    expect(r.rows).not.toContain(10);
    expect(index.indexedCount).toBe(149);
    const all = vectors.map((_, i) => i);
    const both = index.scores(vectors[10], vectors, all, 1, keyOf); // row 10's new vector, now in B's graph
    expect(index.indexedCount).toBe(300);
    expect(both.rows).toContain(10);
    expect(both.scores[both.rows.indexOf(10)]).toBe(Math.max(...both.scores));
  });
});
