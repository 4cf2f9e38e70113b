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

/** First keywords of SQLite statements other than queries (SELECT, WITH, VALUES). */
const STATEMENT_KEYWORDS = new Set(["ALTER", "ANALYZE", "ATTACH", "BEGIN", "COMMIT", "CREATE", "DELETE", "DETACH", "DROP", "END", "INSERT", "PRAGMA", "REINDEX", "RELEASE", "REPLACE", "ROLLBACK", "SAVEPOINT", "UPDATE", "VACUUM"]);
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

/**
 * The keyword of the statement an EXPLAIN [QUERY PLAN] explains ("" when none).
 * @param {string} sql
 */
function explainedKeyword(sql) {
  const m = /^EXPLAIN(?:\s+QUERY\s+PLAN)?\b/i.exec(sql.replace(LEADING_NOISE, ""));
  const rest = m ? sql.replace(LEADING_NOISE, "").slice(m[0].length) : "";
  return (LEADING_KEYWORD.exec(rest)?.[1] ?? "").toUpperCase();
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

/** What the reference's authorizer denies surfaces as this message (Python: `str(DatabaseError)`). */
const NOT_AUTHORIZED = "not authorized";
/** VACUUM has no authorizer action; the statements it runs internally are denied (METHOD.md §2.1). */
const VACUUM_DENIED = "authorization denied";
/** Errors SQLite raises while parsing, before any authorizer callback. */
const PARSE_ERROR = /syntax error|^incomplete input$|^unrecognized token:/;
/** Lookup errors of the object a statement acts on, which SQLite raises before authorizing it. */
const TARGET_ERROR = /^no such (?:table|view|index|trigger): (?:main\.|temp\.)?(.+)$/;
const NAME = String.raw`(?:[A-Za-z_][\w$]*\.)?("(?:[^"]|"")+"|\[[^\]]+\]|\x60[^\x60]+\x60|[A-Za-z_][\w$]*)`;
/** The object each refused statement acts on (its target), by leading keyword. */
const TARGETS = [
  new RegExp(String.raw`^(?:INSERT(?:\s+OR\s+\w+)?|REPLACE)\s+INTO\s+${NAME}`, "i"),
  new RegExp(String.raw`^UPDATE(?:\s+OR\s+\w+)?\s+${NAME}`, "i"),
  new RegExp(String.raw`^DELETE\s+FROM\s+${NAME}`, "i"),
  new RegExp(String.raw`^DROP\s+(?:TABLE|VIEW|INDEX|TRIGGER)\s+(?:IF\s+EXISTS\s+)?${NAME}`, "i"),
  new RegExp(String.raw`^ALTER\s+TABLE\s+${NAME}`, "i"),
  new RegExp(String.raw`^(?:ANALYZE|REINDEX)\s+${NAME}`, "i"),
  new RegExp(String.raw`^CREATE\s+(?:UNIQUE\s+)?INDEX\s+(?:IF\s+NOT\s+EXISTS\s+)?\S+\s+ON\s+${NAME}`, "i"),
];
const LEADING_NOISE = /^(?:\s|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*/;

/** @param {string} name an identifier as written (quoted or not) */
function unquote(name) {
  const c = name[0];
  if (c === '"' || c === "[" || c === "`") return name.slice(1, -1).replace(/""/g, '"');
  return name;
}

/**
 * The message a statement that is not a query gets (see the header): SQLite's own error when it
 * comes before authorization, else the authorizer's. The statement is prepared — never run — on a
 * throwaway read-only connection, so even a PRAGMA that takes effect while preparing cannot touch
 * the connection queries use.
 * @param {string} path @param {string} sql @param {string} keyword
 */
function refusalMessage(path, sql, keyword) {
  const denied = keyword === "VACUUM" ? VACUUM_DENIED : NOT_AUTHORIZED;
  const scratch = new Database(path, { readonly: true, fileMustExist: true });
  try {
    scratch.pragma("query_only = ON");
    scratch.prepare(sql);
    return denied;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (PARSE_ERROR.test(message) || /^unknown database /.test(message) || /^unable to identify the object/.test(message)) return message;
    if (keyword === "UPDATE" && /^no such column: /.test(message)) return message;
    const missing = TARGET_ERROR.exec(message);
    if (missing) {
      const statement = sql.replace(LEADING_NOISE, "").replace(/^EXPLAIN(?:\s+QUERY\s+PLAN)?\s+/i, "");
      const target = TARGETS.map((re) => re.exec(statement)?.[1]).find((t) => t !== undefined);
      if (target !== undefined && unquote(target).toLowerCase() === missing[1].toLowerCase()) return message;
    }
    return denied;
  } finally {
    scratch.close();
  }
}

/**
 * Python's `==`/`hash` key of a row, as lib/oracle/compare.ts `rowKey` (int and integral float
 * coincide, bytes by content); used to de-duplicate rows for set comparison.
 * @param {unknown[]} row
 */
function rowKey(row) {
  let key = "";
  for (const v of row) {
    let k;
    if (v === null) k = "N";
    else if (typeof v === "bigint") k = "n" + v.toString();
    else if (typeof v === "number") k = Number.isInteger(v) ? "n" + BigInt(v).toString() : "f" + String(v);
    else if (typeof v === "string") k = "s" + v;
    else k = "b" + Buffer.from(/** @type {Uint8Array} */ (v)).toString("hex");
    key += k.length + ":" + k;
  }
  return key;
}

/** @param {unknown[]} row */
function rowBytes(row) {
  let bytes = 0;
  for (const v of row) {
    if (typeof v === "string") bytes += 2 * v.length + 16;
    else if (v instanceof Uint8Array) bytes += v.length + 16;
    else bytes += 16;
  }
  return bytes;
}

/** A result over the row or byte cap (reported, never an execution error). */
class OverCap extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.overCap = true;
  }
}

/**
 * @param {{id: number, db: string, sql: string, maxRows: number, maxBytes: number, textErrors: "ignore" | "replace", distinct?: boolean}} job
 */
function run(job) {
  // Statements that are not queries are refused BEFORE preparing: SQLite applies flag PRAGMAs
  // (case_sensitive_like, writable_schema, query_only, ...) while preparing them, even when the
  // statement never runs. Text that starts with no statement keyword at all (model gibberish) is
  // prepared so that SQLite itself reports the error (`near "…": syntax error`), as in the reference.
  const keyword = (LEADING_KEYWORD.exec(job.sql)?.[1] ?? "").toUpperCase();
  if (keyword === "" && /^(?:\s|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*$/.test(job.sql)) throw new Error("The supplied SQL string contains no statements");
  const inner = keyword === "EXPLAIN" ? explainedKeyword(job.sql) : keyword;
  if (STATEMENT_KEYWORDS.has(inner)) throw new Error(refusalMessage(job.db, job.sql, inner));
  const db = connect(job.db);
  const stmt = prepare(db, job.sql);
  if (!stmt.reader || !stmt.readonly) {
    // Backstop: a refused statement was prepared on this connection; never reuse that connection.
    db.close();
    connections.delete(job.db);
    throw new Error(NOT_AUTHORIZED);
  }
  stmt.raw(true);
  /** @type {unknown[][]} */
  let rows = [];
  let bytes = 0;
  /** @type {Set<string> | null} distinct row keys, once de-duplication started */
  let seen = null;
  for (const row of /** @type {Iterable<unknown[]>} */ (stmt.iterate())) {
    for (let i = 0; i < row.length; i++) {
      const v = row[i];
      // Python's text_factory decode(errors="ignore") drops undecodable bytes; better-sqlite3 has
      // already turned them into U+FFFD, which is removed here to match.
      if (typeof v === "string" && job.textErrors === "ignore" && v.includes("\uFFFD")) row[i] = v.replace(/\uFFFD/g, "");
    }
    if (seen !== null) {
      const key = rowKey(row);
      if (seen.has(key)) continue;
      seen.add(key);
    }
    rows.push(row);
    bytes += rowBytes(row);
    if (rows.length > job.maxRows || bytes > job.maxBytes) {
      if (job.distinct && seen === null) {
        // Set comparison: only distinct rows matter, so keep the first occurrence of each and go on.
        seen = new Set();
        const distinct = [];
        for (const r of rows) {
          const key = rowKey(r);
          if (!seen.has(key)) {
            seen.add(key);
            distinct.push(r);
          }
        }
        rows = distinct;
        bytes = rows.reduce((n, r) => n + rowBytes(r), 0);
      }
      if (rows.length > job.maxRows) throw new OverCap(`result too large: more than ${job.maxRows} rows (the oracle's row cap)`);
      if (bytes > job.maxBytes) throw new OverCap(`result too large: more than ${job.maxBytes} bytes (the oracle's size cap)`);
    }
  }
  return rows;
}

process.on("message", (/** @type {any} */ job) => {
  try {
    const rows = run(job);
    process.send?.({ id: job.id, ok: true, rows });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.send?.({ id: job.id, ok: false, error: message, overCap: error instanceof OverCap });
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
