/**
 * Generates a random-weight GGUF with the exact shape of Qwen2.5-0.5B-Instruct (default) or
 * Qwen2.5-7B-Instruct (`--shape 7b`), carrying the real Qwen2.5 tokenizer and chat template copied
 * from the tiny test fixture, for throughput benchmarks (bench/README.md, bench/throughput.ts).
 * Random weights cost exactly what real weights cost per token; only the outputs are meaningless.
 *
 * Deterministic: the bytes depend only on --shape, --type and --seed (xorshift128 per tensor, seeded
 * from the seed and the tensor's index), so the printed sha256 is reproducible.
 *
 *   node bench/make-model.ts [--shape 0.5b|7b] [--type q8_0|q4_0] [--seed N] [--out FILE]
 *
 * Defaults: 0.5b → Q8_0 (~531 MB, like Qwen's own q8_0 file); 7b → Q4_0 (~4.4 GB, near the kit's
 * Q4_K_M model in size and speed). Output: models/bench/ (git-ignored). An existing file of the
 * expected size is reused unless --force.
 * @module
 */
import { createHash } from "node:crypto";
import { closeSync, createReadStream, existsSync, mkdirSync, openSync, renameSync, statSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { encodeGgufHeader, GgufType, readGgufHeader, type GgufTensorInfo, type GgufValue } from "./gguf.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const TOKENIZER_SOURCE = join(ROOT, "test/fixtures/models/tiny-random-qwen2.5-instruct.gguf");
const ALIGNMENT = 32;

/** Hyper-parameters of the two Qwen2.5 shapes (their config.json on the model hub). */
export const SHAPES = {
  "0.5b": { name: "Qwen2.5-0.5B-Instruct", layers: 24, hidden: 896, heads: 14, kvHeads: 2, ffn: 4864, vocab: 151936, tied: true, type: "q8_0" },
  "7b": { name: "Qwen2.5-7B-Instruct", layers: 28, hidden: 3584, heads: 28, kvHeads: 4, ffn: 18944, vocab: 152064, tied: false, type: "q4_0" },
} as const;
export type ShapeName = keyof typeof SHAPES;

/** ggml block formats: 32 weights per block, an f16 scale then the quants. */
const QUANTS = {
  q8_0: { ggmlType: 8, fileType: 7, blockBytes: 34, quantStd: 73.9 }, // int8 uniform in [-128, 127]
  q4_0: { ggmlType: 2, fileType: 2, blockBytes: 18, quantStd: 4.61 }, // nibble − 8, uniform in [-8, 7]
} as const;
export type QuantName = keyof typeof QUANTS;
/** Standard deviation of the random weights (GPT-2's initialisation). */
const WEIGHT_STD = 0.02;

interface PlannedTensor extends GgufTensorInfo {
  bytes: number;
  fill: "quant" | "ones" | "zeros";
}

/** The tensor list of a Qwen2 GGUF (llama.cpp's qwen2 loader), with sizes and offsets. */
export function planTensors(shape: ShapeName, quant: QuantName): PlannedTensor[] {
  const s = SHAPES[shape];
  const q = QUANTS[quant];
  const kv = (s.hidden / s.heads) * s.kvHeads;
  const list: Array<[string, number[], "quant" | "ones" | "zeros"]> = [["token_embd.weight", [s.hidden, s.vocab], "quant"], ["output_norm.weight", [s.hidden], "ones"]];
  if (!s.tied) list.push(["output.weight", [s.hidden, s.vocab], "quant"]);
  for (let i = 0; i < s.layers; i++) {
    const b = `blk.${i}.`;
    list.push(
      [`${b}attn_norm.weight`, [s.hidden], "ones"],
      [`${b}attn_q.weight`, [s.hidden, s.hidden], "quant"],
      [`${b}attn_q.bias`, [s.hidden], "zeros"],
      [`${b}attn_k.weight`, [s.hidden, kv], "quant"],
      [`${b}attn_k.bias`, [kv], "zeros"],
      [`${b}attn_v.weight`, [s.hidden, kv], "quant"],
      [`${b}attn_v.bias`, [kv], "zeros"],
      [`${b}attn_output.weight`, [s.hidden, s.hidden], "quant"],
      [`${b}ffn_norm.weight`, [s.hidden], "ones"],
      [`${b}ffn_gate.weight`, [s.hidden, s.ffn], "quant"],
      [`${b}ffn_up.weight`, [s.hidden, s.ffn], "quant"],
      [`${b}ffn_down.weight`, [s.ffn, s.hidden], "quant"],
    );
  }
  let offset = 0;
  return list.map(([name, dims, fill]) => {
    const n = dims.reduce((a, b) => a * b, 1);
    const bytes = fill === "quant" ? (n / 32) * q.blockBytes : n * 4;
    const tensor = { name, dims, type: fill === "quant" ? q.ggmlType : 0, offset: BigInt(offset), bytes, fill };
    offset += Math.ceil(bytes / ALIGNMENT) * ALIGNMENT;
    return tensor;
  });
}

/** The fixture's metadata with the shape's hyper-parameters, padded to the shape's vocabulary. */
export function planMetadata(shape: ShapeName, quant: QuantName): Map<string, GgufValue> {
  const s = SHAPES[shape];
  const source = readGgufHeader(TOKENIZER_SOURCE).metadata;
  const u32 = (value: number): GgufValue => ({ type: GgufType.u32, value });
  const f32 = (value: number): GgufValue => ({ type: GgufType.f32, value });
  const str = (value: string): GgufValue => ({ type: GgufType.string, value });
  const m = new Map<string, GgufValue>([
    ["general.architecture", str("qwen2")],
    ["general.type", str("model")],
    ["general.name", str(`Random-weight ${s.name} shape (benchmark)`)],
    ["general.description", str(`bench/make-model.ts: random weights in the exact shape of ${s.name}; real Qwen2.5 tokenizer and chat template. Not a usable model.`)],
    ["general.file_type", u32(QUANTS[quant].fileType)],
    ["general.alignment", u32(ALIGNMENT)],
    ["qwen2.block_count", u32(s.layers)],
    ["qwen2.context_length", u32(32768)],
    ["qwen2.embedding_length", u32(s.hidden)],
    ["qwen2.feed_forward_length", u32(s.ffn)],
    ["qwen2.attention.head_count", u32(s.heads)],
    ["qwen2.attention.head_count_kv", u32(s.kvHeads)],
    ["qwen2.rope.freq_base", f32(1000000)],
    ["qwen2.attention.layer_norm_rms_epsilon", f32(1e-6)],
  ]);
  for (const [key, value] of source) {
    if (!key.startsWith("tokenizer.")) continue;
    if ((key === "tokenizer.ggml.tokens" || key === "tokenizer.ggml.token_type") && value.type === GgufType.array) {
      // convert_hf_to_gguf pads the vocabulary to the embedding rows with unused [PADn] tokens.
      const padded = [...(value.value as Array<string | number>)];
      for (let i = padded.length; i < s.vocab; i++) padded.push(key === "tokenizer.ggml.tokens" ? `[PAD${i}]` : 5);
      m.set(key, { ...value, value: padded });
    } else {
      m.set(key, value);
    }
  }
  return m;
}

/** IEEE half-precision bits of a normal, positive float. */
function f16Bits(x: number): number {
  const f = new DataView(new ArrayBuffer(4));
  f.setFloat32(0, x);
  const bits = f.getUint32(0);
  const exponent = ((bits >>> 23) & 0xff) - 127 + 15;
  if (exponent <= 0 || exponent >= 31) throw new Error(`scale ${x} is not a normal f16`);
  return (exponent << 10) | ((bits >>> 13) & 0x3ff);
}

/** Writes a tensor's bytes into `out` (length = tensor bytes), deterministically from `seed`. */
function fillTensor(out: Buffer, tensor: PlannedTensor, quant: QuantName, seed: number): void {
  if (tensor.fill === "zeros") return;
  if (tensor.fill === "ones") {
    for (let i = 0; i < out.length; i += 4) out.writeFloatLE(1, i);
    return;
  }
  // xorshift128 over 32-bit words, seeded by splitmix-style mixing of (seed, tensor offset).
  let x = (seed ^ 0x9e3779b9) >>> 0 || 1;
  let y = Number(tensor.offset % 0xffffffffn) ^ 0x85ebca6b;
  let z = 0xc2b2ae35;
  let w = (tensor.dims[0] * 2654435761) >>> 0;
  const words = new Uint32Array(out.buffer, out.byteOffset, out.length >>> 2);
  for (let i = 0; i < 16; i++) { const t = x ^ (x << 11); x = y; y = z; z = w; w = (w ^ (w >>> 19) ^ (t ^ (t >>> 8))) >>> 0; }
  for (let i = 0; i < words.length; i++) {
    const t = x ^ (x << 11);
    x = y; y = z; z = w;
    w = (w ^ (w >>> 19) ^ (t ^ (t >>> 8))) >>> 0;
    words[i] = w;
  }
  for (let i = words.length * 4; i < out.length; i++) out[i] = (w >>> ((i & 3) * 8)) & 0xff;
  const q = QUANTS[quant];
  const scale = f16Bits(WEIGHT_STD / q.quantStd);
  for (let i = 0; i < out.length; i += q.blockBytes) out.writeUInt16LE(scale, i);
}

/** Writes the GGUF to `file` (via `file.partial`, renamed when complete); returns its size in bytes. */
export function writeBenchModel(file: string, shape: ShapeName, quant: QuantName, seed: number): number {
  const tensors = planTensors(shape, quant);
  const header = encodeGgufHeader(planMetadata(shape, quant), tensors);
  const dataStart = Math.ceil(header.length / ALIGNMENT) * ALIGNMENT;
  mkdirSync(dirname(file), { recursive: true });
  const partial = `${file}.partial`;
  const fd = openSync(partial, "w");
  try {
    let position = 0;
    const write = (buffer: Buffer) => {
      for (let done = 0; done < buffer.length; ) done += writeSync(fd, buffer, done, buffer.length - done, position + done);
      position += buffer.length;
    };
    write(Buffer.concat([header, Buffer.alloc(dataStart - header.length)]));
    const largest = Math.max(...tensors.map((t) => t.bytes));
    const scratch = Buffer.alloc(Math.ceil(largest / ALIGNMENT) * ALIGNMENT);
    for (const tensor of tensors) {
      const padded = Math.ceil(tensor.bytes / ALIGNMENT) * ALIGNMENT;
      const out = scratch.subarray(0, padded);
      out.fill(0);
      fillTensor(out.subarray(0, tensor.bytes), tensor, quant, seed);
      write(out);
    }
    closeSync(fd);
    renameSync(partial, file);
    return position;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** Expected file size of a shape (header + aligned tensors). */
export function expectedSize(shape: ShapeName, quant: QuantName): number {
  const tensors = planTensors(shape, quant);
  const header = encodeGgufHeader(planMetadata(shape, quant), tensors).length;
  const last = tensors[tensors.length - 1];
  return Math.ceil(header / ALIGNMENT) * ALIGNMENT + Number(last.offset) + Math.ceil(last.bytes / ALIGNMENT) * ALIGNMENT;
}

/** Default output path of a shape and type. */
export function benchModelPath(shape: ShapeName, quant: QuantName): string {
  return join(ROOT, "models/bench", `qwen2.5-${shape}-shape-random-${quant}.gguf`);
}

async function sha256(file: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({ options: { shape: { type: "string", default: "0.5b" }, type: { type: "string" }, seed: { type: "string", default: "42" }, out: { type: "string" }, force: { type: "boolean", default: false } } }));
  } catch (error) {
    throw new UsageError(`${(error as Error).message}; usage: node bench/make-model.ts [--shape 0.5b|7b] [--type q8_0|q4_0] [--seed N] [--out FILE] [--force]`);
  }
  if (!(values.shape! in SHAPES)) throw new UsageError(`--shape must be 0.5b or 7b, got "${values.shape}"`);
  const shape = values.shape as ShapeName;
  const quant = (values.type ?? SHAPES[shape].type) as QuantName;
  if (!(quant in QUANTS)) throw new UsageError(`--type must be q8_0 or q4_0, got "${values.type}"`);
  const seed = Number(values.seed);
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new UsageError(`--seed must be an integer in 0..4294967295, got "${values.seed}"`);
  const file = values.out ?? benchModelPath(shape, quant);
  const size = expectedSize(shape, quant);
  if (!values.force && existsSync(file) && statSync(file).size === size) {
    process.stderr.write(`make-model: ${file} exists with the expected size; reused (--force rewrites it)\n`);
  } else {
    const started = Date.now();
    writeBenchModel(file, shape, quant, seed);
    process.stderr.write(`make-model: wrote ${(size / 1e6).toFixed(1)} MB in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  }
  process.stderr.write(`make-model: ${SHAPES[shape].name} shape, ${quant.toUpperCase()}, seed ${seed}, sha256 ${await sha256(file)}\n`);
  process.stdout.write(file + "\n");
}

class UsageError extends Error {}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((error: unknown) => {
    process.stderr.write(`make-model: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(error instanceof UsageError ? 2 : 1);
  });
}
