// @ts-check
/**
 * Oracle sandbox child (METHOD.md §2.1, §11.1): executes one read-only statement at a time on a
 * read-only SQLite connection and sends the rows back over IPC. It runs in its own process so the
 * parent can kill it on timeout or memory blow-up (better-sqlite3 has no interrupt, and worker threads
 * cannot be terminated while it runs). Plain JavaScript so a replacement worker starts in ~50 ms.
 *
 * Refusals (nothing is executed): statements that are not read-only queries (better-sqlite3's
 * `reader` and `readonly` must both be true, and the first keyword must be SELECT, WITH or VALUES, or
 * EXPLAIN of such a query), which rules out ATTACH, PRAGMA, DDL/DML, VACUUM INTO and transactions;
 * `load_extension()` is disabled by SQLite itself. A refusal answers what the reference's read-only
 * authorizer leads to (METHOD.md §2.1, §3): `not authorized` (`authorization denied` for VACUUM),
 * unless SQLite reports an error before the authorizer is consulted — a parse error, the statement's
 * target table/view/index/trigger not existing, an unknown database, and for UPDATE an unknown
 * column — which is then the message (`refusalMessage`).
 *
 * Result caps (rows, bytes) bound memory only; they never decide a verdict. A result over a cap is
 * reported as `overCap` and the oracle judges it against the gold, which is under the caps, so it is
 * a mismatch. For set comparison (BIRD, job `distinct`) rows are de-duplicated once the cap is
 * reached, exactly as `set()` would, and only the distinct rows count against the caps.
 *
 * Double-quoted strings: better-sqlite3 is built with SQLITE_DQS=0, while the Python evaluators use
 * SQLite's default, where an unqualified "x" that names no column is a string literal. On the error
 * `no such column: "x"` the worker rewrites that token to 'x' and prepares again — the same fallback
 * SQLite applies internally — so `WHERE make = "amc"` behaves as in the reference.
 *
 * Parent death: the IPC `disconnect` event cannot fire while a statement runs (SQLite holds the
 * only JavaScript thread), so something outside this thread must kill this process when the parent is
 * gone — even after the parent's SIGKILL. The bundled sandbox runs one watchdog shell per pool for
 * that (sandbox.ts `PoolWatchdog`: it sees the parent's end of a pipe close), and says so with
 * MERIT_SQL_WATCHDOG=pool; otherwise a watchdog thread here polls the parent PID and SIGKILLs this
 * process once it is re-parented (to init or a subreaper).
 *
 * Batches (executor-pool.ts `batch`): a message may be an array of statements, run in order; their
 * answers go back together, at most HOLD_MS apart, and a progress record says which one is running.
 * A job marked `pack` is answered with `packed`, the v8 serialization of its rows (the oracle
 * compares those bytes first, and reads the rows only when they differ).
 */
import Database from "better-sqlite3";
import { writeSync } from "node:fs";
import { serialize } from "node:v8";
import { Worker } from "node:worker_threads";
import { collectRows, dqsToLiteral, DQS_ERROR, NOT_AUTHORIZED, OverCap, refusalOf, refusedKeyword } from "./sql-rules.mjs";

/** @type {Map<string, import("better-sqlite3").Database>} */
const connections = new Map();
const HEAP_LIMIT = Number(process.env.MERIT_SQL_HEAP_LIMIT ?? 1024 * 1024 * 1024);

/** @param {string} path */
function connect(path) {
  let db = connections.get(path);
  if (!db) {
    db = new Database(path, { readonly: true, fileMustExist: true });
    db.defaultSafeIntegers(true);
    db.pragma("query_only = ON");
    db.pragma(`hard_heap_limit = ${HEAP_LIMIT}`);
    connections.set(path, db);
  }
  return db;
}

/** @param {import("better-sqlite3").Database} db @param {string} sql */
function prepare(db, sql) {
  let text = sql;
  for (let attempt = 0; attempt < 256; attempt++) {
    try {
      return db.prepare(text);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const m = DQS_ERROR.exec(message);
      const rewritten = m ? dqsToLiteral(text, m[1]) : null;
      if (rewritten === null) throw error;
      text = rewritten;
    }
  }
  throw new Error("too many double-quoted tokens to resolve");
}

/**
 * The message a refused statement gets (sql-rules.mjs `refusalOf`): it is prepared — never run — on a
 * throwaway read-only connection, so even a PRAGMA that takes effect while preparing cannot touch
 * the connection queries use.
 * @param {string} path @param {string} sql @param {string} keyword
 */
function refusalMessage(path, sql, keyword) {
  const scratch = new Database(path, { readonly: true, fileMustExist: true });
  try {
    scratch.pragma("query_only = ON");
    scratch.prepare(sql);
    return refusalOf(sql, keyword, null);
  } catch (error) {
    return refusalOf(sql, keyword, error instanceof Error ? error.message : String(error));
  } finally {
    scratch.close();
  }
}

/**
 * @param {{id: number, db: string, sql: string, maxRows: number, maxBytes: number, textErrors: "ignore" | "replace", distinct?: boolean}} job
 */
function run(job) {
  const refused = refusedKeyword(job.sql); // refused before preparing (sql-rules.mjs)
  if (refused !== null) throw new Error(refusalMessage(job.db, job.sql, refused));
  const db = connect(job.db);
  const stmt = prepare(db, job.sql);
  if (!stmt.reader || !stmt.readonly) {
    // Backstop: a refused statement was prepared on this connection; never reuse that connection.
    db.close();
    connections.delete(job.db);
    throw new Error(NOT_AUTHORIZED);
  }
  stmt.raw(true);
  return collectRows(/** @type {Iterable<unknown[]>} */ (stmt.iterate()), job);
}

/**
 * Progress record (executor-pool.ts `running`): before each statement, 24 bytes at offset 0 of the
 * file the parent hands over as file descriptor 4 (argv[2] `--progress-fd=4`; sandbox.ts
 * `ProgressRecord`) — the job id, Date.now(), the job id again (float64, little-endian; the parent
 * trusts a read only when both ids agree). The parent reads it when a deadline fires or this process
 * dies, to charge the statement that was really running.
 */
const progressFd = process.argv[2] === "--progress-fd=4" ? 4 : null;
const progress = new Float64Array(3);
const progressBytes = new Uint8Array(progress.buffer);

/** @param {any} job */
function answer(job) {
  if (progressFd !== null) {
    progress[0] = progress[2] = job.id;
    progress[1] = Date.now();
    writeSync(progressFd, progressBytes, 0, 24, 0);
  }
  try {
    const rows = run(job);
    // packed (executor-pool.ts WorkerJob `pack`): the parent compares bytes before it reads rows
    return job.pack ? { id: job.id, ok: true, packed: serialize(rows), count: rows.length } : { id: job.id, ok: true, rows };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { id: job.id, ok: false, error: message, overCap: error instanceof OverCap };
  }
}

/** Answers of a batch are held at most this long (ms) before they are sent, so a slow batch still answers as it goes. */
const HOLD_MS = 5;
/** An answer with more rows than this is sent at once, with the answers held before it. */
const HOLD_MAX_ROWS = 1000;
process.on("message", (/** @type {any} */ msg) => {
  if (!Array.isArray(msg)) {
    process.send?.(answer(msg));
    return;
  }
  // A batch (executor-pool.ts `batch`): one message for the answers of statements that finish
  // within HOLD_MS of each other, instead of one each.
  let held = [];
  let since = Date.now();
  for (const job of msg) {
    const reply = answer(job);
    held.push(reply);
    // A large result goes at once: a batch never holds more than one big result in memory.
    if (Date.now() - since >= HOLD_MS || (reply.rows?.length ?? reply.count ?? 0) > HOLD_MAX_ROWS) {
      process.send?.({ answers: held });
      held = [];
      since = Date.now();
    }
  }
  if (held.length > 0) process.send?.({ answers: held });
});
// The parent went away (even by SIGKILL): never linger as an orphan. Idle: the IPC channel closes.
process.on("disconnect", () => process.exit(0));
// Busy in a statement: the pool's watchdog shell (sandbox.ts, MERIT_SQL_WATCHDOG=pool) kills this
// process when the parent dies; without one, a watchdog thread notices the new parent PID within POLL_MS.
const POLL_MS = 200;
if (process.env.MERIT_SQL_WATCHDOG !== "pool") startWatchdogThread();
function startWatchdogThread() {
  const watchdog = new Worker(
    `const { workerData } = require("node:worker_threads");
     setInterval(() => { if (process.ppid !== workerData.ppid) process.kill(workerData.pid, "SIGKILL"); }, workerData.pollMs);`,
    { eval: true, workerData: { ppid: process.ppid, pid: process.pid, pollMs: POLL_MS }, resourceLimits: { maxOldGenerationSizeMb: 16 } },
  );
  watchdog.unref();
}
// Start-up (loading better-sqlite3) must not count against a statement's deadline: the parent
// dispatches to this worker only after this message.
process.send?.({ ready: true });
