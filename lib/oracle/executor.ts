/**
 * Oracle execution seam (METHOD.md §2.1, §11.1; DESIGN.md §1 "Executors"): what the oracle needs from a
 * SQL engine. An executor prepares a database given its file (opening it read-only, or loading it into
 * a server on first use), runs one statement under a hard deadline and the row/byte caps, refuses
 * hostile SQL (anything but a read-only query) without running it, and reports failures as the
 * engine's own one-line error text. SQLite (lib/oracle/sqlite-executor.ts) is the bundled engine; a
 * PostgreSQL or DuckDB executor is one plugin file outside lib/ that calls `registerExecutor` (README
 * "How to add a SQL engine"), chosen by the config's `oracle.executor` or `merit eval --executor`.
 * @module
 */
import { deserialize } from "node:v8";
import { Registry } from "../registry.ts";
import type { Rows } from "./types.ts";

/** Longest SQL statement deadline in seconds: Node timers hold at most 2^31 − 1 ms (a longer one fires after 1 ms). */
export const MAX_SQL_TIMEOUT_S = 2_147_483;
/** The shortest SQL deadline, in seconds (`sql_timeout_s`, `--timeout`): 1 ms, one Node timer tick. */
export const MIN_SQL_TIMEOUT_S = 0.001;

/** Limits every executor honours (defaults as in METHOD.md §11.1). */
export interface ExecutorOptions {
  /** Parallel executions (worker processes or connections; default 1). */
  jobs?: number;
  /** Per-statement deadline in milliseconds (default 30 s, METHOD.md §11.1). */
  timeoutMs?: number;
  /** Row cap per result (default 1,000,000). */
  maxRows?: number;
  /** Approximate byte cap per result (default 512 MiB). */
  maxBytes?: number;
  /** Memory cap of each worker in MiB (default 2048), where the engine runs in worker processes. */
  workerHeapMiB?: number;
}

/**
 * Result of one execution: rows, or the error text (`TIMEOUT` when the deadline passed). `overCap`
 * marks a statement that ran but whose result exceeded the row or byte cap: the caps bound memory,
 * and the oracle judges such a result as a mismatch against the gold (which is under the caps).
 * A statement asked with `pack` (ExecRequest) may be answered `packed` instead of `rows`: the v8
 * serialization of the rows (`v8.serialize`), which the oracle compares byte for byte with the gold's
 * before it reads either (`samePacked`). `resultRows` reads the rows of either form.
 */
export type ExecResult = ExecRows | { ok: false; error: string; timedOut: boolean; overCap?: boolean };

/** A successful result: its rows, or (answered to `pack`) their v8 serialization. */
export type ExecRows = { ok: true; rows: Rows } | { ok: true; packed: Uint8Array };

/** The rows of a successful result: `rows` as they are, `packed` deserialized (on every call). */
export function resultRows(result: ExecRows): Rows {
  return "packed" in result ? (deserialize(result.packed) as Rows) : result.rows;
}

/** True when both results came packed with the same bytes: then their rows are identical, value types included. */
export function samePacked(a: ExecResult, b: ExecResult): boolean {
  if (!a.ok || !b.ok || !("packed" in a) || !("packed" in b)) return false;
  return a.packed.byteLength === b.packed.byteLength && Buffer.compare(a.packed, b.packed) === 0;
}

export interface ExecRequest {
  /** Path of the database file (opened read-only). */
  db: string;
  sql: string;
  /** How undecodable text bytes are handled: dropped (Python `errors="ignore"`) or U+FFFD. */
  textErrors?: "ignore" | "replace";
  /** Only the set of rows matters (BIRD): past a cap, duplicates are dropped and only distinct rows count. */
  distinct?: boolean;
  /** The caller would take the rows `packed` (ExecResult): an executor may answer so, or ignore it and answer `rows`. */
  pack?: boolean;
}

/** A SQL engine behind the oracle. `execute` never rejects; `close` is idempotent. */
export interface SqlExecutor {
  /** Registry name of the engine ("sqlite"). */
  readonly engine: string;
  readonly timeoutMs: number;
  execute(request: ExecRequest): Promise<ExecResult>;
  close(): Promise<void>;
  /**
   * Optional: start more workers, up to `jobs` in all (never fewer; nothing after `close`). Lets a
   * caller start one worker at once and add the rest once it knows how much work there is.
   */
  grow?(jobs: number): void;
}

/** Executor constructors by engine name; read it through lib/oracle/executors.ts. */
export const EXECUTORS = new Registry<(opts: ExecutorOptions) => SqlExecutor>("executor");

/** Registers the constructor of an engine (once); plugin files call this too. */
export function registerExecutor(engine: string, create: (opts: ExecutorOptions) => SqlExecutor): void {
  EXECUTORS.register(engine, create);
}
