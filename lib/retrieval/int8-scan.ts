/**
 * A bounded prefilter for exact cosine ranking over many stored vectors (issue 38 §4; used by the
 * peers' note search, lib/methods/note-index.ts): each vector is also kept as 8-bit integers in a
 * WebAssembly memory, a query is scanned against any subset of the rows with 128-bit integer SIMD,
 * and every row whose exact score could reach the `k` best is returned — a set that provably holds
 * the `k` best by the exact float64 score and every row tied with the k-th, so the caller's exact
 * rescoring of that set gives the plain scan's answer, scores and ties included.
 *
 * The arithmetic. A row x is kept as x̂ = round(x / sₓ), sₓ = max|xᵢ| / 127 (x̂ᵢ ∈ [-127, 127]), with
 * Sₓ = Σ x̂ᵢ, n̂ₓ = ‖sₓ·x̂‖ and rₓ = ‖x − sₓ·x̂‖ (float64). A query q is kept as q̂ = round(q / s_q),
 * s_q = max|qᵢ| / 63 (q̂ᵢ ∈ [-63, 63]), with e = ‖q − s_q·q̂‖. The kernel computes the integer
 * D = Σ x̂ᵢ·(q̂ᵢ + 64) — the offset keeps the second operand in [1, 127], where the relaxed-SIMD dot
 * product `i32x4.relaxed_dot_i8x16_i7x16_add_s` is deterministic on every platform, and a pair of
 * products (at most 2·127·127 = 32,258) never saturates 16 bits — so Σ x̂ᵢq̂ᵢ = D − 64·Sₓ exactly, and
 * the estimate a = sₓ·s_q·(D − 64·Sₓ) differs from the true dot product x·q by at most
 * B = n̂ₓ·e + rₓ·‖q‖ (expand x = sₓx̂ + (x − sₓx̂), q = s_q q̂ + (q − s_q q̂); Cauchy–Schwarz twice).
 * The exact scan's float64 sum differs from x·q by far less than the margin added to B
 * (1e-9·(1 + ‖x‖·‖q‖); 1,024 terms give at most ~1e-13). With L = a − B and U = a + B bracketing
 * the exact score, let τ be the k-th largest L over the pool: k rows score at least τ, so a row with
 * U < τ scores strictly less than each of them — it is neither among the k best nor tied with the
 * k-th. The rows with U ≥ τ are returned, in pool order.
 *
 * Speed (bench/overhead.ts; 1,024 dimensions): 1 KB read per row instead of 4 KB, sixteen integer
 * products summed per instruction; a pool whose rows mostly lie one after another runs one row at a
 * time with two accumulators, a scattered pool (e.g. one failure type's notes) four rows at a time,
 * whose memory reads then overlap. The choice never changes an answer (integer sums).
 *
 * The module is a few hundred bytes of WebAssembly assembled below from named instructions (no
 * build step, no dependency); where WebAssembly relaxed SIMD is missing, or memory for the rows
 * cannot be had (more than 4 GB of rows), `bounds` and `candidates` return null and the caller
 * scans exactly.
 * @module
 */

/** Unsigned LEB128. */
function leb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
}

/** Signed LEB128. */
function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) return [...out, b];
    out.push(b | 0x80);
  }
}

// WebAssembly instructions used by the kernels (core spec 2.0 + relaxed SIMD)
const I32 = 0x7f;
const V128 = 0x7b;
const op = {
  localGet: (i: number) => [0x20, ...leb(i)],
  localSet: (i: number) => [0x21, ...leb(i)],
  localTee: (i: number) => [0x22, ...leb(i)],
  i32Const: (n: number) => [0x41, ...sleb(n)],
  i32Add: [0x6a],
  i32Shl: [0x74],
  i32LtS: [0x48],
  i32GeS: [0x4e],
  i32Load: [0x28, 2, 0], // align 4, offset 0
  i32Store: [0x36, 2, 0],
  block: [0x02, 0x40],
  loop: [0x03, 0x40],
  end: [0x0b],
  br: (depth: number) => [0x0c, depth],
  brIf: (depth: number) => [0x0d, depth],
  v128Load: (offset: number) => [0xfd, ...leb(0x00), 4, ...leb(offset)], // align 16
  v128Zero: [0xfd, ...leb(0x0c), ...new Array<number>(16).fill(0)], // v128.const 0
  i32x4Add: [0xfd, ...leb(0xae)],
  i32x4Lane: (lane: number) => [0xfd, ...leb(0x1b), lane], // i32x4.extract_lane
  dotI8I7Add: [0xfd, ...leb(0x113)], // i32x4.relaxed_dot_i8x16_i7x16_add_s
};

/**
 * One kernel `(query, rows, n, rowBytes, out)`: out[i] = Σ over the row at address rows[i] of its
 * int8 bytes times the query's 7-bit bytes, for i < n (n a multiple of `rowsAtOnce`; rowBytes a
 * multiple of 16·`unroll`). `rowsAtOnce` rows share each query load;
 * `unroll` 16-byte blocks per step, each with its own accumulator.
 */
function kernel(rowsAtOnce: number, unroll: number): number[] {
  const [Q, ROWS, N, ROW_BYTES, OUT, I, OFF] = [0, 1, 2, 3, 4, 5, 6];
  const P = 7; // P + r: address of row r of the step
  const ACC = P + rowsAtOnce; // ACC + r·unroll + u
  const QV = ACC + rowsAtOnce * unroll; // QV + u: the query's block u
  const rs = Array.from({ length: rowsAtOnce }, (_, r) => r);
  const us = Array.from({ length: unroll }, (_, u) => u);
  const acc = (r: number, u: number) => ACC + r * unroll + u;
  const slot = (base: number, r: number) => [...op.localGet(base), ...op.localGet(I), ...op.i32Const(r), ...op.i32Add, ...op.i32Const(2), ...op.i32Shl, ...op.i32Add];
  const body = [
    ...op.i32Const(0), ...op.localSet(I),
    ...op.block, ...op.loop,
    ...op.localGet(I), ...op.localGet(N), ...op.i32GeS, ...op.brIf(1),
    // the step's row addresses: rows[i + r]
    ...rs.flatMap((r) => [...slot(ROWS, r), ...op.i32Load, ...op.localSet(P + r)]),
    ...rs.flatMap((r) => us.flatMap((u) => [...op.v128Zero, ...op.localSet(acc(r, u))])),
    ...op.i32Const(0), ...op.localSet(OFF),
    ...op.loop,
    ...us.flatMap((u) => [...op.localGet(Q), ...op.localGet(OFF), ...op.i32Add, ...op.v128Load(16 * u), ...op.localSet(QV + u)]),
    ...us.flatMap((u) => rs.flatMap((r) => [...op.localGet(P + r), ...op.localGet(OFF), ...op.i32Add, ...op.v128Load(16 * u), ...op.localGet(QV + u), ...op.localGet(acc(r, u)), ...op.dotI8I7Add, ...op.localSet(acc(r, u))])),
    ...op.localGet(OFF), ...op.i32Const(16 * unroll), ...op.i32Add, ...op.localTee(OFF), ...op.localGet(ROW_BYTES), ...op.i32LtS, ...op.brIf(0),
    ...op.end,
    // out[i + r] = the four lanes of the row's accumulators, summed
    ...rs.flatMap((r) => [
      ...slot(OUT, r),
      ...op.localGet(acc(r, 0)),
      ...us.slice(1).flatMap((u) => [...op.localGet(acc(r, u)), ...op.i32x4Add]),
      ...op.localTee(acc(r, 0)), ...op.i32x4Lane(0),
      ...[1, 2, 3].flatMap((lane) => [...op.localGet(acc(r, 0)), ...op.i32x4Lane(lane), ...op.i32Add]),
      ...op.i32Store,
    ]),
    ...op.localGet(I), ...op.i32Const(rowsAtOnce), ...op.i32Add, ...op.localSet(I),
    ...op.br(0),
    ...op.end, ...op.end, ...op.end,
  ];
  const locals = [...leb(2), ...leb(2 + rowsAtOnce), I32, ...leb(rowsAtOnce * unroll + unroll), V128];
  return [...locals, ...body];
}

/** Kernels: one row at a time, two accumulators (contiguous pools); four rows at a time (scattered pools). */
const DENSE = { rowsAtOnce: 1, unroll: 2 };
const SCATTERED = { rowsAtOnce: 4, unroll: 1 };
/** Row bytes are padded to a multiple of this (every kernel's step). */
const ROW_ALIGN = 32;

function moduleBytes(): Uint8Array {
  const vec = (items: number[][]) => [...leb(items.length), ...items.flat()];
  const section = (id: number, body: number[]) => [id, ...leb(body.length), ...body];
  const name = (s: string) => [...leb(s.length), ...[...s].map((c) => c.charCodeAt(0))];
  const bodies = [kernel(DENSE.rowsAtOnce, DENSE.unroll), kernel(SCATTERED.rowsAtOnce, SCATTERED.unroll)];
  return Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, vec([[0x60, ...vec(Array.from({ length: 5 }, () => [I32])), 0]])), // (i32 × 5) → ()
    ...section(2, vec([[...name("env"), ...name("memory"), 0x02, 0x00, ...leb(1)]])), // imported memory, min 1 page
    ...section(3, vec([[0], [0]])),
    ...section(7, vec([[...name("dense"), 0x00, 0], [...name("scattered"), 0x00, 1]])),
    ...section(10, vec(bodies.map((b) => [...leb(b.length), ...b]))),
  ]);
}

type Kernel = (query: number, rows: number, n: number, rowBytes: number, out: number) => void;

/** The part of the WebAssembly JavaScript API used here (the project's TypeScript libs do not declare it). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
  Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory;
}
const wasm = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;

let compiled: object | null | undefined;

/** The compiled module, or null where this runtime lacks WebAssembly relaxed SIMD. */
function scanModule(): object | null {
  if (compiled !== undefined) return compiled;
  const bytes = moduleBytes();
  compiled = wasm !== undefined && wasm.validate(bytes) ? new wasm.Module(bytes) : null;
  return compiled;
}

const PAGE = 65536;
/** The most pages a 32-bit WebAssembly memory can have (4 GB). */
const MAX_PAGES = 65536;
/** Where the first chunk starts (the bytes below are unused). */
const BASE = 64;
/** Rows per chunk: a group's rows lie in chunks of this many, so a pool of one group reads long runs of memory. */
const CHUNK_ROWS = 256;

/** Growable Float64Array / Int32Array columns. */
function grown<T extends Float64Array | Int32Array>(a: T, size: number, make: (n: number) => T): T {
  if (size <= a.length) return a;
  const b = make(Math.max(size, 2 * a.length));
  b.set(a);
  return b;
}

/**
 * Rows of one dimension kept as int8 (module comment), numbered in the order they were added. Each
 * row belongs to a group (the caller's: a note's kind); a group's rows are stored together in
 * chunks of CHUNK_ROWS, so a pool of one group — the usual pool — is read as long runs of memory
 * rather than rows strewn among other groups' (the CPU's prefetchers then read what is needed).
 */
export class Int8Rows {
  readonly dimension: number;
  readonly #rowBytes: number;
  #memory: WasmMemory | null = null;
  #dense: Kernel | null = null;
  #scattered: Kernel | null = null;
  #count = 0;
  /** The first byte past the last chunk. */
  #end = BASE;
  /** Group → its current chunk's next free address and rows left in it. */
  readonly #chunks = new Map<string, { next: number; left: number }>();
  /** Per row: its address, sₓ, Sₓ, n̂ₓ, rₓ (module comment). */
  #address = new Int32Array(1024);
  #scale = new Float64Array(1024);
  #sum = new Float64Array(1024);
  #norm = new Float64Array(1024);
  #residual = new Float64Array(1024);
  /** Scratch of `bounds` (kept: fresh large arrays are slow to allocate and to collect). */
  #lower = new Float64Array(0);
  #upper = new Float64Array(0);
  /** False once a row could not be stored (or the runtime lacks relaxed SIMD): `bounds` and `candidates` say null. */
  #usable: boolean;

  constructor(dimension: number) {
    this.dimension = dimension;
    this.#rowBytes = Math.max(ROW_ALIGN, Math.ceil(dimension / ROW_ALIGN) * ROW_ALIGN);
    const module = scanModule();
    this.#usable = module !== null;
    if (module !== null) {
      try {
        const api = wasm as WasmApi;
        this.#memory = new api.Memory({ initial: 1, maximum: MAX_PAGES });
        const exports = new api.Instance(module, { env: { memory: this.#memory } }).exports as { dense: Kernel; scattered: Kernel };
        this.#dense = exports.dense;
        this.#scattered = exports.scattered;
      } catch {
        this.#usable = false; // no address space for another memory: the caller's exact scan decides
      }
    }
  }

  /** Number of rows added. */
  get size(): number {
    return this.#count;
  }

  /** Grows the memory to hold `bytes`; false when it cannot. */
  #reserve(bytes: number): boolean {
    const memory = this.#memory as WasmMemory;
    const have = memory.buffer.byteLength;
    if (bytes <= have) return true;
    const pages = Math.min(MAX_PAGES, Math.max(Math.ceil(bytes / PAGE), 2 * (have / PAGE)));
    if (pages * PAGE < bytes) return false;
    try {
      memory.grow(pages - have / PAGE);
      return true;
    } catch {
      return false;
    }
  }

  /** Adds `vector` (length `dimension`) as the next row, in `group`; returns its number. */
  add(vector: Float32Array, group = ""): number {
    const row = this.#count;
    this.#count += 1;
    const size = row + 1;
    this.#address = grown(this.#address, size, (n) => new Int32Array(n));
    this.#scale = grown(this.#scale, size, (n) => new Float64Array(n));
    this.#sum = grown(this.#sum, size, (n) => new Float64Array(n));
    this.#norm = grown(this.#norm, size, (n) => new Float64Array(n));
    this.#residual = grown(this.#residual, size, (n) => new Float64Array(n));
    if (!this.#usable) return row;
    let max = 0;
    let squares = 0;
    for (let i = 0; i < vector.length; i++) {
      max = Math.max(max, Math.abs(vector[i]));
      squares += vector[i] * vector[i];
    }
    // another length, NaN or ±Infinity, or no memory left: from now on the caller's exact scan decides
    if (vector.length !== this.dimension || !Number.isFinite(squares)) return this.#unusable(row);
    let chunk = this.#chunks.get(group);
    if (chunk === undefined || chunk.left === 0) {
      const bytes = CHUNK_ROWS * this.#rowBytes;
      if (this.#end + bytes > MAX_PAGES * PAGE || !this.#reserve(this.#end + bytes)) return this.#unusable(row);
      this.#chunks.set(group, (chunk = { next: this.#end, left: CHUNK_ROWS }));
      this.#end += bytes;
    }
    const at = chunk.next;
    chunk.next += this.#rowBytes;
    chunk.left -= 1;
    const scale = max / 127;
    // the bytes past the dimension are zeroed: a search's scratch may have used them
    const bytes = new Int8Array((this.#memory as WasmMemory).buffer, at, this.#rowBytes).fill(0);
    let sum = 0;
    let norm = 0;
    let residual = 0;
    for (let i = 0; i < vector.length; i++) {
      const x = scale === 0 ? 0 : Math.max(-127, Math.min(127, Math.round(vector[i] / scale)));
      bytes[i] = x;
      sum += x;
      const kept = scale * x;
      norm += kept * kept;
      const off = vector[i] - kept;
      residual += off * off;
    }
    this.#address[row] = at | 0; // below 4 GB: the kernel reads it as an unsigned address
    this.#scale[row] = scale;
    this.#sum[row] = sum;
    this.#norm[row] = Math.sqrt(norm);
    this.#residual[row] = Math.sqrt(residual);
    return row;
  }

  #unusable(row: number): number {
    this.#usable = false;
    return row;
  }

  /**
   * For each row of `pool` (rows of this store, each < size), bounds on its exact score with
   * `query`: lower[i] ≤ exact ≤ upper[i] for i < pool.length (module comment; the arrays are reused
   * by the next call); null when this store cannot vouch (no relaxed SIMD, a row not stored, a query
   * of another length or not finite).
   */
  bounds(query: Float32Array, pool: ArrayLike<number>): { lower: Float64Array; upper: Float64Array } | null {
    if (!this.#usable || query.length !== this.dimension) return null;
    const n = pool.length;
    let max = 0;
    let qNorm = 0;
    for (let i = 0; i < query.length; i++) {
      max = Math.max(max, Math.abs(query[i]));
      qNorm += query[i] * query[i];
    }
    if (!Number.isFinite(qNorm)) return null;
    qNorm = Math.sqrt(qNorm);
    const qScale = max / 63;
    const rowBytes = this.#rowBytes;
    const padded = Math.ceil(n / 4) * 4;
    // scratch after the last chunk: the query's bytes, the pool's row addresses, the kernel's sums
    const queryAt = this.#end;
    const rowsAt = queryAt + rowBytes;
    const outAt = rowsAt + 4 * padded;
    if (!this.#reserve(outAt + 4 * padded)) return null;
    const buffer = (this.#memory as WasmMemory).buffer;
    const q = new Uint8Array(buffer, queryAt, rowBytes);
    let qError = 0;
    for (let i = 0; i < rowBytes; i++) {
      const v = i < query.length && qScale > 0 ? Math.max(-63, Math.min(63, Math.round(query[i] / qScale))) : 0;
      q[i] = v + 64;
      if (i < query.length) {
        const off = query[i] - qScale * v;
        qError += off * off;
      }
    }
    qError = Math.sqrt(qError);
    const addresses = new Int32Array(buffer, rowsAt, padded);
    const address = this.#address;
    let runs = 0; // rows stored right after the pool's previous row
    for (let i = 0; i < n; i++) {
      const row = pool[i];
      if (!(Number.isInteger(row) && row >= 0 && row < this.#count)) return null;
      addresses[i] = address[row];
      if (i > 0 && addresses[i] === addresses[i - 1] + rowBytes) runs += 1;
    }
    for (let i = n; i < padded; i++) addresses[i] = addresses[n - 1];
    // mostly runs: one row at a time; rows apart: four at a time, their reads overlapping (same sums)
    const scattered = 2 * runs < n;
    if (n > 0) (scattered ? (this.#scattered as Kernel) : (this.#dense as Kernel))(queryAt, rowsAt, scattered ? padded : n, rowBytes, outAt);
    const dots = new Int32Array(buffer, outAt, n);
    if (this.#lower.length < n) {
      this.#lower = new Float64Array(Math.max(n, 2 * this.#lower.length));
      this.#upper = new Float64Array(this.#lower.length);
    }
    const lower = this.#lower;
    const upper = this.#upper;
    const scale = this.#scale;
    const sum = this.#sum;
    const norm = this.#norm;
    const residual = this.#residual;
    for (let i = 0; i < n; i++) {
      const row = pool[i];
      const estimate = scale[row] * qScale * (dots[i] - 64 * sum[row]);
      const bound = norm[row] * qError + residual[row] * qNorm + 1e-9 * (1 + (norm[row] + residual[row]) * qNorm);
      lower[i] = estimate - bound;
      upper[i] = estimate + bound;
    }
    return { lower, upper };
  }

  /**
   * Indices into `pool` of the rows whose exact score with `query` may be among the `k` best or
   * tied with the k-th, in pool order (module comment); null as for `bounds`.
   */
  candidates(query: Float32Array, pool: ArrayLike<number>, k: number): Int32Array | null {
    const n = pool.length;
    if (!(k >= 1)) return new Int32Array(0);
    const b = this.bounds(query, pool);
    if (b === null) return null;
    if (k >= n) return Int32Array.from({ length: n }, (_, i) => i);
    const { lower, upper } = b;
    // τ = the k-th largest lower bound (the k largest kept sorted, smallest last)
    const top: number[] = [];
    for (let i = 0; i < n; i++) {
      const lo = lower[i];
      if (top.length === k && lo <= top[k - 1]) continue;
      let j = top.length === k ? k - 1 : top.length;
      while (j > 0 && top[j - 1] < lo) j -= 1;
      top.splice(j, 0, lo);
      if (top.length > k) top.pop();
    }
    const tau = top[k - 1];
    let kept = 0;
    for (let i = 0; i < n; i++) if (upper[i] >= tau) kept += 1;
    const out = new Int32Array(kept);
    for (let i = 0, j = 0; i < n; i++) if (upper[i] >= tau) out[j++] = i;
    return out;
  }
}
