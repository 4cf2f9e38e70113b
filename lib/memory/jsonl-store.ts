/**
 * Memory stage (METHOD.md §4.5, format version 3): the persistent MemoryStore of a run directory.
 * Every insertion rewrites the full file set atomically as ONE transaction — each file is written
 * to `<name>.tmp` and fsynced, then a commit marker is renamed into place (the commit point), then
 * each temp file is renamed over its target and the marker removed. Opening a directory rolls a
 * committed transaction forward and deletes uncommitted temp files, so a kill at any instant
 * leaves a readable store holding every entry whose `insert` had resolved.
 *
 * Files: memory_positive.jsonl, memory_negative.jsonl (one entry per line, canonical JSON: sorted
 * keys, compact separators, non-ASCII kept, row order filtered by polarity),
 * memory_row_to_entry_id.json, memory_vectors.f32 (row-major little-endian float32; the kit's
 * stand-in for memory_index.faiss — the HNSW index is rebuilt from it in process),
 * memory_metadata.json {format_version: 3, entry_count, positive_count, negative_count,
 * embedding_dimension, index_backend, vector_hash}.
 * @module
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { InputFileError } from "../errors.ts";
import { canonicalJson, sha256Hex, type JsonValue } from "../hash.ts";
import type { Embedder } from "../llm/types.ts";
import { entryProblems, type MemoryEntry } from "./entry.ts";
import type { InsertionPlan } from "./merge.ts";
import { MemoryTable } from "./memory-table.ts";
import type { InsertResult } from "./store.ts";
import { TableMemoryStore } from "./table-store.ts";

export const MEMORY_FORMAT_VERSION = 3;
export const MEMORY_FILES = {
  positive: "memory_positive.jsonl",
  negative: "memory_negative.jsonl",
  rowToEntryId: "memory_row_to_entry_id.json",
  vectors: "memory_vectors.f32",
  metadata: "memory_metadata.json",
} as const;
/** The transaction marker; present only between the commit point and the end of a write. */
export const COMMIT_MARKER = "memory_commit.json";
const TMP = ".tmp";
/** The fix for a damaged store: run.ts replays every committed episode's insertion on resume. */
const REBUILD = "delete the run's memory/ folder and resume the run (--resume): memory is rebuilt from the committed trajectories";
const INDEX_BACKEND = "hnswlib-node@3.0.0 rebuilt from memory_vectors.f32 (float32 LE, row-major)";

/** `memory_metadata.json` (METHOD.md §4.5). */
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

/** Points in a write where tests may simulate a crash (the hook throws). */
export type CommitPhase = "staged" | "committed" | `renamed:${string}` | "done";

export interface JsonlStoreOptions {
  /** Embedding dimension; must match an existing store's metadata. */
  dimension: number;
  /** Test hook called at each commit phase; throwing from it simulates a crash at that point. */
  onCommitPhase?: (phase: CommitPhase) => void;
}

/** MemoryStore persisted in a run directory (see module header for the on-disk protocol). */
export class JsonlMemoryStore extends TableMemoryStore {
  readonly dir: string;
  #onPhase: (phase: CommitPhase) => void;
  /** Set when a write failed part-way: memory and disk may differ until the store is reopened. */
  #failure: unknown = null;

  private constructor(dir: string, table: MemoryTable, onPhase: (phase: CommitPhase) => void) {
    super(table);
    this.dir = dir;
    this.#onPhase = onPhase;
  }

  /** Opens (creating if needed) the store in `dir`, recovering from an interrupted write first. */
  static open(dir: string, opts: JsonlStoreOptions): JsonlMemoryStore {
    fs.mkdirSync(dir, { recursive: true });
    recoverMemoryDir(dir);
    const table = readMemoryDir(dir, opts.dimension);
    return new JsonlMemoryStore(dir, table, opts.onCommitPhase ?? (() => undefined));
  }

  protected async insertNow(entry: MemoryEntry, embedder: Embedder): Promise<InsertResult> {
    if (this.#failure !== null)
      throw new InputFileError(this.dir, "an earlier memory write failed part-way", "reopen the store with JsonlMemoryStore.open(), which recovers it", this.#failure);
    const plan = this.table.plan(entry);
    const vector = await this.table.embedPlan(plan, embedder);
    if (plan.kind !== "skip" && vector !== null) {
      const entries = [...this.table.entries()];
      const vectors = [...this.table.vectors()];
      entries[plan.row] = plan.entry;
      vectors[plan.row] = vector;
      try {
        writeMemoryDir(this.dir, entries, vectors, this.dimension, this.#onPhase);
      } catch (error) {
        this.#failure = error;
        throw error;
      }
    }
    this.table.apply(plan as InsertionPlan, vector);
    return MemoryTable.resultOf(plan, entry);
  }
}

/** Serialises the full state and commits it as one transaction (see module header). */
export function writeMemoryDir(
  dir: string,
  entries: readonly MemoryEntry[],
  vectors: readonly Float32Array[],
  dimension: number,
  onPhase: (phase: CommitPhase) => void = () => undefined,
): void {
  const lines = (polarity: string): string =>
    entries.filter((e) => e.polarity === polarity).map((e) => canonicalJson(e as unknown as JsonValue) + "\n").join("");
  const vectorBytes = encodeVectors(vectors, dimension);
  const positive = entries.filter((e) => e.polarity === "positive").length;
  const metadata: MemoryMetadata = {
    format_version: MEMORY_FORMAT_VERSION,
    entry_count: entries.length,
    positive_count: positive,
    negative_count: entries.length - positive,
    embedding_dimension: dimension,
    index_backend: INDEX_BACKEND,
    vector_hash: sha256Hex(vectorBytes),
  };
  const files: [string, string | Uint8Array][] = [
    [MEMORY_FILES.positive, lines("positive")],
    [MEMORY_FILES.negative, lines("negative")],
    [MEMORY_FILES.rowToEntryId, canonicalJson(entries.map((e) => e.entry_id)) + "\n"],
    [MEMORY_FILES.vectors, vectorBytes],
    [MEMORY_FILES.metadata, canonicalJson(metadata as unknown as JsonValue) + "\n"],
  ];
  for (const [name, data] of files) writeDurable(path.join(dir, name + TMP), data);
  onPhase("staged");
  writeDurable(path.join(dir, COMMIT_MARKER + TMP), canonicalJson({ files: files.map(([name]) => name) }) + "\n");
  fs.renameSync(path.join(dir, COMMIT_MARKER + TMP), path.join(dir, COMMIT_MARKER));
  fsyncDir(dir);
  onPhase("committed");
  for (const [name] of files) {
    fs.renameSync(path.join(dir, name + TMP), path.join(dir, name));
    onPhase(`renamed:${name}`);
  }
  fsyncDir(dir);
  fs.unlinkSync(path.join(dir, COMMIT_MARKER));
  fsyncDir(dir);
  onPhase("done");
}

/**
 * Finishes or discards an interrupted write: with a commit marker, every listed temp file still
 * present is renamed over its target (roll forward) and the marker removed; then any remaining
 * `*.tmp` file (an uncommitted write) is deleted. Idempotent, so a crash during recovery is safe.
 */
export function recoverMemoryDir(dir: string): void {
  const marker = path.join(dir, COMMIT_MARKER);
  if (fs.existsSync(marker)) {
    const listed = parseJson(marker, fs.readFileSync(marker, "utf8")) as { files?: unknown };
    if (!Array.isArray(listed.files)) throw new InputFileError(marker, "commit marker without a file list", "restore the run directory from a backup");
    for (const name of listed.files as string[]) {
      const tmp = path.join(dir, name + TMP);
      if (fs.existsSync(tmp)) fs.renameSync(tmp, path.join(dir, name));
    }
    fsyncDir(dir);
    fs.unlinkSync(marker);
    fsyncDir(dir);
  }
  for (const name of fs.readdirSync(dir)) {
    if (name.startsWith("memory_") && name.endsWith(TMP)) fs.unlinkSync(path.join(dir, name));
  }
}

/** Reads a (recovered) memory directory into a table, checking every cross-file invariant. */
export function readMemoryDir(dir: string, dimension: number): MemoryTable {
  const table = new MemoryTable(dimension);
  const metaPath = path.join(dir, MEMORY_FILES.metadata);
  if (!fs.existsSync(metaPath)) {
    const stray = Object.values(MEMORY_FILES).filter((name) => fs.existsSync(path.join(dir, name)));
    if (stray.length > 0)
      throw new InputFileError(metaPath, `missing while ${stray.join(", ")} exist`, `the memory directory is not a kit memory store; ${REBUILD}`);
    return table;
  }
  const meta = parseJson(metaPath, fs.readFileSync(metaPath, "utf8")) as MemoryMetadata;
  const fail = (file: string, problem: string): never => {
    throw new InputFileError(path.join(dir, file), problem, `the memory store is corrupt or from another kit version; ${REBUILD}`);
  };
  if (meta.format_version !== MEMORY_FORMAT_VERSION) fail(MEMORY_FILES.metadata, `format_version ${meta.format_version}, expected ${MEMORY_FORMAT_VERSION}`);
  if (meta.embedding_dimension !== dimension)
    fail(MEMORY_FILES.metadata, `embedding_dimension ${meta.embedding_dimension} but the embedder has ${dimension}`);
  const rowIds = parseJson(path.join(dir, MEMORY_FILES.rowToEntryId), fs.readFileSync(path.join(dir, MEMORY_FILES.rowToEntryId), "utf8")) as string[];
  const byId = new Map<string, MemoryEntry>();
  for (const file of [MEMORY_FILES.positive, MEMORY_FILES.negative]) {
    const text = fs.readFileSync(path.join(dir, file), "utf8");
    text.split("\n").forEach((line, i) => {
      if (line === "") return;
      const entry = parseJson(`${path.join(dir, file)}:${i + 1}`, line) as MemoryEntry;
      const problems = entryProblems(entry);
      if (problems.length > 0) fail(file, `line ${i + 1}: ${problems.join("; ")}`);
      if (byId.has(entry.entry_id)) fail(file, `line ${i + 1}: duplicate entry_id ${entry.entry_id}`);
      byId.set(entry.entry_id, entry);
    });
  }
  if (rowIds.length !== meta.entry_count || byId.size !== meta.entry_count)
    fail(MEMORY_FILES.metadata, `entry_count ${meta.entry_count}, but ${rowIds.length} row ids and ${byId.size} entries on disk`);
  const vectorBytes = fs.readFileSync(path.join(dir, MEMORY_FILES.vectors));
  if (sha256Hex(vectorBytes) !== meta.vector_hash) fail(MEMORY_FILES.vectors, "SHA-256 does not match vector_hash in memory_metadata.json");
  const vectors = decodeVectors(vectorBytes, dimension);
  if (vectors.length !== rowIds.length) fail(MEMORY_FILES.vectors, `${vectors.length} vectors for ${rowIds.length} rows`);
  rowIds.forEach((id, row) => {
    const entry = byId.get(id);
    if (entry === undefined) return fail(MEMORY_FILES.rowToEntryId, `row ${row} names ${id}, which no JSONL file holds`);
    table.apply({ kind: "insert", row, entry }, vectors[row]);
  });
  return table;
}

/** Row-major little-endian float32 bytes. */
export function encodeVectors(vectors: readonly Float32Array[], dimension: number): Uint8Array {
  const bytes = new Uint8Array(vectors.length * dimension * 4);
  const view = new DataView(bytes.buffer);
  vectors.forEach((v, row) => {
    for (let i = 0; i < dimension; i++) view.setFloat32((row * dimension + i) * 4, v[i], true);
  });
  return bytes;
}

function decodeVectors(bytes: Uint8Array, dimension: number): Float32Array[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const rows = Math.floor(bytes.byteLength / (dimension * 4));
  const out: Float32Array[] = [];
  for (let row = 0; row < rows; row++) {
    const v = new Float32Array(dimension);
    for (let i = 0; i < dimension; i++) v[i] = view.getFloat32((row * dimension + i) * 4, true);
    out.push(v);
  }
  return out;
}

function writeDurable(file: string, data: string | Uint8Array): void {
  const fd = fs.openSync(file, "w");
  try {
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    let offset = 0;
    while (offset < bytes.byteLength) offset += fs.writeSync(fd, bytes, offset, bytes.byteLength - offset);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function parseJson(where: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new InputFileError(where, `not valid JSON (${(cause as Error).message})`, `the memory store is corrupt; ${REBUILD}`, cause);
  }
}
