/**
 * Memory stage (METHOD.md §4.5, format version 3): the bytes of the memory store's files, and what
 * one insertion or merge changes in them. The files always hold exactly what `memoryFileBytes`
 * writes for the current rows; a write touches only what changed: an insertion appends one line to
 * its polarity file, one row to the vectors and one id to the row list, and a merge rewrites its
 * polarity file(s) from its row on and overwrites its vector row. Pure: sizes and the running vector
 * hash are held in memory, the store does the I/O (lib/memory/file-transaction.ts).
 * @module
 */
import { createHash, type Hash } from "node:crypto";
import { endianness } from "node:os";
import { canonicalJson, type JsonValue } from "../hash.ts";
import { POLARITIES, type MemoryEntry, type Polarity } from "./entry.ts";
import type { FileChange } from "./file-transaction.ts";
import type { InsertionPlan } from "./merge.ts";

export const MEMORY_FORMAT_VERSION = 3;
export const MEMORY_FILES = {
  positive: "memory_positive.jsonl",
  negative: "memory_negative.jsonl",
  rowToEntryId: "memory_row_to_entry_id.json",
  vectors: "memory_vectors.f32",
  metadata: "memory_metadata.json",
} as const;
const INDEX_BACKEND = "hnswlib-node@3.0.0 rebuilt from memory_vectors.f32 (float32 LE, row-major)";
/** index_backend of a store of dimension 0: a method whose ranker reads no vectors (issue 22 §1). */
export const NO_VECTORS_BACKEND = "none: the method's ranker reads no vectors (embedding_dimension 0, memory_vectors.f32 empty)";

/**
 * `memory_metadata.json` (METHOD.md §4.5). A method whose ranker reads no vectors (no_dense_rerank,
 * random_same_type) writes `embedding_dimension: 0`, an empty memory_vectors.f32 and the
 * `NO_VECTORS_BACKEND` index_backend: it embeds nothing.
 */
export interface MemoryMetadata {
  format_version: number;
  entry_count: number;
  positive_count: number;
  negative_count: number;
  embedding_dimension: number;
  index_backend: string;
  /** SHA-256 hex of memory_vectors.f32. */
  vector_hash: string;
}

/** An insertion plan that writes (a new row or a merged one). */
export type WritingPlan = Exclude<InsertionPlan, { kind: "skip" }>;

const utf8 = (text: string) => Buffer.from(text, "utf8");
const lineOf = (entry: MemoryEntry) => canonicalJson(entry as unknown as JsonValue) + "\n";
const rowIdsText = (ids: readonly string[]) => canonicalJson(ids as JsonValue) + "\n";

/** Row-major little-endian float32 bytes. */
export function encodeVectors(vectors: readonly Float32Array[], dimension: number): Uint8Array {
  const bytes = new Uint8Array(vectors.length * dimension * 4);
  const view = new DataView(bytes.buffer);
  vectors.forEach((v, row) => {
    for (let i = 0; i < dimension; i++) view.setFloat32((row * dimension + i) * 4, v[i], true);
  });
  return bytes;
}

/** The bytes of one row of memory_vectors.f32 (a view of the vector itself on little-endian hosts). */
function rowBytes(v: Float32Array, dimension: number): Uint8Array {
  return endianness() === "LE" && v.length === dimension ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength) : encodeVectors([v], dimension);
}

function metadataText(entries: readonly MemoryEntry[], dimension: number, vectorHash: string): string {
  const positive = entries.filter((e) => e.polarity === "positive").length;
  const metadata: MemoryMetadata = {
    format_version: MEMORY_FORMAT_VERSION,
    entry_count: entries.length,
    positive_count: positive,
    negative_count: entries.length - positive,
    embedding_dimension: dimension,
    index_backend: dimension === 0 ? NO_VECTORS_BACKEND : INDEX_BACKEND,
    vector_hash: vectorHash,
  };
  return canonicalJson(metadata as unknown as JsonValue) + "\n";
}

/** Every file of a store holding `entries` and `vectors` (row order), byte for byte. */
export function memoryFileBytes(entries: readonly MemoryEntry[], vectors: readonly Float32Array[], dimension: number): Record<keyof typeof MEMORY_FILES, Uint8Array> {
  const vectorBytes = encodeVectors(vectors, dimension);
  const lines = (polarity: Polarity) => utf8(entries.filter((e) => e.polarity === polarity).map(lineOf).join(""));
  return {
    positive: lines("positive"),
    negative: lines("negative"),
    rowToEntryId: utf8(rowIdsText(entries.map((e) => e.entry_id))),
    vectors: vectorBytes,
    metadata: utf8(metadataText(entries, dimension, createHash("sha256").update(vectorBytes).digest("hex"))),
  };
}

/** The files as they are on disk when a store is opened (empty for a new store). */
export interface FilesOnDisk {
  /** false for a new store (no file yet). */
  exist: boolean;
  positive: Uint8Array;
  negative: Uint8Array;
  rowToEntryId: Uint8Array;
  vectors: Uint8Array;
}

/** One write: its changes, and `accept` to call once they are committed. */
export interface PlannedWrite {
  changes: FileChange[];
  accept(): void;
}

/** The byte layout of the files, kept in step with the rows the store commits. */
export class MemoryFileLayout {
  readonly dimension: number;
  /** UTF-8 length of each row's line in its polarity file. */
  #lineBytes: number[];
  #size: Record<Polarity | "rowToEntryId", number>;
  /** Whether a file is exactly what `memoryFileBytes` writes (else the next write of it rewrites it whole). */
  #canonical: Record<Polarity | "rowToEntryId", boolean>;
  /** SHA-256 state over the vector file's rows, in order. */
  #vectorHash: Hash;
  #exist: boolean;

  /** The layout of `disk`, the files of a store read back as the rows `entries`/`vectors`. */
  constructor(entries: readonly MemoryEntry[], vectors: readonly Float32Array[], disk: FilesOnDisk, dimension: number) {
    this.dimension = dimension;
    this.#lineBytes = entries.map((e) => Buffer.byteLength(lineOf(e), "utf8"));
    const expected = memoryFileBytes(entries, vectors, dimension);
    const same = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b) === 0;
    this.#exist = disk.exist;
    this.#size = { positive: disk.positive.byteLength, negative: disk.negative.byteLength, rowToEntryId: disk.rowToEntryId.byteLength };
    this.#canonical = { positive: same(disk.positive, expected.positive), negative: same(disk.negative, expected.negative), rowToEntryId: same(disk.rowToEntryId, expected.rowToEntryId) };
    this.#vectorHash = createHash("sha256").update(disk.vectors);
  }

  /**
   * The changes that take the files from the rows `entries`/`vectors` to the same rows with `plan`
   * applied (its vector `vector`), in MEMORY_FILES order.
   */
  plan(plan: WritingPlan, vector: Float32Array, entries: readonly MemoryEntry[], vectors: readonly Float32Array[]): PlannedWrite {
    const { row, entry } = plan;
    const rows = Math.max(entries.length, row + 1);
    const entryAt = (i: number) => (i === row ? entry : entries[i]);
    const line = lineOf(entry);
    const changes: FileChange[] = [];
    const sizes = { ...this.#size };
    const rewritten: (Polarity | "rowToEntryId")[] = [];

    for (const p of POLARITIES) {
      const touched = entry.polarity === p || (row < entries.length && entries[row].polarity === p);
      if (!touched && this.#exist) continue;
      const from = this.#canonical[p] ? row : 0;
      let offset = 0;
      for (let i = 0; i < from; i++) if (entries[i].polarity === p) offset += this.#lineBytes[i];
      let tail = "";
      for (let i = from; i < rows; i++) if (entryAt(i).polarity === p) tail += i === row ? line : lineOf(entries[i]);
      const data = utf8(tail);
      changes.push({ file: MEMORY_FILES[p], offset, data, size: offset + data.byteLength });
      sizes[p] = offset + data.byteLength;
      rewritten.push(p);
    }

    const isAppend = row === entries.length;
    if (isAppend || !this.#canonical.rowToEntryId || entries[row].entry_id !== entry.entry_id || !this.#exist) {
      const quoted = canonicalJson(entry.entry_id);
      const change =
        isAppend && this.#canonical.rowToEntryId && row > 0
          ? { offset: this.#size.rowToEntryId - 2, data: utf8(`,${quoted}]\n`) } // replaces the closing "]\n"
          : { offset: 0, data: utf8(rowIdsText(Array.from({ length: rows }, (_, i) => entryAt(i).entry_id))) };
      changes.push({ file: MEMORY_FILES.rowToEntryId, ...change, size: change.offset + change.data.byteLength });
      sizes.rowToEntryId = change.offset + change.data.byteLength;
      rewritten.push("rowToEntryId");
    }

    const vectorRow = rowBytes(vector, this.dimension);
    const rowLength = this.dimension * 4;
    changes.push({ file: MEMORY_FILES.vectors, offset: row * rowLength, data: Uint8Array.from(vectorRow), size: rows * rowLength });
    let hash: Hash;
    if (isAppend) {
      hash = this.#vectorHash.copy().update(vectorRow);
    } else {
      hash = createHash("sha256");
      for (let i = 0; i < rows; i++) hash.update(i === row ? vectorRow : rowBytes(vectors[i], this.dimension));
    }
    const allEntries = Array.from({ length: rows }, (_, i) => entryAt(i));
    const metadata = utf8(metadataText(allEntries, this.dimension, hash.copy().digest("hex")));
    changes.push({ file: MEMORY_FILES.metadata, offset: 0, data: metadata, size: metadata.byteLength });

    return {
      changes,
      accept: () => {
        this.#lineBytes[row] = Buffer.byteLength(line, "utf8");
        this.#size = sizes;
        for (const file of rewritten) this.#canonical[file] = true;
        this.#vectorHash = hash;
        this.#exist = true;
      },
    };
  }
}
