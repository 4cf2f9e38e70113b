/**
 * Gold denotation cache (METHOD.md §11.2): each gold query is executed once per (database file, gold
 * text) for the whole process, and optionally persisted in a small SQLite file so later processes skip
 * it too (`merit eval` keeps one at `runs/gold-cache.sqlite` by default). A gold that fails is cached
 * as a failure (it is deterministic); a gold timeout is kept in memory only, since a faster machine
 * may finish it.
 *
 * Disk key, content-addressed: SHA-256 of the database file's bytes (the same digest the database
 * manifest records, lib/file-hash.ts, so an eval that has loaded its dataset pays nothing more), the
 * gold text as executed (the protocol enters through it: each protocol prepares its own gold text),
 * the engine and, for SQLite, its library version (another engine or SQLite release may return
 * other rows), and the context the oracle executes with (text decoding, row and byte caps). A copied,
 * moved or re-extracted database with the same bytes hits; a changed one misses.
 *
 * Every row also records the SQL deadline it was executed under (`deadline_ms`): a gold that met a
 * deadline meets any longer one, so a row is used only under a deadline at least as long; under a
 * shorter one it is a miss and the gold runs again under the current deadline, exactly as with no
 * cache file (a timeout then is a gold timeout; an answer replaces the row, with the shorter
 * deadline). Recording the deadline rather than the time the gold took keeps hits independent of
 * worker queueing and machine load.
 *
 * Every row carries a `row_hash` over its key, deadline and payload; a row that fails it (changed or
 * damaged on disk) is refused with one line naming the file, never used. Writes are batched: every
 * FLUSH_ROWS results in one transaction, the rest on `close()`.
 * @module
 */
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { createRequire } from "node:module";
import { serialize, deserialize } from "node:v8";
import type Database from "better-sqlite3";
import { InputFileError } from "../errors.ts";
import { fileDigest } from "../file-hash.ts";
import { sha256Hex } from "../hash.ts";
import type { ExecResult } from "./executor.ts";

/** Where `merit eval` keeps gold results across runs unless `--gold-cache FILE|none` says otherwise (relative to the working directory). */
export const DEFAULT_GOLD_CACHE = "runs/gold-cache.sqlite";

/** Pending results written in one transaction once this many have arrived (the rest on `close()`). */
const FLUSH_ROWS = 512;

/**
 * Version of the disk key and row layout; part of every key, so older rows never match. 4: each row
 * records the deadline it ran under (`deadline_ms`, in its row_hash); version 3 rows had none, so a
 * cached gold was used under any deadline, even one it would not have met. 3: payloads are the SQL
 * worker's own serialization of the rows (ExecResult `packed`), byte-comparable with a prediction's;
 * version 2 rows held the same rows serialized again by the parent, in other bytes.
 */
const KEY_VERSION = "gold-cache/4";

/** The deadline of the executions a cache is told nothing about: the executors' default (ExecutorOptions `timeoutMs`). */
const DEFAULT_DEADLINE_MS = 30_000;

/** better-sqlite3, loaded on first use: `merit eval` imports this module before its SQL worker starts (start-up, issue 22 §2). */
let sqlite: typeof Database | undefined;
function betterSqlite3(): typeof Database {
  return (sqlite ??= createRequire(import.meta.url)("better-sqlite3") as typeof Database);
}

/** The SQLite library version better-sqlite3 was built with (the worker processes load the same module). */
let sqliteVersion: string | null = null;
function bundledSqliteVersion(): string {
  if (sqliteVersion === null) {
    const db = new (betterSqlite3())(":memory:");
    try {
      sqliteVersion = String((db.prepare("SELECT sqlite_version() AS v").get() as { v: string }).v);
    } finally {
      db.close();
    }
  }
  return sqliteVersion;
}

interface Row {
  ok: number;
  payload: Buffer;
  deadline_ms: number;
  row_hash: string;
}

export class GoldCache {
  readonly #memory = new Map<string, Promise<ExecResult>>();
  readonly #db: Database.Database | null;
  readonly #file: string | null;
  readonly #select: Database.Statement<[string], Row> | null = null;
  readonly #insert: Database.Statement<[string, number, Buffer, number, string]> | null = null;
  readonly #digests = new Map<string, Promise<string>>();
  readonly #pending: Array<[string, number, Buffer, number, string]> = [];
  readonly #deadlineMs: number;
  #flushScheduled = false;
  /** Gold executions actually performed by this process. */
  executions = 0;
  /** Lookups answered from memory or disk. */
  hits = 0;
  /** Lookups answered from the file (a subset of `hits`). */
  diskHits = 0;

  readonly #context: string;

  /**
   * @param file SQLite file for persistence, or null for memory only.
   * @param engine the executor whose gold results are cached (part of the disk key).
   * @param context what else decides the rows an execution returns (text decoding, caps), as the
   *   oracle runs it; part of the disk key.
   * @param deadlineMs the SQL deadline `execute` runs golds under (the executor's `timeoutMs`): recorded
   *   with each stored row; a row stored under a longer deadline is not used (a miss).
   */
  constructor(file: string | null = null, engine = "sqlite", context = "", deadlineMs = DEFAULT_DEADLINE_MS) {
    this.#context = [KEY_VERSION, engine, engine === "sqlite" ? bundledSqliteVersion() : "", context].join("\u0000");
    this.#file = file;
    this.#deadlineMs = deadlineMs;
    if (file === null) {
      this.#db = null;
      return;
    }
    try {
      mkdirSync(dirname(file), { recursive: true });
      this.#db = new (betterSqlite3())(file);
      this.#db.pragma("journal_mode = WAL");
      // A cache: losing the last rows to a power cut costs re-execution, never a verdict (WAL stays
      // consistent under NORMAL), so commits do not wait for the disk.
      this.#db.pragma("synchronous = NORMAL");
      this.#db.pragma("busy_timeout = 5000");
      this.#db.exec("CREATE TABLE IF NOT EXISTS gold_results (key TEXT PRIMARY KEY, ok INTEGER NOT NULL, payload BLOB NOT NULL, row_hash TEXT NOT NULL, deadline_ms REAL NOT NULL DEFAULT 0)");
      // A file written before key version 4 lacks the column; its rows never match a version 4 key.
      const columns = this.#db.prepare("SELECT name FROM pragma_table_info('gold_results')").all() as { name: string }[];
      if (!columns.some((c) => c.name === "deadline_ms")) {
        try {
          this.#db.exec("ALTER TABLE gold_results ADD COLUMN deadline_ms REAL NOT NULL DEFAULT 0");
        } catch (error) {
          if (!/duplicate column/.test((error as Error).message)) throw error; // another process added it first
        }
      }
    } catch (error) {
      throw new InputFileError(file, `cannot be opened as the gold cache (${(error as Error).message})`, "delete it (it only saves gold executions) or pass another --gold-cache FILE", error);
    }
    this.#select = this.#db.prepare("SELECT ok, payload, deadline_ms, row_hash FROM gold_results WHERE key = ?");
    this.#insert = this.#db.prepare("INSERT OR REPLACE INTO gold_results (key, ok, payload, deadline_ms, row_hash) VALUES (?, ?, ?, ?, ?)");
  }

  /** Gold rows for `sql` on `dbPath`, running `execute` at most once per key. */
  get(dbPath: string, sql: string, execute: () => Promise<ExecResult>): Promise<ExecResult> {
    const memoryKey = dbPath + "\u0000" + sql;
    const cached = this.#memory.get(memoryKey);
    if (cached) {
      this.hits += 1;
      return cached;
    }
    const promise = this.#load(dbPath, sql, execute);
    this.#memory.set(memoryKey, promise);
    return promise;
  }

  /** Writes pending results and closes the file. */
  close(): void {
    this.#flush();
    this.#db?.close();
  }

  async #load(dbPath: string, sql: string, execute: () => Promise<ExecResult>): Promise<ExecResult> {
    const diskKey = this.#db ? await this.#diskKey(dbPath, sql) : null;
    if (this.#select && diskKey) {
      const row = this.#select.get(diskKey);
      // A row stored under a longer deadline than this one may not have met it: run the gold again.
      if (row && row.deadline_ms <= this.#deadlineMs) {
        if (rowHash(diskKey, row.ok, row.payload, row.deadline_ms) !== row.row_hash) {
          throw new InputFileError(this.#file!, `the cached gold result ${diskKey.slice(0, 12)} fails its row_hash check (changed or damaged)`, "delete the gold cache file (it only saves gold executions; they are re-run) or pass another --gold-cache FILE");
        }
        this.hits += 1;
        this.diskHits += 1;
        // a packed result: the oracle first compares these bytes with the prediction's packed rows
        return row.ok ? { ok: true, packed: row.payload } : { ok: false, error: String(deserialize(row.payload)), timedOut: false };
      }
    }
    this.executions += 1;
    const result = await execute();
    if (this.#insert && diskKey && !(result.ok === false && result.timedOut)) {
      const ok = result.ok ? 1 : 0;
      // a packed result is already the payload (the same v8 serialization of the rows)
      const payload = !result.ok ? serialize(result.error) : "packed" in result ? Buffer.from(result.packed.buffer, result.packed.byteOffset, result.packed.byteLength) : serialize(result.rows);
      this.#pending.push([diskKey, ok, payload, this.#deadlineMs, rowHash(diskKey, ok, payload, this.#deadlineMs)]);
      if (this.#pending.length >= FLUSH_ROWS) this.#scheduleFlush();
    }
    return result;
  }

  async #diskKey(dbPath: string, sql: string): Promise<string> {
    // Once per file per cache, as the memory layer above is keyed by path: a database is not
    // replaced while an oracle scores on it (lib/file-hash.ts memoises the digest itself).
    let digest = this.#digests.get(dbPath);
    if (digest === undefined) {
      digest = fileDigest(dbPath).then((d) => d.sha256);
      this.#digests.set(dbPath, digest);
    }
    return sha256Hex([this.#context, await digest, sql].join("\u0000"));
  }

  #scheduleFlush(): void {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => this.#flush());
  }

  #flush(): void {
    this.#flushScheduled = false;
    if (!this.#db?.open || this.#pending.length === 0) return;
    const rows = this.#pending.splice(0);
    this.#db.transaction(() => {
      for (const row of rows) this.#insert!.run(...row);
    })();
  }
}

function rowHash(key: string, ok: number, payload: Uint8Array, deadlineMs: number): string {
  return createHash("sha256").update(`${key}\u0000${ok}\u0000${deadlineMs}\u0000`).update(payload).digest("hex"); // the digest of the two concatenated
}
