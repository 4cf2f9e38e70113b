/**
 * The content-addressed call cache (METHOD.md §6.4–6.6, STYLE.md §2.6, §2.8): a ChatBackend that
 * wraps another and stores each greedy result in SQLite, so a warm re-run makes zero model calls and
 * reproduces outputs byte for byte. Safe for several processes writing one file (WAL, busy_timeout,
 * INSERT OR IGNORE: the first writer of a key wins, and greedy outputs are identical anyway).
 *
 * Key = SHA-256 of canonicalJson({backend: identity, request: {prompt, maxOutputTokens}}) — with
 * `sampling: {temperature, seed}` in the request for a sampled call (GenerateRequest), so each sample
 * of a method's declared sampling is stored under its own seed and replayed byte for byte — i.e. the
 * backend kind, model name, model sha256, every output-changing parameter (decoding, penalties,
 * truncation, seed, template) and the exact user message before templating.
 * Deliberately EXCLUDED from the key (they do not change a greedy output):
 * - thread count, GPU type and layer offload, sequence count, batch size (greedy output is the same
 *   across thread counts; device numerics are not part of what was asked);
 * - base URLs, timeouts, retry and concurrency settings of remote backends;
 * - the caller's purpose/query id/stream position and the per-call derived seed of METHOD.md §6.4
 *   (irrelevant under greedy decoding);
 * - wall-clock time and the cache file's own path;
 * - how many transient failures a call needed (GenerateResult `retries`): neither stored nor keyed.
 * Errors are never cached; a backend that samples every call (not greedy) must put its seed in
 * `identity.params`.
 * The same file holds the embedding cache's `embeddings` table (lib/llm/embedding-cache.ts).
 * @module
 */
import { accessSync, constants, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { InputFileError } from "../errors.ts";
import { canonicalJson, contentHash, type JsonValue } from "../hash.ts";
import type { BackendIdentity, ChatBackend, GenerateRequest, GenerateResult } from "./types.ts";

/**
 * Hits (served from the file), computed (inner backend called), errors (inner call failed, not
 * stored), retries (transient server failures the computed calls needed, GenerateResult `retries`).
 */
export interface CallCacheStats {
  hits: number;
  computed: number;
  errors: number;
  retries: number;
}

/** One stored call as the cache file holds it. */
export interface CachedCall {
  key: string;
  identityHash: string;
  identity: string;
  request: string;
  text: string;
  promptTokens: number;
  outputTokens: number;
  truncatedPromptTokens: number;
  createdAt: string;
  rowHash: string;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS calls (
  key TEXT PRIMARY KEY,
  identity_hash TEXT NOT NULL,
  identity TEXT NOT NULL,
  request TEXT NOT NULL,
  text TEXT NOT NULL,
  prompt_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  truncated_prompt_tokens INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  row_hash TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS calls_identity ON calls(identity_hash);
CREATE TABLE IF NOT EXISTS embeddings (
  key TEXT PRIMARY KEY,
  identity_hash TEXT NOT NULL,
  identity TEXT NOT NULL,
  text TEXT NOT NULL,
  dimension INTEGER NOT NULL,
  vector BLOB NOT NULL,
  created_at TEXT NOT NULL,
  row_hash TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS embeddings_identity ON embeddings(identity_hash);
`;

/**
 * Whether a cache file has the `embeddings` table of lib/llm/embedding-cache.ts (created with `calls`
 * whenever a file is opened for writing; files written before it existed have only `calls`).
 */
export function hasEmbeddingsTable(db: Database.Database): boolean {
  return db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'embeddings'").get() !== undefined;
}

/** Opens (creating if needed) a cache file with WAL and a busy timeout for concurrent writers. */
export function openCacheDatabase(path: string, opts: { readonly?: boolean } = {}): Database.Database {
  if (!opts.readonly) mkdirSync(dirname(path), { recursive: true });
  let db: Database.Database;
  try {
    db = new Database(path, { readonly: opts.readonly ?? false, fileMustExist: opts.readonly ?? false });
  } catch (error) {
    throw new InputFileError(path, `cannot open the LLM call cache (${(error as Error).message})`, "check the call_cache path in the config (its folder must be writable)", error);
  }
  try {
    db.pragma("busy_timeout = 30000");
    if (!opts.readonly) {
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
      db.exec(SCHEMA);
    }
    // A garbage file opens fine and fails on first use ("file is not a database"): probe it now.
    const table = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'calls'").get();
    if (!table) throw new Error("it has no `calls` table");
  } catch (error) {
    db.close();
    // A WAL-mode database cannot be read where SQLite can create neither its -shm nor its -wal file
    // beside it (a read-only folder or file system): say so, not "not a cache".
    if ((error as { code?: unknown }).code === "SQLITE_CANTOPEN") {
      const where = isWritable(dirname(path)) ? "SQLite could not open it" : "its folder is read-only and SQLite must create the -shm and -wal files of a WAL-mode cache beside it";
      throw new InputFileError(path, `cannot be read here (${where})`, "copy the cache file to a writable folder and pass the copy, or make its folder writable", error);
    }
    throw new InputFileError(path, `is not an LLM call cache (${(error as Error).message})`, "point call_cache (or --cache) at a cache file the kit wrote, or move this file away to start an empty cache", error);
  }
  return db;
}

function isWritable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** One line for a SQLite failure while writing the cache (a full disk, above all). */
function writeFailure(path: string, error: unknown): InputFileError {
  const code = (error as { code?: string }).code;
  const full = code === "SQLITE_FULL" || code === "SQLITE_IOERR_WRITE" || /disk is full|no space/i.test((error as Error).message);
  return new InputFileError(path, full ? "database or disk is full while storing an LLM call" : `cannot store an LLM call (${(error as Error).message})`, full ? "free disk space and resume the run (`--resume`); every committed episode is kept" : "check the call_cache file and its folder", error);
}

/** The cache key of one request to one backend. */
export function callKey(identity: BackendIdentity, request: GenerateRequest): string {
  return contentHash({ backend: identityJson(identity), request: requestJson(request) });
}

/** Hash over a stored row's payload, so `verify` can detect edited or damaged rows. */
export function rowHash(row: Pick<CachedCall, "key" | "text" | "promptTokens" | "outputTokens" | "truncatedPromptTokens">): string {
  return contentHash({ key: row.key, text: row.text, promptTokens: row.promptTokens, outputTokens: row.outputTokens, truncatedPromptTokens: row.truncatedPromptTokens });
}

export function identityJson(identity: BackendIdentity): JsonValue {
  return { kind: identity.kind, model: identity.model, modelHash: identity.modelHash, params: identity.params };
}

function requestJson(request: GenerateRequest): JsonValue {
  // A sampled request keys its temperature and seed too; a greedy one keeps the key it always had.
  const sampling = request.sampling ? { sampling: { temperature: request.sampling.temperature, seed: request.sampling.seed } } : {};
  return { prompt: request.prompt, maxOutputTokens: request.maxOutputTokens, ...sampling };
}

/** A ChatBackend that answers from the cache file and delegates misses to `inner`. */
export class CallCache implements ChatBackend {
  readonly identity: BackendIdentity;
  readonly #inner: ChatBackend;
  readonly #db: Database.Database;
  readonly #identityText: string;
  readonly #identityHash: string;
  readonly #inFlight = new Map<string, Promise<GenerateResult>>();
  readonly #stats: CallCacheStats = { hits: 0, computed: 0, errors: 0, retries: 0 };
  readonly #select: Database.Statement<[string], { text: string; prompt_tokens: number; output_tokens: number; truncated_prompt_tokens: number; row_hash: string }>;
  readonly #path: string;
  readonly #insert: Database.Statement<unknown[]>;

  /** @param path the SQLite file (created when missing). */
  constructor(inner: ChatBackend, path: string) {
    this.#inner = inner;
    this.identity = inner.identity;
    this.#path = path;
    this.#db = openCacheDatabase(path);
    this.#identityText = canonicalJson(identityJson(inner.identity));
    this.#identityHash = contentHash(identityJson(inner.identity));
    this.#select = this.#db.prepare("SELECT text, prompt_tokens, output_tokens, truncated_prompt_tokens, row_hash FROM calls WHERE key = ?");
    this.#insert = this.#db.prepare(
      "INSERT OR IGNORE INTO calls (key, identity_hash, identity, request, text, prompt_tokens, output_tokens, truncated_prompt_tokens, created_at, row_hash) VALUES (?,?,?,?,?,?,?,?,?,?)",
    );
  }

  /** Counters since this object was created (a copy). */
  stats(): CallCacheStats {
    return { ...this.#stats };
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const key = callKey(this.identity, request);
    const row = this.#select.get(key);
    if (row) {
      // Every hit is checked against its row hash (one SHA-256 of a short text): a changed or damaged
      // output is refused, never used.
      const expected = rowHash({ key, text: row.text, promptTokens: row.prompt_tokens, outputTokens: row.output_tokens, truncatedPromptTokens: row.truncated_prompt_tokens });
      if (expected !== row.row_hash) {
        throw new InputFileError(this.#path, `the cached call ${key.slice(0, 12)} fails its row_hash check (its output or token counts were changed or damaged)`, "run `merit cache verify --cache FILE` to list the corrupt rows, then delete the cache file (or restore it) to recompute them");
      }
      this.#stats.hits++;
      return { text: row.text, promptTokens: row.prompt_tokens, outputTokens: row.output_tokens, truncatedPromptTokens: row.truncated_prompt_tokens, cached: true };
    }
    // The same key requested twice at once is computed once; the second caller counts as a hit.
    const pending = this.#inFlight.get(key);
    if (pending) {
      const { retries: _retries, ...result } = await pending;
      this.#stats.hits++;
      return { ...result, cached: true };
    }
    const computation = this.#compute(key, request);
    this.#inFlight.set(key, computation);
    try {
      return await computation;
    } finally {
      this.#inFlight.delete(key);
    }
  }

  async #compute(key: string, request: GenerateRequest): Promise<GenerateResult> {
    let result: GenerateResult;
    try {
      result = await this.#inner.generate(request);
    } catch (error) {
      this.#stats.errors++;
      throw error;
    }
    this.#stats.computed++;
    this.#stats.retries += result.retries ?? 0;
    const stored = { key, text: result.text, promptTokens: result.promptTokens, outputTokens: result.outputTokens, truncatedPromptTokens: result.truncatedPromptTokens };
    try {
      this.#insert.run(
        key, this.#identityHash, this.#identityText, canonicalJson(requestJson(request)), result.text,
        result.promptTokens, result.outputTokens, result.truncatedPromptTokens, new Date().toISOString(), rowHash(stored),
      );
    } catch (error) {
      throw writeFailure(this.#path, error);
    }
    return { ...result, cached: false };
  }

  /**
   * Closes the cache file only. The inner backend stays open: whoever created it owns it (one loaded
   * model may serve several caches or runs).
   */
  async close(): Promise<void> {
    if (this.#db.open) this.#db.close();
  }
}
