/**
 * Seeded randomness for stream orders and the `random_same_type` method (METHOD.md §7, §5.6,
 * §11.4): a port of CPython 3.11's `random.Random` (MT19937 + `getrandbits`, `random`,
 * `_randbelow_with_getrandbits`, `shuffle`, `choice`) that is bit-exact with it for integer seeds.
 * @module
 */
import { sha256Hex } from "./hash.ts";

// MT19937 constants (Matsumoto & Nishimura, mt19937ar.c, as vendored in CPython's _randommodule.c).
const N = 624;
const M = 397;
const MATRIX_A = 0x9908b0df;
const UPPER_MASK = 0x80000000;
const LOWER_MASK = 0x7fffffff;
const TWO_POW_32 = 4294967296;

/** A mutable indexable sequence (`Array`, typed arrays) that `shuffle` permutes in place. */
export interface MutableSequence<T> {
  length: number;
  [index: number]: T;
}

/**
 * CPython's `random.Random(seed)` for a non-negative integer seed.
 *
 * Seeding follows `random_seed` in CPython: the integer is split into 32-bit little-endian words
 * (seed 0 → key [0]; the number of words follows the bit length) and fed to `init_by_array`.
 * @example new PyRandom(0).getrandbits(32) === 3626764237 // as random.Random(0).getrandbits(32) in CPython 3.11
 */
export class PyRandom {
  readonly #mt = new Uint32Array(N);
  #index = N;

  /** @param seed a non-negative integer (a `number` must be a safe integer). */
  constructor(seed: number | bigint) {
    this.#initByArray(seedKey(seed));
  }

  /** The next raw 32-bit output of MT19937 (CPython `genrand_uint32`), as an unsigned number. */
  nextUint32(): number {
    const mt = this.#mt;
    if (this.#index >= N) {
      twist(mt);
      this.#index = 0;
    }
    let y = mt[this.#index++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /**
   * Fill `out` with `out.length` consecutive `randbelow(n)` draws, for 1 ≤ n ≤ 2^32 − 1: the same
   * values, and the same generator state afterwards, as `for (k…) out[k] = this.randbelow(n)`.
   * Whole fresh 624-word blocks go through `fillBlocks` (twist, temper, store every candidate and
   * advance only past one below n: no branch per word), the rest (a part-used block, the last < 624
   * draws, every block for n ≥ 2^31) through the loop below; no call or allocation per draw. The
   * bootstrap draws its ~10M query indices through this (bench/bootstrap-first-call.ts).
   * `out` must hold values up to n − 1 (a Uint16Array needs n ≤ 65,536, an Int32Array n ≤ 2^31).
   */
  fillRandbelow(n: number, out: Uint16Array | Uint32Array | Int32Array | Float64Array): void {
    if (!Number.isInteger(n) || n < 1 || n > 0xffffffff) {
      throw new RangeError(`fillRandbelow: n must be an integer in [1, 2^32 − 1], got ${n}; call randbelow(n) per draw for larger n`);
    }
    const limit = out instanceof Uint16Array ? 0x10000 : out instanceof Int32Array ? 0x80000000 : Infinity;
    if (n > limit) throw new RangeError(`fillRandbelow: n = ${n} does not fit the output array (${out.constructor.name} holds values below ${limit})`);
    const mt = this.#mt;
    const drop = Math.clz32(n); // 32 − bit_length(n), as in randbelow
    const length = out.length;
    let index = this.#index;
    let k = 0;
    while (k < length) {
      if (index >= N) {
        if (drop > 0 && length - k >= N) {
          k = fillBlocks(mt, n, drop, out, k);
          if (k === length) break;
        }
        twist(mt);
        index = 0;
      }
      // One pass over the rest of the state block: temper, keep the top bit_length(n) bits, reject ≥ n.
      while (index < N) {
        let y = mt[index++];
        y ^= y >>> 11;
        y ^= (y << 7) & 0x9d2c5680;
        y ^= (y << 15) & 0xefc60000;
        y ^= y >>> 18;
        const r = y >>> drop;
        if (r < n) {
          out[k++] = r;
          if (k === length) break;
        }
      }
    }
    this.#index = index;
  }

  /**
   * `getrandbits(k)` for 0 ≤ k ≤ 32, as a number in [0, 2^k). k = 0 returns 0 without drawing
   * (CPython ≥ 3.9). Use `getrandbitsBig` for k > 32.
   */
  getrandbits(k: number): number {
    if (!Number.isInteger(k) || k < 0 || k > 32) {
      throw new RangeError(`getrandbits: k must be an integer in [0, 32], got ${k}; use getrandbitsBig(k) for more bits`);
    }
    return k === 0 ? 0 : this.nextUint32() >>> (32 - k);
  }

  /**
   * `getrandbits(k)` for any k ≥ 0, as a bigint in [0, 2^k). Words are drawn least significant
   * first; the last (most significant) word keeps its top `k mod 32` bits, as CPython assembles them.
   */
  getrandbitsBig(k: number): bigint {
    if (!Number.isInteger(k) || k < 0) throw new RangeError(`getrandbitsBig: k must be a non-negative integer, got ${k}`);
    if (k <= 32) return BigInt(this.getrandbits(k));
    let result = 0n;
    for (let shift = 0n; k > 0; k -= 32, shift += 32n) {
      const r = this.nextUint32();
      result |= BigInt(k < 32 ? r >>> (32 - k) : r) << shift;
    }
    return result;
  }

  /** `random()`: a double in [0, 1) with 53 random bits, (a·2^26 + b) / 2^53 with a = u>>5, b = u>>6. */
  random(): number {
    const a = this.nextUint32() >>> 5;
    const b = this.nextUint32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }

  /**
   * CPython `_randbelow_with_getrandbits(n)` for 1 ≤ n ≤ 2^53 − 1: with k = bit_length(n), draw
   * getrandbits(k) until the value is < n. Use `randbelowBig` for larger n.
   */
  randbelow(n: number): number {
    if (!Number.isSafeInteger(n) || n < 1) {
      throw new RangeError(`randbelow: n must be a safe integer ≥ 1, got ${n}; use randbelowBig(n) for larger n`);
    }
    if (n <= 0xffffffff) {
      const drop = Math.clz32(n); // 32 − bit_length(n), since 1 ≤ n < 2^32
      let r = this.nextUint32() >>> drop;
      while (r >= n) r = this.nextUint32() >>> drop;
      return r;
    }
    // 2^32 ≤ n < 2^53: bit_length k in 33..53, two words (low word first, high word keeps k − 32 bits).
    const highDrop = Math.clz32(Math.floor(n / TWO_POW_32));
    let r: number;
    do {
      const low = this.nextUint32();
      r = (this.nextUint32() >>> highDrop) * TWO_POW_32 + low;
    } while (r >= n);
    return r;
  }

  /** `_randbelow_with_getrandbits(n)` for any bigint n ≥ 1. */
  randbelowBig(n: bigint): bigint {
    if (n < 1n) throw new RangeError(`randbelowBig: n must be ≥ 1, got ${n}`);
    const k = n.toString(2).length;
    let r = this.getrandbitsBig(k);
    while (r >= n) r = this.getrandbitsBig(k);
    return r;
  }

  /** `shuffle(x)` in place: for i from n − 1 down to 1, swap x[i] with x[randbelow(i + 1)]. */
  shuffle<T>(x: MutableSequence<T>): void {
    for (let i = x.length - 1; i > 0; i--) {
      const j = this.randbelow(i + 1);
      const t = x[i];
      x[i] = x[j];
      x[j] = t;
    }
  }

  /** `choice(seq)`: seq[randbelow(len(seq))]; an empty sequence is an error, as in CPython. */
  choice<T>(seq: ArrayLike<T>): T {
    if (seq.length === 0) throw new RangeError("choice: cannot choose from an empty sequence");
    return seq[this.randbelow(seq.length)];
  }

  /** MT19937 `init_genrand(19650218)` followed by `init_by_array(key)`. */
  #initByArray(key: Uint32Array): void {
    const mt = this.#mt;
    mt[0] = 19650218;
    for (let i = 1; i < N; i++) mt[i] = Math.imul(1812433253, mt[i - 1] ^ (mt[i - 1] >>> 30)) + i;
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, key.length); k > 0; k--) {
      // Sums below 2^34 are exact in a double; the Uint32Array store reduces them mod 2^32.
      mt[i] = (mt[i] ^ Math.imul(mt[i - 1] ^ (mt[i - 1] >>> 30), 1664525)) + key[j] + j;
      i++;
      j++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      mt[i] = (mt[i] ^ Math.imul(mt[i - 1] ^ (mt[i - 1] >>> 30), 1566083941)) - i;
      i++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
    }
    mt[0] = 0x80000000; // MSB is 1, assuring a non-zero initial state
    this.#index = N;
  }
}

/** MT19937's state update (CPython `genrand_uint32` when the 624 words are used up), in place. */
function twist(mt: Uint32Array): void {
  let kk = 0;
  let y: number;
  for (; kk < N - M; kk++) {
    y = (mt[kk] & UPPER_MASK) | (mt[kk + 1] & LOWER_MASK);
    mt[kk] = mt[kk + M] ^ (y >>> 1) ^ (-(y & 1) & MATRIX_A);
  }
  for (; kk < N - 1; kk++) {
    y = (mt[kk] & UPPER_MASK) | (mt[kk + 1] & LOWER_MASK);
    mt[kk] = mt[kk + (M - N)] ^ (y >>> 1) ^ (-(y & 1) & MATRIX_A);
  }
  y = (mt[N - 1] & UPPER_MASK) | (mt[0] & LOWER_MASK);
  mt[N - 1] = mt[M - 1] ^ (y >>> 1) ^ (-(y & 1) & MATRIX_A);
}

/**
 * Whole fresh blocks for `fillRandbelow`, for n < 2^31 (drop = 32 − bit_length(n) ≥ 1; larger n take
 * the plain loop of `fillRandbelow`): `mt` must be at a block boundary (all 624 words used). While at least 624 places are left in `out`
 * from k, twist the block and temper each new word as it is made (the arithmetic of `twist` and
 * `nextUint32`), keep its top bits r = y >>> drop, store r at out[k] and advance k iff r < n:
 * CPython's rejection loop without a branch. A rejected r is overwritten by the next candidate (the
 * 624 places hold a block's candidates). r − n lies in (−2^31, 2^30), so its sign bit is r < n.
 * Returns the new k, with `mt` twisted once per block used (every word of it).
 * Every constant is a literal (624 = N, 397 = M, 227 = N − M, 623 = N − 1, 396 = M − 1, the masks and
 * MATRIX_A): V8 folds literals into the instructions, but reads module constants from memory in the loop.
 */
function fillBlocks(mt: Uint32Array, n: number, drop: number, out: Uint16Array | Uint32Array | Int32Array | Float64Array, k: number): number {
  const end = out.length - 624;
  while (k <= end) {
    let kk = 0;
    let y: number;
    let w: number;
    let r: number;
    let cur = mt[0];
    let next: number;
    for (; kk < 227; kk++) {
      next = mt[kk + 1];
      y = (cur & 0x80000000) | (next & 0x7fffffff);
      w = mt[kk + 397] ^ (y >>> 1) ^ (((y << 31) >> 31) & 0x9908b0df);
      mt[kk] = w;
      cur = next;
      w ^= w >>> 11;
      w ^= (w << 7) & 0x9d2c5680;
      w ^= (w << 15) & 0xefc60000;
      w ^= w >>> 18;
      r = w >>> drop;
      out[k] = r;
      k += ((r - n) | 0) >>> 31;
    }
    for (; kk < 623; kk++) {
      next = mt[kk + 1];
      y = (cur & 0x80000000) | (next & 0x7fffffff);
      w = mt[kk - 227] ^ (y >>> 1) ^ (((y << 31) >> 31) & 0x9908b0df);
      mt[kk] = w;
      cur = next;
      w ^= w >>> 11;
      w ^= (w << 7) & 0x9d2c5680;
      w ^= (w << 15) & 0xefc60000;
      w ^= w >>> 18;
      r = w >>> drop;
      out[k] = r;
      k += ((r - n) | 0) >>> 31;
    }
    y = (cur & 0x80000000) | (mt[0] & 0x7fffffff);
    w = mt[396] ^ (y >>> 1) ^ (((y << 31) >> 31) & 0x9908b0df);
    mt[623] = w;
    w ^= w >>> 11;
    w ^= (w << 7) & 0x9d2c5680;
    w ^= (w << 15) & 0xefc60000;
    w ^= w >>> 18;
    r = w >>> drop;
    out[k] = r;
    k += ((r - n) | 0) >>> 31;
  }
  return k;
}

/** The init_by_array key of a seed: its 32-bit little-endian words, at least one (seed 0 → [0]). */
function seedKey(seed: number | bigint): Uint32Array {
  if (typeof seed === "number") {
    if (!Number.isSafeInteger(seed) || seed < 0) {
      throw new RangeError(`PyRandom: seed must be a non-negative safe integer (or a bigint), got ${seed}`);
    }
    if (seed <= 0xffffffff) return Uint32Array.of(seed);
    seed = BigInt(seed);
  }
  if (seed < 0n) {
    // CPython would silently use abs(seed); the kit's seeds are documented as non-negative.
    throw new RangeError(`PyRandom: seed must be non-negative, got ${seed}; pass its absolute value explicitly`);
  }
  const words: number[] = [];
  do {
    words.push(Number(seed & 0xffffffffn));
    seed >>= 32n;
  } while (seed > 0n);
  return Uint32Array.from(words);
}

/**
 * The `random_same_type` shuffle seed (METHOD.md §5.6): the first 8 bytes, big-endian, of
 * SHA-256 of `"{random_seed}|{query_id}|{repair_iteration}|{polarity}"`, as an unsigned bigint.
 * The reference hashes the ASCII string; UTF-8 is used here, which is identical for ASCII ids.
 * @example randomSameTypeSeed(42, "0", 1, "positive") // seed for PyRandom, then shuffle the pool
 */
export function randomSameTypeSeed(
  randomSeed: number,
  queryId: string,
  repairIteration: number,
  polarity: "positive" | "negative",
): bigint {
  return BigInt("0x" + sha256Hex(`${randomSeed}|${queryId}|${repairIteration}|${polarity}`).slice(0, 16));
}
