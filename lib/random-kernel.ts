/**
 * Foundations, seeded randomness (METHOD.md §7, §9): the MT19937 block kernel behind
 * `PyRandom.fillRandbelow` — whole 624-word state blocks twisted, tempered and reduced to
 * `randbelow(n)` draws in WebAssembly with 4-lane SIMD, bit for bit the arithmetic of lib/random.ts.
 *
 * Why WebAssembly: the bootstrap's first call draws ~20M MT19937 words (1,034 queries × 10,000
 * resamples at ~50% rejection); the fastest plain TypeScript block loop found takes over twice the
 * kernel's time on them, which put that first call at 1.87× numpy 1.24.2's instead of 1.07×
 * (bench/README.md "Issue 30: less machinery"; bench/bootstrap-first-call.ts). Where the engine
 * has no WebAssembly SIMD (Node ≥ 24 always has it) the draws take lib/random.ts's own loop, with
 * the same values.
 * It keeps no randomness of its own: the caller's state is copied in and back on every call, and the
 * instance's memory is scratch (state at byte 0, output from byte 4096, one chunk at a time).
 * The module is assembled here from its instructions (no binary blob, no build step).
 * @module
 */

const N = 624;
const M = 397;
/** Output words per kernel call: 64 blocks, so V8 tiers the kernel up after its first calls. */
const CHUNK_WORDS = 64 * N;
const OUT = 4096;
const PAGES = Math.ceil((OUT + 4 * CHUNK_WORDS) / 65536);

/** Signed LEB128 of an int32 (i32.const immediates). */
function sleb(value: number): number[] {
  let v = value | 0;
  const bytes: number[] = [];
  for (;;) {
    const b = v & 0x7f;
    v >>= 7;
    if ((v === 0 && (b & 0x40) === 0) || (v === -1 && (b & 0x40) !== 0)) return [...bytes, b];
    bytes.push(b | 0x80);
  }
}

/** Unsigned LEB128 (sizes, indices, memory offsets). */
function uleb(value: number): number[] {
  const bytes: number[] = [];
  do {
    let b = value & 0x7f;
    value >>>= 7;
    if (value !== 0) b |= 0x80;
    bytes.push(b);
  } while (value !== 0);
  return bytes;
}

/**
 * The kernel `f(n, drop, q, end) → q'`: while `end − q ≥ 624 · size`, twist the state at byte 0 (as
 * lib/random.ts `twist`), then temper each of the 624 words, r = y >>> drop, store r at q and advance
 * q by `size` iff r < n (unsigned) — CPython's rejection loop without a branch; a rejected r is
 * overwritten by the next candidate. `size` is 2 (i32.store16) or 4 (i32.store) bytes. With 4-lane
 * SIMD: the twist four words at a time where the recurrence allows it (kk < 224 reads only old words;
 * 227 ≤ kk ≤ 622 reads words ≥ 224 behind, already new, and old ones ahead), kk = 224…226 and 623 one
 * at a time; tempering four words at a time; the rejection step per lane, in order.
 */
function simdKernelBytes(size: 2 | 4): Uint8Array {
  const code: number[] = [];
  const op = (...bytes: number[]) => code.push(...bytes);
  const [N_, DROP, Q, END, P, Y, R, V] = [0, 1, 2, 3, 4, 5, 6, 7]; // params n, drop, q, end; locals p, y, r (i32), v (v128)
  const get = (i: number) => op(0x20, i);
  const set = (i: number) => op(0x21, i);
  const tee = (i: number) => op(0x22, i);
  const i32 = (v: number) => op(0x41, ...sleb(v));
  const load = (offset: number) => op(0x28, 2, ...uleb(offset));
  const simd = (opcode: number) => op(0xfd, ...uleb(opcode));
  const splat = (v: number) => op(0xfd, 0x0c, ...[0, 1, 2, 3].flatMap(() => [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, v >>> 24])); // v128.const
  const vload = (offset: number) => op(0xfd, 0x00, 2, ...uleb(offset));
  const [ADD, SUB, AND, OR, XOR, SHL, SHR_U, LT_U] = [0x6a, 0x6b, 0x71, 0x72, 0x73, 0x74, 0x76, 0x49];
  const [V_AND, V_OR, V_XOR, V_NEG, V_SHL, V_SHR_U, V_EXTRACT] = [0x4e, 0x50, 0x51, 0xa1, 0xab, 0xad, 0x1b];
  const LOOP = [0x03, 0x40];
  const END_ = 0x0b;
  const twistWord = (kk: number, pushNext: () => void) => {
    i32(4 * kk); load(0); i32(0x80000000); op(AND); i32(4 * kk); load(4); i32(0x7fffffff); op(AND); op(OR); set(Y);
    i32(4 * kk); pushNext(); get(Y); i32(1); op(SHR_U); op(XOR); i32(0); get(Y); i32(1); op(AND); op(SUB); i32(0x9908b0df); op(AND); op(XOR);
    op(0x36, 2, 0);
  };
  const twistLanes = (pushNext: () => void) => {
    get(P); vload(0); splat(0x80000000); simd(V_AND); get(P); vload(4); splat(0x7fffffff); simd(V_AND); simd(V_OR); set(V);
    get(P); pushNext(); get(V); i32(1); simd(V_SHR_U); simd(V_XOR); get(V); splat(1); simd(V_AND); simd(V_NEG); splat(0x9908b0df); simd(V_AND); simd(V_XOR);
    op(0xfd, 0x0b, 2, 0); // v128.store
  };
  op(0x02, 0x40, ...LOOP); // block { loop {
  get(END); get(Q); op(SUB); i32(N * size); op(LT_U); op(0x0d, 1);
  i32(0); set(P);
  op(...LOOP); // kk = 0, 4, …, 220: next = mt[kk + M …]
  twistLanes(() => { get(P); vload(4 * M); });
  get(P); i32(16); op(ADD); tee(P); i32(4 * 224); op(LT_U); op(0x0d, 0); op(END_);
  for (const kk of [224, 225, 226]) twistWord(kk, () => { i32(4 * (kk + M)); load(0); });
  i32(4 * (N - M)); set(P);
  op(...LOOP); // kk = 227, 231, …, 619: next = mt[kk + M − N …]
  twistLanes(() => { get(P); i32(4 * (M - N)); op(ADD); vload(0); });
  get(P); i32(16); op(ADD); tee(P); i32(4 * (N - 1)); op(LT_U); op(0x0d, 0); op(END_);
  // kk = N − 1: y = (mt[N − 1] & UPPER) | (mt[0] & LOWER), next = mt[M − 1]
  i32(4 * (N - 1)); load(0); i32(0x80000000); op(AND); i32(0); load(0); i32(0x7fffffff); op(AND); op(OR); set(Y);
  i32(4 * (N - 1)); i32(0); load(4 * (M - 1)); get(Y); i32(1); op(SHR_U); op(XOR); i32(0); get(Y); i32(1); op(AND); op(SUB); i32(0x9908b0df); op(AND); op(XOR);
  op(0x36, 2, 0);
  i32(0); set(P);
  op(...LOOP); // temper four words, then each lane in order: store, advance iff below n
  get(P); vload(0); set(V);
  get(V); get(V); i32(11); simd(V_SHR_U); simd(V_XOR); set(V);
  get(V); get(V); i32(7); simd(V_SHL); splat(0x9d2c5680); simd(V_AND); simd(V_XOR); set(V);
  get(V); get(V); i32(15); simd(V_SHL); splat(0xefc60000); simd(V_AND); simd(V_XOR); set(V);
  get(V); get(V); i32(18); simd(V_SHR_U); simd(V_XOR); get(DROP); simd(V_SHR_U); set(V);
  for (let lane = 0; lane < 4; lane++) {
    get(V); op(0xfd, V_EXTRACT, lane); set(R);
    get(Q); get(R); op(...(size === 2 ? [0x3b, 1, 0] : [0x36, 2, 0]));
    get(Q); get(R); get(N_); op(LT_U); i32(size === 2 ? 1 : 2); op(SHL); op(ADD); set(Q);
  }
  get(P); i32(16); op(ADD); tee(P); i32(4 * N); op(LT_U); op(0x0d, 0); op(END_);
  op(0x0c, 0, END_, END_);
  get(Q); op(END_);
  return moduleBytes([2, 3, 0x7f, 1, 0x7b], code); // locals: 3 × i32, 1 × v128
}

/** A module importing memory e.m and exporting f: (i32 × 4) → i32 with the given locals and code. */
function moduleBytes(locals: number[], code: number[]): Uint8Array {
  const body = [...locals, ...code];
  const section = (id: number, bytes: number[]) => [id, ...uleb(bytes.length), ...bytes];
  const name = (s: string) => [...uleb(s.length), ...Array.from(s, (c) => c.charCodeAt(0))];
  return Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, 4, 0x7f, 0x7f, 0x7f, 0x7f, 1, 0x7f]), // type: (i32 × 4) → i32
    ...section(2, [1, ...name("e"), ...name("m"), 0x02, 0x00, ...uleb(PAGES)]), // import memory e.m
    ...section(3, [1, 0]),
    ...section(7, [1, ...name("f"), 0x00, 0]), // export f
    ...section(10, [1, ...uleb(body.length), ...body]),
  ]);
}

/** The part of the WebAssembly API used here (tsconfig's lib has no DOM, where its types live). */
interface WasmApi {
  Memory: new (descriptor: { initial: number; maximum: number }) => { buffer: ArrayBuffer };
  Module: new (bytes: Uint8Array) => object;
  validate: (bytes: Uint8Array) => boolean;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

interface Kernel {
  run: (n: number, drop: number, q: number, end: number) => number;
  state: Uint32Array;
  out16: Uint16Array;
  out32: Uint32Array;
}

/** The kernels by output size; null where the engine cannot compile them (no WebAssembly SIMD). */
let kernels: { 2: Kernel; 4: Kernel } | null | undefined;
let enabled = true;

/** For tests: draw through the kernel (true, the default) or through lib/random.ts's own loop (false), as where it cannot compile. */
export function setKernelEnabled(on: boolean): void {
  enabled = on;
}

function kernel(size: 2 | 4): Kernel | null {
  if (kernels === undefined) {
    const memory = new wasm.Memory({ initial: PAGES, maximum: PAGES });
    const make = (s: 2 | 4): Kernel => {
      const instance = new wasm.Instance(new wasm.Module(simdKernelBytes(s)), { e: { m: memory } });
      return {
        run: instance.exports.f as Kernel["run"],
        state: new Uint32Array(memory.buffer, 0, N),
        out16: new Uint16Array(memory.buffer, OUT, CHUNK_WORDS),
        out32: new Uint32Array(memory.buffer, OUT, CHUNK_WORDS),
      };
    };
    kernels = wasm.validate(simdKernelBytes(2)) ? { 2: make(2), 4: make(4) } : null;
  }
  return enabled && kernels !== null ? kernels[size] : null;
}

/**
 * Draw whole fresh blocks: `mt` must be at a block boundary (all 624 words used). Writes draws to
 * out[k], out[k + 1], … while at least 624 places are left, leaves `mt` twisted as many times as it
 * consumed blocks (every word of each used), and returns the new k. Values are those of lib/random.ts.
 * Without the kernel (setKernelEnabled(false), or no WebAssembly SIMD) it draws nothing and returns k.
 */
export function fillBlocks(mt: Uint32Array, n: number, out: Uint16Array | Uint32Array | Int32Array | Float64Array, k: number): number {
  const size = out instanceof Uint16Array ? 2 : 4;
  const kern = kernel(size);
  if (kern === null) return k;
  const view = size === 2 ? kern.out16 : kern.out32;
  const drop = Math.clz32(n);
  kern.state.set(mt);
  while (out.length - k >= N) {
    const room = Math.min(out.length - k, CHUNK_WORDS);
    const written = (kern.run(n, drop, OUT, OUT + room * size) - OUT) / size;
    out.set(view.subarray(0, written), k);
    k += written;
  }
  mt.set(kern.state);
  return k;
}
