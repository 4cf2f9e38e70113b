// @ts-check
/**
 * Oracle sandbox child (METHOD.md §2.1, §11.1): executes one read-only statement at a time on a
 * read-only SQLite connection and sends the rows back over IPC. It runs in its own process so the
 * parent can kill it on timeout or memory blow-up (better-sqlite3 has no interrupt, and worker threads
 * cannot be terminated while it runs). Plain JavaScript so a replacement worker starts in ~50 ms.
 *
 * Refusals (nothing is executed): statements that are not read-only queries (better-sqlite3's
 * `reader` and `readonly` must both be true, and the first keyword must be SELECT, WITH or VALUES),
 * which rules out ATTACH, PRAGMA, DDL/DML, VACUUM INTO and transactions; `load_extension()` is
 * disabled by SQLite itself.
 *
 * Double-quoted strings: better-sqlite3 is compiled with SQLITE_DQS=0, while the Python evaluators use
 * SQLite's default, where an unqualified "x" that names no column is a string literal. On the error
 * `no such column: "x"` the worker rewrites that token to 'x' and prepares again — the same fallback
 * SQLite applies internally — so `WHERE make = "amc"` behaves as in the reference.
 *
 * Parent death: the IPC `disconnect` event cannot fire while a statement runs (SQLite holds the
 * only JavaScript thread), so a watchdog thread polls the parent PID and SIGKILLs this process when
 * the parent is gone (re-parented to init or a subreaper) — even after the parent's SIGKILL.
 */
import Database from "better-sqlite3";
import { Worker } from "node:worker_threads";

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

const REFUSED = "only SELECT or WITH queries may run on the read-only oracle";
/** First keywords of SQLite statements other than queries (SELECT, WITH, VALUES). */
const STATEMENT_KEYWORDS = new Set(["ALTER", "ANALYZE", "ATTACH", "BEGIN", "COMMIT", "CREATE", "DELETE", "DETACH", "DROP", "END", "EXPLAIN", "INSERT", "PRAGMA", "REINDEX", "RELEASE", "REPLACE", "ROLLBACK", "SAVEPOINT", "UPDATE", "VACUUM"]);
const DQS_ERROR = /^no such column: ("(?:[^"]|"")*")(?: - should this be a string literal in single-quotes\?)?$/;
const LEADING_KEYWORD = /^(?:\s|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*([A-Za-z]+)/;

/**
 * Replaces every double-quoted token equal to `quoted` (outside '…' strings and comments) with the
 * single-quoted literal of the same text. Returns null when the token does not occur.
 * @param {string} sql @param {string} quoted
 */
function dqsToLiteral(sql, quoted) {
  const inner = quoted.slice(1, -1).replace(/""/g, '"');
  const literal = "'" + inner.replace(/'/g, "''") + "'";
  let out = "";
  let found = false;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    if (c === "'") {
      let j = i + 1;
      while (j < sql.length && !(sql[j] === "'" && sql[j + 1] !== "'")) j += sql[j] === "'" ? 2 : 1;
      out += sql.slice(i, j + 1);
      i = j + 1;
    } else if (c === "-" && sql[i + 1] === "-") {
      const j = sql.indexOf("\n", i);
      const end = j < 0 ? sql.length : j;
      out += sql.slice(i, end);
      i = end;
    } else if (c === "/" && sql[i + 1] === "*") {
      const j = sql.indexOf("*/", i + 2);
      const end = j < 0 ? sql.length : j + 2;
      out += sql.slice(i, end);
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      while (j < sql.length && !(sql[j] === '"' && sql[j + 1] !== '"')) j += sql[j] === '"' ? 2 : 1;
      const token = sql.slice(i, j + 1);
      if (token === quoted) {
        out += literal;
        found = true;
      } else out += token;
      i = j + 1;
    } else if (c === "`" || c === "[") {
      const close = c === "`" ? "`" : "]";
      const j = sql.indexOf(close, i + 1);
      const end = j < 0 ? sql.length : j + 1;
      out += sql.slice(i, end);
      i = end;
    } else {
      out += c;
      i += 1;
    }
  }
  return found ? out : null;
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
 * @param {{id: number, db: string, sql: string, maxRows: number, maxBytes: number, textErrors: "ignore" | "replace"}} job
 */
function run(job) {
  // Statements that are not queries are refused BEFORE preparing: SQLite applies flag PRAGMAs
  // (case_sensitive_like, writable_schema, query_only, ...) while preparing them, even when the
  // statement never runs. Text that starts with no statement keyword at all (model gibberish) is
  // prepared so that SQLite itself reports the error (`near "…": syntax error`), as in the reference.
  const keyword = (LEADING_KEYWORD.exec(job.sql)?.[1] ?? "").toUpperCase();
  if (keyword === "" && /^(?:\s|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*$/.test(job.sql)) throw new Error("The supplied SQL string contains no statements");
  if (STATEMENT_KEYWORDS.has(keyword)) throw new Error(REFUSED);
  const db = connect(job.db);
  const stmt = prepare(db, job.sql);
  if (!stmt.reader || !stmt.readonly) {
    // Backstop: a refused statement was prepared on this connection; never reuse that connection.
    db.close();
    connections.delete(job.db);
    throw new Error(REFUSED);
  }
  stmt.raw(true);
  /** @type {unknown[][]} */
  const rows = [];
  let bytes = 0;
  for (const row of /** @type {Iterable<unknown[]>} */ (stmt.iterate())) {
    for (let i = 0; i < row.length; i++) {
      const v = row[i];
      if (typeof v === "string") {
        // Python's text_factory decode(errors="ignore") drops undecodable bytes; better-sqlite3 has
        // already turned them into U+FFFD, which is removed here to match.
        if (job.textErrors === "ignore" && v.includes("\uFFFD")) row[i] = v.replace(/\uFFFD/g, "");
        bytes += 2 * v.length + 16;
      } else if (v instanceof Uint8Array) bytes += v.length + 16;
      else bytes += 16;
    }
    rows.push(row);
    if (rows.length > job.maxRows) throw new Error(`result too large: more than ${job.maxRows} rows (the oracle's row cap)`);
    if (bytes > job.maxBytes) throw new Error(`result too large: more than ${job.maxBytes} bytes (the oracle's size cap)`);
  }
  return rows;
}

process.on("message", (/** @type {any} */ job) => {
  try {
    const rows = run(job);
    process.send?.({ id: job.id, ok: true, rows });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.send?.({ id: job.id, ok: false, error: message });
  }
});
// The parent went away (even by SIGKILL): never linger as an orphan. Idle: the IPC channel closes.
process.on("disconnect", () => process.exit(0));
// Busy in a statement: the watchdog thread notices the new parent PID within POLL_MS.
const POLL_MS = 200;
const watchdog = new Worker(
  `const { workerData } = require("node:worker_threads");
   setInterval(() => { if (process.ppid !== workerData.ppid) process.kill(workerData.pid, "SIGKILL"); }, workerData.pollMs);`,
  { eval: true, workerData: { ppid: process.ppid, pid: process.pid, pollMs: POLL_MS }, resourceLimits: { maxOldGenerationSizeMb: 16 } },
);
watchdog.unref();
// Start-up (loading better-sqlite3) must not count against a statement's deadline: the parent
// dispatches to this worker only after this message.
process.send?.({ ready: true });
