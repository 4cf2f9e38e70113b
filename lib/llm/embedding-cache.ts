/**
 * The content-addressed embedding cache (METHOD.md §5.3; the LLM calls' counterpart is call-cache.ts): an
 * Embedder that answers each text's vector from the `embeddings` table of the call-cache SQLite file
 * and hands only the texts it lacks to the real embedder, which it loads on the first miss — so a
 * resumed or repeated run embeds nothing twice, and a run whose vectors are all stored never loads
 * the embedding model at all. The same file as the call cache, so `merit cache stats|verify|prune|
 * merge` and the demo's replay copy cover both tables.
 *
 * Key = SHA-256 of canonicalJson({embedder: identity, text}): the embedder kind, model name, model
 * file sha256 and every vector-changing option (`params`: max tokens, truncation side,
 * normalisation), and the exact text. Deliberately EXCLUDED: whether the text is a memory entry's
 * dense text or a retrieval query (the embedder is given the string as it is either way, so the
 * vector depends on the text alone), thread count and GPU offload (vectors are thread-invariant,
 * test/llm/llama-embedder.test.ts), batch size, base URLs, and the file's own path.
 * Vectors are stored exactly: `dimension` float32 values, little-endian, as a BLOB; the row hash
 * (over key, dimension and the bytes) is checked on every hit, so a served vector is bit-identical
 * to the one computed and a damaged row is refused, never used. Safe for several processes (WAL,
 * INSERT OR IGNORE: vectors of one identity are deterministic, so the first writer's is the one).
 * @module
 */
import type Database from "better-sqlite3";
import { InputFileError, MeritError } from "../errors.ts";
import { canonicalJson, contentHash, sha256Hex } from "../hash.ts";
import { identityJson, openCacheDatabase } from "./call-cache.ts";
import type { BackendIdentity, Embedder } from "./types.ts";

/** Texts served from the file (hits) and texts the real embedder embedded (computed). */
export interface EmbeddingCacheStats {
  hits: number;
  computed: number;
}

/** The cache key of one text under one embedder identity. */
export function embeddingKey(identity: BackendIdentity, text: string): string {
  return contentHash({ embedder: identityJson(identity), text });
}

/** Hash over a stored row's payload (key, dimension, the vector's bytes). */
export function embeddingRowHash(key: string, dimension: number, bytes: Uint8Array): string {
  return sha256Hex(canonicalJson({ key, dimension, vector: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64") }));
}

/** A vector's float32 values as little-endian bytes. */
export function vectorBytes(vector: Float32Array): Buffer {
  const out = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i++) out.writeFloatLE(vector[i], i * 4);
  return out;
}

/** The vector of stored little-endian bytes (a fresh array). */
export function vectorFromBytes(bytes: Uint8Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(bytes.byteLength / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}

/** Why a stored embedding row fails verification (undefined when it is sound). */
export function embeddingRowProblem(r: Record<string, unknown>): string | undefined {
  let identity: unknown;
  try {
    identity = JSON.parse(String(r.identity));
  } catch {
    return "identity is not valid JSON";
  }
  if (contentHash(identity as never) !== r.identity_hash) return "identity_hash does not match the stored identity";
  if (typeof r.text !== "string") return "text is not a string";
  if (contentHash({ embedder: identity as never, text: r.text }) !== r.key) return "key does not match identity + text";
  const dimension = r.dimension;
  if (typeof dimension !== "number" || !Number.isInteger(dimension) || dimension <= 0) return "dimension is not a positive integer";
  if (!(r.vector instanceof Uint8Array)) return "vector is not a BLOB";
  if (r.vector.byteLength !== dimension * 4) return `vector has ${r.vector.byteLength} bytes, dimension ${dimension} needs ${dimension * 4}`;
  return embeddingRowHash(String(r.key), dimension, r.vector) === r.row_hash ? undefined : "row_hash does not match the dimension and vector bytes";
}

/** The embedder a cache delegates misses to, and when it is loaded. */
export interface EmbeddingCacheSource {
  /** Identity the vectors are keyed by; the loaded embedder must report the same. */
  identity: BackendIdentity;
  dimension: number;
  /** Loads the real embedder; called at most once, on the first text not in the file. */
  load(): Promise<Embedder>;
  /** Embedding tokens per text without embedding (e.g. the GGUF's vocabulary only); absent when they cannot be counted. */
  tokenCounts?(texts: readonly string[]): Promise<number[] | null>;
}

/** An Embedder that answers from the cache file and embeds misses with the lazily loaded real one. */
export class EmbeddingCache implements Embedder {
  readonly identity: BackendIdentity;
  readonly dimension: number;
  readonly #source: EmbeddingCacheSource;
  readonly #path: string;
  readonly #db: Database.Database;
  readonly #identityText: string;
  readonly #identityHash: string;
  readonly #stats: EmbeddingCacheStats = { hits: 0, computed: 0 };
  readonly #inFlight = new Map<string, Promise<Float32Array>>();
  readonly #select: Database.Statement<[string], { dimension: number; vector: Buffer; row_hash: string }>;
  readonly #insert: Database.Statement<unknown[]>;
  #inner: Promise<Embedder> | null = null;

  /** @param path the call-cache SQLite file (created when missing). */
  constructor(source: EmbeddingCacheSource, path: string) {
    this.#source = source;
    this.identity = source.identity;
    this.dimension = source.dimension;
    this.#path = path;
    this.#db = openCacheDatabase(path);
    this.#identityText = canonicalJson(identityJson(source.identity));
    this.#identityHash = contentHash(identityJson(source.identity));
    this.#select = this.#db.prepare("SELECT dimension, vector, row_hash FROM embeddings WHERE key = ?");
    this.#insert = this.#db.prepare("INSERT OR IGNORE INTO embeddings (key, identity_hash, identity, text, dimension, vector, created_at, row_hash) VALUES (?,?,?,?,?,?,?,?)");
  }

  /** Counters since this object was created (a copy). */
  stats(): EmbeddingCacheStats {
    return { ...this.#stats };
  }

  /** Whether the real embedder was loaded (some text was not in the file). */
  get loaded(): boolean {
    return this.#inner !== null;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const out = new Array<Promise<Float32Array> | Float32Array>(texts.length);
    const misses = new Map<string, { text: string; rows: number[] }>();
    texts.forEach((text, i) => {
      const key = embeddingKey(this.identity, text);
      const stored = this.#lookup(key);
      if (stored !== null) {
        this.#stats.hits++;
        out[i] = stored;
        return;
      }
      const pending = this.#inFlight.get(key);
      if (pending !== undefined) {
        this.#stats.hits++;
        const copy = pending.then((v) => v.slice());
        copy.catch(() => undefined); // reported through Promise.all below, or through this caller's own failed batch
        out[i] = copy;
        return;
      }
      const miss = misses.get(key);
      if (miss === undefined) misses.set(key, { text, rows: [i] });
      else {
        this.#stats.hits++; // the same text twice in one batch is embedded once
        miss.rows.push(i);
      }
    });
    if (misses.size > 0) {
      const keys = [...misses.keys()];
      const batch = this.#compute(keys, keys.map((k) => (misses.get(k) as { text: string }).text));
      keys.forEach((key, j) => {
        const vector = batch.then((vs) => vs[j]);
        vector.catch(() => undefined); // a failure reaches this caller through `await batch`, and other waiters through their own handlers
        this.#inFlight.set(key, vector);
      });
      try {
        const vectors = await batch;
        keys.forEach((key, j) => (misses.get(key) as { rows: number[] }).rows.forEach((row, n) => (out[row] = n === 0 ? vectors[j] : vectors[j].slice())));
      } finally {
        for (const key of keys) this.#inFlight.delete(key);
      }
    }
    return Promise.all(out);
  }

  /** The stored vector of `key` (row hash checked), or null when the file has none. */
  #lookup(key: string): Float32Array | null {
    const row = this.#select.get(key);
    if (row === undefined) return null;
    if (row.dimension !== this.dimension || row.vector.byteLength !== row.dimension * 4 || embeddingRowHash(key, row.dimension, row.vector) !== row.row_hash) {
      throw new InputFileError(this.#path, `the cached embedding ${key.slice(0, 12)} fails its row_hash check (its vector was changed or damaged)`, "run `merit cache verify --cache FILE` to list the corrupt rows, then delete the cache file (or restore it) to recompute them");
    }
    return vectorFromBytes(row.vector);
  }

  async #compute(keys: readonly string[], texts: readonly string[]): Promise<Float32Array[]> {
    const inner = await this.#embedder();
    const vectors = await inner.embed(texts);
    if (vectors.length !== texts.length) throw new MeritError(`embedder ${this.identity.model} returned ${vectors.length} vectors for ${texts.length} texts`, { exitCode: 70 });
    this.#stats.computed += texts.length;
    const now = new Date().toISOString();
    const rows = vectors.map((vector, j) => {
      if (vector.length !== this.dimension) throw new MeritError(`embedder ${this.identity.model} returned a vector of ${vector.length} dimensions, expected ${this.dimension}`, { exitCode: 70 });
      const bytes = vectorBytes(vector);
      return [keys[j], this.#identityHash, this.#identityText, texts[j], this.dimension, bytes, now, embeddingRowHash(keys[j], this.dimension, bytes)];
    });
    try {
      this.#db.transaction(() => {
        for (const row of rows) this.#insert.run(...row);
      })();
    } catch (error) {
      throw new InputFileError(this.#path, `cannot store an embedding (${(error as Error).message})`, "free disk space or check the call_cache file and its folder, then resume the run (`--resume`)", error);
    }
    return vectors;
  }

  /** The real embedder, loaded once; its identity and dimension must be the ones the keys use. */
  #embedder(): Promise<Embedder> {
    this.#inner ??= this.#source.load().then((inner) => {
      if (canonicalJson(identityJson(inner.identity)) !== this.#identityText || inner.dimension !== this.dimension) {
        throw new MeritError(
          `the loaded embedder ${inner.identity.model} reports identity ${canonicalJson(identityJson(inner.identity))} (dimension ${inner.dimension}), not the ${this.#identityText} (dimension ${this.dimension}) read from its file before loading; its vectors cannot be cached under that key`,
          { exitCode: 70 },
        );
      }
      return inner;
    });
    return this.#inner;
  }

  /**
   * Embedding tokens per text from the source (its token counter, vocabulary only), so a
   * text counts the same tokens whether its vector is in the file or computed; null when the source
   * cannot count (a remote embedder without a local GGUF of its model).
   */
  async tokenCounts(texts: readonly string[]): Promise<number[] | null> {
    return (await this.#source.tokenCounts?.(texts)) ?? null;
  }

  /** Closes the cache file only; whoever supplied `load` owns the real embedder (see `loadedEmbedder`) and the token counter. */
  async close(): Promise<void> {
    if (this.#db.open) this.#db.close();
  }

  /** The real embedder when it was loaded (for its owner to close), else null. */
  loadedEmbedder(): Promise<Embedder> | null {
    return this.#inner;
  }
}
