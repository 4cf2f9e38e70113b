/**
 * Tests lib/random.ts `fillRandbelow` (METHOD.md §7, §9): the bulk draw behind the bootstrap gives,
 * bit for bit, the values and the generator state of the plain definition — consecutive
 * `randbelow(n)` calls — for random and edge n, lengths around the 624-word state block, and
 * generators already part-way through a block.
 */
import { describe, expect, it } from "vitest";
import { PyRandom } from "../../lib/random.ts";

/** The plain definition: `length` consecutive randbelow(n) calls. */
function plain(rng: PyRandom, n: number, length: number): number[] {
  return Array.from({ length }, () => rng.randbelow(n));
}

/** Fill through the fast path, then check values and the state (the next 700 raw words) against the plain definition. */
function expectSameAsPlain(seed: number, n: number, length: number, skip: number, out: Uint16Array | Uint32Array | Int32Array | Float64Array): void {
  const fast = new PyRandom(seed);
  const slow = new PyRandom(seed);
  for (let i = 0; i < skip; i++) {
    fast.nextUint32();
    slow.nextUint32();
  }
  fast.fillRandbelow(n, out);
  expect(Array.from(out), `seed ${seed}, n ${n}, length ${length}, skip ${skip}`).toEqual(plain(slow, n, length));
  const after = (rng: PyRandom) => Array.from({ length: 700 }, () => rng.nextUint32());
  expect(after(fast)).toEqual(after(slow));
}

describe("fillRandbelow equals consecutive randbelow(n) calls", () => {
  it("edge n (1, powers of two and their neighbours, 2^16, 2^31 ± 1, 2^32 − 1) and lengths around the 624-word block", () => {
    const ns = [1, 2, 3, 4, 5, 7, 8, 9, 1023, 1024, 1025, 1034, 1534, 65535, 65536, 65537, 2 ** 31 - 1, 2 ** 31, 2 ** 31 + 1, 2 ** 32 - 1];
    const lengths = [0, 1, 311, 623, 624, 625, 1247, 1248, 1249, 5000];
    for (const n of ns) {
      for (const length of lengths) {
        const out = n <= 0x10000 ? new Uint16Array(length) : n <= 0x80000000 ? new Int32Array(length) : new Uint32Array(length);
        expectSameAsPlain(n % 97, n, length, 0, out);
      }
    }
  });

  it("random seeds, n, lengths and a generator part-way through its block, into every output array type", () => {
    const pick = new PyRandom(20261202);
    for (let trial = 0; trial < 60; trial++) {
      const seed = pick.randbelow(2 ** 32);
      const bits = 1 + pick.randbelow(32);
      const n = Math.max(1, Math.min(2 ** 32 - 1, pick.getrandbits(bits)));
      const length = pick.randbelow(4000);
      const skip = pick.randbelow(1500);
      const types = [Float64Array, Uint32Array, ...(n <= 0x80000000 ? [Int32Array] : []), ...(n <= 0x10000 ? [Uint16Array] : [])];
      const Type = types[pick.randbelow(types.length)];
      expectSameAsPlain(seed, n, length, skip, new Type(length));
    }
  });

  it("draws after randbelow calls on the same generator continue the same stream", () => {
    const fast = new PyRandom(5);
    const slow = new PyRandom(5);
    const out = new Uint16Array(3000);
    expect([fast.randbelow(10), fast.randbelow(1000)]).toEqual([slow.randbelow(10), slow.randbelow(1000)]);
    fast.fillRandbelow(1034, out);
    expect(Array.from(out)).toEqual(plain(slow, 1034, 3000));
    expect(fast.random()).toBe(slow.random());
  });

  it("rejects n outside [1, 2^32 − 1] and n too large for the output array", () => {
    const rng = new PyRandom(0);
    expect(() => rng.fillRandbelow(0, new Uint32Array(1))).toThrow(RangeError);
    expect(() => rng.fillRandbelow(1.5, new Uint32Array(1))).toThrow(/integer/);
    expect(() => rng.fillRandbelow(2 ** 32, new Float64Array(1))).toThrow(/2\^32/);
    expect(() => rng.fillRandbelow(65537, new Uint16Array(1))).toThrow(/Uint16Array/);
    expect(() => rng.fillRandbelow(2 ** 31 + 1, new Int32Array(1))).toThrow(/Int32Array/);
    // a refused call draws nothing
    expect(rng.nextUint32()).toBe(new PyRandom(0).nextUint32());
  });
});
