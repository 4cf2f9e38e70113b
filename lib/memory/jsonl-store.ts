/**
 * Memory stage (METHOD.md §4.5, format version 3): the persistent MemoryStore of a run directory.
 * The files always hold exactly the committed rows (lib/memory/file-layout.ts), and a write is
 * append-only where the format allows it: an insertion appends its line, vector row and id, a merge
 * rewrites its polarity file(s) from its row on. Each write is ONE transaction with a redo record
 * (lib/memory/file-transaction.ts): the record is fsynced, renamed into place (the commit point),
 * then applied and removed. Opening a directory replays a committed record — repairing a file that
 * a kill left half-written, such as a torn last line — and deletes an uncommitted one, so a kill at
 * any instant leaves a readable store holding every entry whose `insert` had resolved (and perhaps
 * the one in flight; the run's resume replays committed episodes, skipping those already stored).
 *
 * Files: memory_positive.jsonl, memory_negative.jsonl (one entry per line, canonical JSON: sorted
 * keys, compact separators, non-ASCII kept, row order filtered by polarity),
 * memory_row_to_entry_id.json, memory_vectors.f32 (row-major little-endian float32; the kit's
 * stand-in for memory_index.faiss — the HNSW index is rebuilt from it in process),
 * memory_metadata.json {format_version: 3, entry_count, positive_count, negative_count,
 * embedding_dimension, index_backend, vector_hash}. A store opened with dimension 0 (a method whose
 * ranker reads no vectors: no_dense_rerank, random_same_type) never calls the embedder; its
 * memory_vectors.f32 stays empty and its metadata says embedding_dimension 0.
 * @module
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { InputFileError, parseJsonText } from "../errors.ts";
import { sha256Hex } from "../hash.ts";
import type { Embedder } from "../llm/types.ts";
import { entryProblems, type MemoryEntry } from "./entry.ts";
import { MEMORY_FILES, MEMORY_FORMAT_VERSION, MemoryFileLayout, type MemoryMetadata, type WritingPlan } from "./file-layout.ts";
import { commitChanges, recoverChanges, type CommitPhase } from "./file-transaction.ts";
import { MemoryTable } from "./memory-table.ts";
import type { InsertResult } from "./store.ts";
import { TableMemoryStore } from "./table-store.ts";

export { encodeVectors, MEMORY_FILES, MEMORY_FORMAT_VERSION, memoryFileBytes, type MemoryMetadata } from "./file-layout.ts";
export { COMMIT_MARKER, type CommitPhase } from "./file-transaction.ts";

/** The fix for a damaged store: run.ts replays every committed episode's insertion on resume. */
const REBUILD = "delete the run's memory/ folder and resume the run (--resume): memory is rebuilt from the committed trajectories";
/** The files in the order a write applies its changes. */
const FILE_ORDER = Object.values(MEMORY_FILES);

export interface JsonlStoreOptions {
  /** Embedding dimension; must match an existing store's metadata. 0: no vectors, nothing embedded. */
  dimension: number;
  /** Test hook called at each commit phase; throwing from it simulates a crash at that point. */
  onCommitPhase?: (phase: CommitPhase) => void;
}

/** MemoryStore persisted in a run directory (see module header for the on-disk protocol). */
export class JsonlMemoryStore extends TableMemoryStore {
  readonly dir: string;
  #onPhase: (phase: CommitPhase) => void;
  readonly #layout: MemoryFileLayout;
  /** Set when a write failed part-way: memory and disk may differ until the store is reopened. */
  #failure: unknown = null;

  private constructor(dir: string, table: MemoryTable, layout: MemoryFileLayout, onPhase: (phase: CommitPhase) => void) {
    super(table);
    this.dir = dir;
    this.#layout = layout;
    this.#onPhase = onPhase;
  }

  /** Opens (creating if needed) the store in `dir`, recovering from an interrupted write first. */
  static open(dir: string, opts: JsonlStoreOptions): JsonlMemoryStore {
    fs.mkdirSync(dir, { recursive: true });
    recoverMemoryDir(dir);
    const table = readMemoryDir(dir, opts.dimension);
    const exist = fs.existsSync(path.join(dir, MEMORY_FILES.metadata));
    const bytes = (name: string) => (exist ? fs.readFileSync(path.join(dir, name)) : new Uint8Array(0));
    const disk = { exist, positive: bytes(MEMORY_FILES.positive), negative: bytes(MEMORY_FILES.negative), rowToEntryId: bytes(MEMORY_FILES.rowToEntryId), vectors: bytes(MEMORY_FILES.vectors) };
    const layout = new MemoryFileLayout(table.entries(), table.vectors(), disk, opts.dimension);
    return new JsonlMemoryStore(dir, table, layout, opts.onCommitPhase ?? (() => undefined));
  }

  protected async insertNow(entry: MemoryEntry, embedder: Embedder): Promise<InsertResult> {
    if (this.#failure !== null)
      throw new InputFileError(this.dir, "an earlier memory write failed part-way", "reopen the store with JsonlMemoryStore.open(), which recovers it", this.#failure);
    const plan = this.table.plan(entry);
    const vector = await this.table.embedPlan(plan, embedder);
    if (plan.kind !== "skip" && vector !== null) {
      try {
        const write = this.#layout.plan(plan as WritingPlan, vector, this.table.entries(), this.table.vectors());
        commitChanges(this.dir, FILE_ORDER, write.changes, this.#onPhase);
        write.accept();
      } catch (error) {
        this.#failure = error;
        throw error;
      }
    }
    this.table.apply(plan, vector);
    return this.table.resultOf(plan, entry);
  }
}

/** Finishes or discards an interrupted write (see lib/memory/file-transaction.ts `recoverChanges`). */
export function recoverMemoryDir(dir: string): void {
  recoverChanges(dir);
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
  if (meta.embedding_dimension !== dimension && (meta.embedding_dimension === 0 || dimension === 0))
    fail(MEMORY_FILES.metadata, `embedding_dimension ${meta.embedding_dimension} but this method's ranker reads ${dimension === 0 ? "no vectors (dimension 0)" : `${dimension}-dimensional vectors`}`);
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
  const vectors = decodeVectors(vectorBytes, dimension, rowIds.length);
  if (vectors.length !== rowIds.length) fail(MEMORY_FILES.vectors, `${vectors.length} vectors for ${rowIds.length} rows`);
  rowIds.forEach((id, row) => {
    const entry = byId.get(id);
    if (entry === undefined) return fail(MEMORY_FILES.rowToEntryId, `row ${row} names ${id}, which no JSONL file holds`);
    table.apply({ kind: "insert", row, entry }, vectors[row]);
  });
  return table;
}

function decodeVectors(bytes: Uint8Array, dimension: number, rows: number): Float32Array[] {
  // Dimension 0 (a ranker that reads no vectors): an empty file holds the empty vector of every row.
  if (dimension === 0) return bytes.byteLength === 0 ? Array.from({ length: rows }, () => new Float32Array(0)) : [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = Math.floor(bytes.byteLength / (dimension * 4));
  const out: Float32Array[] = [];
  for (let row = 0; row < count; row++) {
    const v = new Float32Array(dimension);
    for (let i = 0; i < dimension; i++) v[i] = view.getFloat32((row * dimension + i) * 4, true);
    out.push(v);
  }
  return out;
}

function parseJson(where: string, text: string): unknown {
  return parseJsonText(text, where, "not valid JSON", `the memory store is corrupt; ${REBUILD}`);
}
