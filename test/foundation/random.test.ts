/**
 * Tests lib/random.ts (METHOD.md §7): hand-derived answers from the MT19937 reference
 * output, then bit-exact parity with CPython 3.11 vectors from test/fixtures/random/generate.py.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { PyRandom, randomSameTypeSeed } from "../../lib/random.ts";

const FIXTURES = fileURLToPath(new URL("../fixtures/random/", import.meta.url));
const readFixture = (name: string) => JSON.parse(readFileSync(FIXTURES + name, "utf8"));

interface SeedVectors {
  seed: string;
  getrandbits: string[];
  random: number[];
  randbelow: string[];
  shuffle: Record<string, number[]>;
  choice: string[];
}
const VECTORS = readFixture("random.json") as {
  getrandbits_ks: number[];
  randbelow_ns: string[];
  seeds: SeedVectors[];
  long_runs: Record<string, number[]>;
  mixed_seed7: [string, number | string][];
};

// Matsumoto & Nishimura's mt19937ar.out: init_by_array({0x123, 0x234, 0x345, 0x456}) gives these
// first ten genrand_int32 outputs. CPython seeds with the integer's 32-bit little-endian words, so
// that key is the seed 0x456·2^96 + 0x345·2^64 + 0x234·2^32 + 0x123.
const REFERENCE_SEED = (0x456n << 96n) | (0x345n << 64n) | (0x234n << 32n) | 0x123n;
const REFERENCE_OUTPUTS = [1067595299, 955945823, 477289528, 4107218783, 4228976476, 3344332714, 3355579695, 227628506, 810200273, 2591290167];

describe("PyRandom against the MT19937 reference output (hand-derived)", () => {
  it("reproduces mt19937ar.out for init_by_array({0x123, 0x234, 0x345, 0x456})", () => {
    const r = new PyRandom(REFERENCE_SEED);
    expect(REFERENCE_OUTPUTS.map(() => r.nextUint32())).toEqual(REFERENCE_OUTPUTS);
  });

  it("getrandbits(k ≤ 32) keeps the top k bits of one output", () => {
    // 1067595299 >>> 25 = floor(1067595299 / 33554432) = 31; 955945823 >>> 0 = 955945823.
    const r = new PyRandom(REFERENCE_SEED);
    expect(r.getrandbits(7)).toBe(31);
    expect(r.getrandbits(32)).toBe(955945823);
  });

  it("getrandbits(0) is 0 and draws nothing", () => {
    const r = new PyRandom(REFERENCE_SEED);
    expect(r.getrandbits(0)).toBe(0);
    expect(r.getrandbitsBig(0)).toBe(0n);
    expect(r.nextUint32()).toBe(1067595299);
  });

  it("getrandbitsBig assembles words least significant first and trims the last word", () => {
    // k = 64: 955945823·2^32 + 1067595299. k = 40 (after output 3 is skipped): low word = output 4
    // = 4107218783, high word = output 5 >>> 24 = floor(4228976476 / 16777216) = 252.
    const r = new PyRandom(REFERENCE_SEED);
    expect(r.getrandbitsBig(64)).toBe(955945823n * 2n ** 32n + 1067595299n);
    r.nextUint32(); // 477289528
    expect(r.getrandbitsBig(40)).toBe(252n * 2n ** 32n + 4107218783n);
  });

  it("random() is (a·2^26 + b)/2^53 with a = u1 >>> 5, b = u2 >>> 6", () => {
    // a = floor(1067595299 / 32) = 33362353, b = floor(955945823 / 64) = 14936653.
    expect(new PyRandom(REFERENCE_SEED).random()).toBe((33362353 * 2 ** 26 + 14936653) / 2 ** 53);
  });

  it("randbelow rejects draws ≥ n and keeps drawing", () => {
    // randbelow(3): k = 2, values u >>> 30 of outputs 4..8 are 3, 3, 3, 3, 0
    // (4107218783, 4228976476, 3344332714, 3355579695 are all ≥ 3·2^30 = 3221225472; 227628506 < 2^30).
    const r = new PyRandom(REFERENCE_SEED);
    for (let i = 0; i < 3; i++) r.nextUint32();
    expect(r.randbelow(3)).toBe(0);
    expect(r.nextUint32()).toBe(810200273); // exactly five outputs were consumed
  });

  it("shuffle walks i from n−1 down to 1 with j = randbelow(i+1)", () => {
    // i = 2: randbelow(3) → 1067595299 >>> 30 = 0, swap x[2], x[0] → [2, 1, 0].
    // i = 1: randbelow(2) → 955945823 >>> 31 = 0, swap x[1], x[0] → [1, 2, 0].
    const x = [0, 1, 2];
    new PyRandom(REFERENCE_SEED).shuffle(x);
    expect(x).toEqual([1, 2, 0]);
  });
});

describe("PyRandom is bit-exact with CPython 3.11 random.Random", () => {
  for (const v of VECTORS.seeds) {
    const seed = BigInt(v.seed);
    describe(`seed ${v.seed}`, () => {
      it("getrandbits", () => {
        const r = new PyRandom(seed);
        const got = VECTORS.getrandbits_ks.map((k) => (k <= 32 ? String(r.getrandbits(k)) : r.getrandbitsBig(k).toString()));
        expect(got).toEqual(v.getrandbits);
        const big = new PyRandom(seed);
        expect(VECTORS.getrandbits_ks.map((k) => big.getrandbitsBig(k).toString())).toEqual(v.getrandbits);
      });

      it("random", () => {
        const r = new PyRandom(seed);
        expect(v.random.map(() => r.random())).toEqual(v.random);
      });

      it("randbelow (number path for n < 2^53, bigint path for all n)", () => {
        const big = new PyRandom(seed);
        expect(VECTORS.randbelow_ns.map((n) => big.randbelowBig(BigInt(n)).toString())).toEqual(v.randbelow);
        const r = new PyRandom(seed);
        const ns = VECTORS.randbelow_ns.map(Number);
        const safe = ns.findIndex((n) => !Number.isSafeInteger(n));
        expect(safe).toBeGreaterThan(0);
        expect(ns.slice(0, safe).map((n) => String(r.randbelow(n)))).toEqual(v.randbelow.slice(0, safe));
      });

      it("shuffle", () => {
        for (const [n, expected] of Object.entries(v.shuffle)) {
          const x = Array.from({ length: Number(n) }, (_, i) => i);
          new PyRandom(seed).shuffle(x);
          expect(x).toEqual(expected);
        }
      });

      it("choice", () => {
        const r = new PyRandom(seed);
        expect(v.choice.map(() => r.choice("abcdefghij"))).toEqual(v.choice);
      });
    });
  }

  it("1,300 consecutive 32-bit outputs (two state regenerations) for seeds 0 and 2^64−1", () => {
    for (const [seed, expected] of Object.entries(VECTORS.long_runs)) {
      const r = new PyRandom(BigInt(seed));
      expect(expected.map(() => r.getrandbits(32))).toEqual(expected);
    }
  });

  it("interleaved random() and getrandbits(k) share one stream", () => {
    const r = new PyRandom(7);
    const got = VECTORS.mixed_seed7.map(([kind], i) =>
      kind === "random" ? [kind, r.random()] : [kind, r.getrandbitsBig(5 + (i % 70)).toString()],
    );
    expect(got).toEqual(VECTORS.mixed_seed7.map(([kind, value]) => [kind, value]));
  });
});

describe("PyRandom seeding and contracts", () => {
  it("a number seed and the same bigint seed give the same stream, also above 2^32", () => {
    for (const seed of [0, 1, 2 ** 32 - 1, 2 ** 32, 2 ** 53 - 1]) {
      const a = new PyRandom(seed);
      const b = new PyRandom(BigInt(seed));
      expect([a.nextUint32(), a.nextUint32()]).toEqual([b.nextUint32(), b.nextUint32()]);
    }
  });

  it("seed 0 is a real seed (key [0]), distinct from seed 1", () => {
    const zero = VECTORS.seeds.find((v) => v.seed === "0")!;
    expect(new PyRandom(0).random()).toBe(zero.random[0]);
    expect(new PyRandom(0).random()).not.toBe(new PyRandom(1).random());
  });

  it("shuffles typed arrays exactly like arrays", () => {
    const a = Array.from({ length: 50 }, (_, i) => i);
    const t = Int32Array.from(a);
    new PyRandom(3).shuffle(a);
    new PyRandom(3).shuffle(t);
    expect(Array.from(t)).toEqual(a);
  });

  it("refuses invalid seeds and arguments with a message naming the value", () => {
    expect(() => new PyRandom(-1)).toThrow(/non-negative.*-1/);
    expect(() => new PyRandom(-5n)).toThrow(/non-negative.*-5/);
    expect(() => new PyRandom(1.5)).toThrow(/1\.5/);
    const r = new PyRandom(0);
    expect(() => r.getrandbits(33)).toThrow(/getrandbitsBig/);
    expect(() => r.getrandbits(-1)).toThrow(RangeError);
    expect(() => r.randbelow(0)).toThrow(/≥ 1/);
    expect(() => r.randbelow(2 ** 53)).toThrow(/randbelowBig/);
    expect(() => r.randbelowBig(0n)).toThrow(RangeError);
    expect(() => r.choice([])).toThrow(/empty/);
  });
});

describe("randomSameTypeSeed (METHOD.md §5.6)", () => {
  const { cases } = readFixture("random-same-type.json") as {
    cases: { random_seed: number; query_id: string; repair_iteration: number; polarity: "positive" | "negative"; seed: string; n: number; shuffled: number[] }[];
  };
  it("derives CPython's seed and shuffle for each case", () => {
    expect(cases.length).toBeGreaterThan(0);
    for (const c of cases) {
      const seed = randomSameTypeSeed(c.random_seed, c.query_id, c.repair_iteration, c.polarity);
      expect(seed.toString()).toBe(c.seed);
      const rows = Array.from({ length: c.n }, (_, i) => i);
      new PyRandom(seed).shuffle(rows);
      expect(rows).toEqual(c.shuffled);
    }
  });

  it("is a 64-bit value that changes with every field", () => {
    const base = randomSameTypeSeed(42, "5", 1, "positive");
    expect(base >= 0n && base < 2n ** 64n).toBe(true);
    expect(randomSameTypeSeed(43, "5", 1, "positive")).not.toBe(base);
    expect(randomSameTypeSeed(42, "6", 1, "positive")).not.toBe(base);
    expect(randomSameTypeSeed(42, "5", 2, "positive")).not.toBe(base);
    expect(randomSameTypeSeed(42, "5", 1, "negative")).not.toBe(base);
  });
});
