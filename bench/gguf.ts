/**
 * A small GGUF v3 reader and writer for the benchmark model generator (bench/make-model.ts): header,
 * metadata key/values, tensor infos, aligned tensor data. Format: ggml's docs/gguf.md — magic
 * "GGUF", version 3, u64 counts, little-endian, strings as u64 length + UTF-8 bytes.
 * @module
 */
import { closeSync, openSync, readSync } from "node:fs";

/** GGUF metadata value types (gguf.md `gguf_metadata_value_type`). */
export const GgufType = { u8: 0, i8: 1, u16: 2, i16: 3, u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9, u64: 10, i64: 11, f64: 12 } as const;

export type GgufScalar = number | bigint | boolean | string;

/** A metadata value with its GGUF type kept, so a copied value is written back byte for byte; arrays carry `elementType`. */
export interface GgufValue {
  type: number;
  elementType?: number;
  value: GgufScalar | GgufScalar[];
}

export interface GgufTensorInfo {
  name: string;
  /** ggml order: dims[0] is the contiguous (row) dimension. */
  dims: number[];
  /** ggml type id (0 F32, 1 F16, 2 Q4_0, 8 Q8_0). */
  type: number;
  offset: bigint;
}

export interface GgufHeader {
  version: number;
  metadata: Map<string, GgufValue>;
  tensors: GgufTensorInfo[];
}

/** Reads a GGUF file's header (metadata and tensor infos, not tensor data). @throws Error on a malformed file */
export function readGgufHeader(file: string): GgufHeader {
  const fd = openSync(file, "r");
  try {
    let buffer = Buffer.alloc(0);
    let base = 0; // file offset of buffer[0]
    let pos = 0; // file offset of the next byte to read
    const need = (n: number) => {
      if (pos + n <= base + buffer.length) return;
      const size = Math.max(n, 1 << 22);
      buffer = Buffer.alloc(size);
      base = pos;
      const got = readSync(fd, buffer, 0, size, pos);
      buffer = buffer.subarray(0, got);
      if (got < n) throw new Error(`${file}: truncated GGUF header at byte ${pos}`);
    };
    const take = (n: number) => {
      need(n);
      const slice = buffer.subarray(pos - base, pos - base + n);
      pos += n;
      return slice;
    };
    const u32 = () => take(4).readUInt32LE(0);
    const u64 = () => take(8).readBigUInt64LE(0);
    const str = () => take(Number(u64())).toString("utf8");
    const scalar = (type: number): GgufScalar => {
      switch (type) {
        case 0: return take(1).readUInt8(0);
        case 1: return take(1).readInt8(0);
        case 2: return take(2).readUInt16LE(0);
        case 3: return take(2).readInt16LE(0);
        case 4: return u32();
        case 5: return take(4).readInt32LE(0);
        case 6: return take(4).readFloatLE(0);
        case 7: return take(1).readUInt8(0) !== 0;
        case 8: return str();
        case 10: return u64();
        case 11: return take(8).readBigInt64LE(0);
        case 12: return take(8).readDoubleLE(0);
        default: throw new Error(`${file}: unknown GGUF value type ${type} at byte ${pos}`);
      }
    };
    if (take(4).toString("latin1") !== "GGUF") throw new Error(`${file}: not a GGUF file (bad magic)`);
    const version = u32();
    if (version !== 3) throw new Error(`${file}: GGUF version ${version}, only version 3 is supported`);
    const tensorCount = Number(u64());
    const kvCount = Number(u64());
    const metadata = new Map<string, GgufValue>();
    for (let i = 0; i < kvCount; i++) {
      const key = str();
      const type = u32();
      if (type === GgufType.array) {
        const elementType = u32();
        const count = Number(u64());
        const value: GgufScalar[] = [];
        for (let j = 0; j < count; j++) value.push(scalar(elementType));
        metadata.set(key, { type, elementType, value });
      } else {
        metadata.set(key, { type, value: scalar(type) });
      }
    }
    const tensors: GgufTensorInfo[] = [];
    for (let i = 0; i < tensorCount; i++) {
      const name = str();
      const nDims = u32();
      const dims: number[] = [];
      for (let d = 0; d < nDims; d++) dims.push(Number(u64()));
      tensors.push({ name, dims, type: u32(), offset: u64() });
    }
    return { version, metadata, tensors };
  } finally {
    closeSync(fd);
  }
}

/** Serialises the header of a GGUF file: magic, version 3, metadata, tensor infos (no padding). */
export function encodeGgufHeader(metadata: Map<string, GgufValue>, tensors: GgufTensorInfo[]): Buffer {
  const parts: Buffer[] = [];
  const u32 = (n: number) => { const b = Buffer.alloc(4); b.writeUInt32LE(n); parts.push(b); };
  const u64 = (n: number | bigint) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(n)); parts.push(b); };
  const str = (s: string) => { const b = Buffer.from(s, "utf8"); u64(b.length); parts.push(b); };
  const scalar = (type: number, v: GgufScalar) => {
    const b = Buffer.alloc(type === 10 || type === 11 || type === 12 ? 8 : type === 2 || type === 3 ? 2 : type === 0 || type === 1 || type === 7 ? 1 : 4);
    switch (type) {
      case 0: b.writeUInt8(Number(v)); break;
      case 1: b.writeInt8(Number(v)); break;
      case 2: b.writeUInt16LE(Number(v)); break;
      case 3: b.writeInt16LE(Number(v)); break;
      case 4: b.writeUInt32LE(Number(v)); break;
      case 5: b.writeInt32LE(Number(v)); break;
      case 6: b.writeFloatLE(Number(v)); break;
      case 7: b.writeUInt8(v ? 1 : 0); break;
      case 8: str(String(v)); return;
      case 10: b.writeBigUInt64LE(BigInt(v as number | bigint)); break;
      case 11: b.writeBigInt64LE(BigInt(v as number | bigint)); break;
      case 12: b.writeDoubleLE(Number(v)); break;
      default: throw new Error(`unknown GGUF value type ${type}`);
    }
    parts.push(b);
  };
  parts.push(Buffer.from("GGUF", "latin1"));
  u32(3);
  u64(tensors.length);
  u64(metadata.size);
  for (const [key, v] of metadata) {
    str(key);
    u32(v.type);
    if (v.type === GgufType.array) {
      const elements = v.value as GgufScalar[];
      u32(v.elementType!);
      u64(elements.length);
      for (const element of elements) scalar(v.elementType!, element);
    } else {
      scalar(v.type, v.value as GgufScalar);
    }
  }
  for (const t of tensors) {
    str(t.name);
    u32(t.dims.length);
    for (const d of t.dims) u64(d);
    u32(t.type);
    u64(t.offset);
  }
  return Buffer.concat(parts);
}
