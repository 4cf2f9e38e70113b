/**
 * Gold denotation cache (METHOD.md §11.2): each gold query is executed once per (database file, gold
 * text) for the whole process, and optionally persisted in a small SQLite file so later processes skip
 * it too. A gold that fails is cached as a failure (it is deterministic); a gold timeout is kept in
 * memory only, since a faster machine may finish it.
 *
 * Disk key: SHA-256 of (real path, file size, mtime, gold text, row cap), and the executor's engine name
 * when it is not `sqlite` (another engine may return other rows; SQLite's keys are as before engines existed). Content hashing of multi-GB
 * BIRD files at every start would cost more than the executions it saves; a replaced database file
 * changes size or mtime.
 * @module
 */
import { statSync, realpathSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { serialize, deserialize } from "node:v8";
import Database from "better-sqlite3";
import { sha256Hex } from "../hash.ts";
import type { ExecResult } from "./executor.ts";

export class GoldCache {
  readonly #memory = new Map<string, Promise<ExecResult>>();
  readonly #db: Database.Database | null;
  /** Gold executions actually performed by this process. */
  executions = 0;
  /** Lookups answered from memory or disk. */
  hits = 0;

  readonly #engine: string;

  /**
   * @param file SQLite file for persistence, or null for memory only.
   * @param engine the executor whose gold results are cached (part of the disk key unless `sqlite`).
   */
  constructor(file: string | null = null, engine = "sqlite") {
    this.#engine = engine;
    if (file === null) {
      this.#db = null;
      return;
    }
    mkdirSync(dirname(file), { recursive: true });
    this.#db = new Database(file);
    this.#db.pragma("journal_mode = WAL");
    this.#db.pragma("busy_timeout = 5000");
    this.#db.exec("CREATE TABLE IF NOT EXISTS gold (key TEXT PRIMARY KEY, ok INTEGER NOT NULL, payload BLOB NOT NULL)");
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

  close(): void {
    this.#db?.close();
  }

  async #load(dbPath: string, sql: string, execute: () => Promise<ExecResult>): Promise<ExecResult> {
    const diskKey = this.#db ? diskKeyOf(dbPath, sql, this.#engine) : null;
    if (this.#db && diskKey) {
      const row = this.#db.prepare("SELECT ok, payload FROM gold WHERE key = ?").get(diskKey) as { ok: number; payload: Buffer } | undefined;
      if (row) {
        this.hits += 1;
        return row.ok ? { ok: true, rows: deserialize(row.payload) } : { ok: false, error: String(deserialize(row.payload)), timedOut: false };
      }
    }
    this.executions += 1;
    const result = await execute();
    if (this.#db && diskKey && !(result.ok === false && result.timedOut)) {
      const payload = serialize(result.ok ? result.rows : result.error);
      this.#db.prepare("INSERT OR REPLACE INTO gold (key, ok, payload) VALUES (?, ?, ?)").run(diskKey, result.ok ? 1 : 0, payload);
    }
    return result;
  }
}

function diskKeyOf(dbPath: string, sql: string, engine: string): string {
  const st = statSync(dbPath);
  return sha256Hex([realpathSync(dbPath), st.size, st.mtimeMs, sql, ...(engine === "sqlite" ? [] : [engine])].join("\u0000"));
}
