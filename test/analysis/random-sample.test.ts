// Tests lib/analysis/random-sample.ts: pySample equals CPython 3.11 random.Random(seed).sample on both of its branches.
import { describe, expect, it } from "vitest";
import { PyRandom } from "../../lib/random.ts";
import { pySample } from "../../lib/analysis/random-sample.ts";

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

// Expected lists were printed by CPython 3.11.7: `random.Random(seed).sample(range(n), k)` (an external
// reference, not this code). setsize = 21 (+ 4^ceil(log4(3k)) when k > 5) picks the branch:
// n ≤ setsize → partial pool shuffle, else rejection sampling with a selected set.
describe("pySample (CPython Random.sample)", () => {
  it("pool branch: n = 10, k = 4 (setsize 21)", () => {
    expect(pySample(new PyRandom(0), range(10), 4)).toEqual([6, 9, 0, 2]);
  });
  it("pool branch, k = n: a permutation", () => {
    expect(pySample(new PyRandom(0), range(5), 5)).toEqual([3, 4, 0, 1, 2]);
  });
  it("set branch: n = 100, k = 6 (setsize 21 + 4^ceil(log4 18) = 85 < 100)", () => {
    expect(pySample(new PyRandom(7), range(100), 6)).toEqual([41, 19, 50, 83, 6, 9]);
  });
  it("set branch: n = 300, k = 20", () => {
    expect(pySample(new PyRandom(3), range(300), 20)).toEqual([121, 278, 66, 189, 242, 297, 33, 6, 240, 132, 282, 119, 98, 276, 281, 243, 203, 77, 118, 267]);
  });
  it("set branch with a large k: n = 1534, k = 150 (setsize 21 + 4^5 = 1045)", () => {
    const s = pySample(new PyRandom(0), range(1534), 150);
    expect(s.slice(0, 10)).toEqual([788, 861, 82, 530, 1047, 995, 829, 621, 976, 733]);
    expect([...s].sort((a, b) => a - b).slice(0, 5)).toEqual([2, 28, 33, 67, 79]);
    expect(new Set(s).size).toBe(150);
  });
  it("pool branch with a large k: n = 200, k = 150 (200 ≤ 1045)", () => {
    const s = pySample(new PyRandom(0), range(200), 150);
    expect(s.slice(0, 10)).toEqual([98, 194, 107, 10, 66, 130, 124, 103, 77, 122]);
    expect(s.slice(-5)).toEqual([38, 43, 104, 1, 65]);
  });
  it("multi-word seed 2^40 + 3, k = 0, and bad k", () => {
    expect(pySample(new PyRandom(2 ** 40 + 3), range(50), 5)).toEqual([14, 3, 35, 6, 36]);
    expect(pySample(new PyRandom(0), range(10), 0)).toEqual([]);
    expect(() => pySample(new PyRandom(0), range(3), 4)).toThrow(RangeError);
    expect(() => pySample(new PyRandom(0), range(3), -1)).toThrow(RangeError);
  });
  it("samples the elements, not only indices", () => {
    expect(pySample(new PyRandom(0), ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"], 4)).toEqual(["g", "j", "a", "c"]);
  });
});
