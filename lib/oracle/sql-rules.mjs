// @ts-check
/**
 * Oracle execution, the engine-independent statement rules (METHOD.md §2.1, §11.1) every SQL
 * executor applies the same way, so two engines refuse, rewrite and cap alike: which statements are
 * refused before preparing (`refusedKeyword`), the message a refusal gets from the engine's prepare
 * error (`refusalOf`), the double-quoted-string fallback for engines built with SQLITE_DQS=0
 * (`DQS_ERROR`, `dqsToLiteral`), and the result caps (`collectRows`). Used by the bundled worker
 * (sql-worker.mjs, whose header explains each rule) and by executor plugins (lib/plugin.ts). Plain
 * JavaScript with no imports, so a worker process or thread loads it in no time.
 * @module
 */

/** First keywords of SQLite statements other than queries (SELECT, WITH, VALUES). */
export const STATEMENT_KEYWORDS = new Set(["ALTER", "ANALYZE", "ATTACH", "BEGIN", "COMMIT", "CREATE", "DELETE", "DETACH", "DROP", "END", "INSERT", "PRAGMA", "REINDEX", "RELEASE", "REPLACE", "ROLLBACK", "SAVEPOINT", "UPDATE", "VACUUM"]);
export const DQS_ERROR = /^no such column: ("(?:[^"]|"")*")(?: - should this be a string literal in single-quotes\?)?$/;
export const LEADING_KEYWORD = /^(?:\s|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*([A-Za-z]+)/;

/**
 * Replaces every double-quoted token equal to `quoted` (outside '…' strings and comments) with the
 * single-quoted literal of the same text. Returns null when the token does not occur.
 * @param {string} sql @param {string} quoted
 */
export function dqsToLiteral(sql, quoted) {
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

/** What the reference's authorizer denies surfaces as this message (Python: `str(DatabaseError)`). */
export const NOT_AUTHORIZED = "not authorized";
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
export const LEADING_NOISE = /^(?:\s|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*/;

/** @param {string} name an identifier as written (quoted or not) */
function unquote(name) {
  const c = name[0];
  if (c === '"' || c === "[" || c === "`") return name.slice(1, -1).replace(/""/g, '"');
  return name;
}

/**
 * The keyword of a statement that must be refused without running it (null for a query). Statements
 * that are not queries are refused BEFORE preparing: SQLite applies flag PRAGMAs (case_sensitive_like,
 * writable_schema, query_only, ...) while preparing them, even when the statement never runs. Text
 * that starts with no statement keyword at all (model gibberish) is left to the engine, so that SQLite
 * itself reports the error (`near "…": syntax error`), as in the reference; blank text throws.
 * @param {string} sql
 * @returns {string | null}
 */
export function refusedKeyword(sql) {
  const keyword = (LEADING_KEYWORD.exec(sql)?.[1] ?? "").toUpperCase();
  if (keyword === "" && /^(?:\s|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*$/.test(sql)) throw new Error("The supplied SQL string contains no statements");
  const inner = keyword === "EXPLAIN" ? explainedKeyword(sql) : keyword;
  return STATEMENT_KEYWORDS.has(inner) ? inner : null;
}

/**
 * The message a statement that is not a query gets (sql-worker.mjs header, "Refusals"): SQLite's own error when it
 * comes before authorization, else the authorizer's. `message` is the engine's error from preparing
 * (never running) the statement on a throwaway read-only connection, or null when it prepared.
 * @param {string} sql @param {string} keyword from `refusedKeyword` @param {string | null} message
 */
export function refusalOf(sql, keyword, message) {
  const denied = keyword === "VACUUM" ? VACUUM_DENIED : NOT_AUTHORIZED;
  if (message === null) return denied;
  if (PARSE_ERROR.test(message) || /^unknown database /.test(message) || /^unable to identify the object/.test(message)) return message;
  if (keyword === "UPDATE" && /^no such column: /.test(message)) return message;
  const missing = TARGET_ERROR.exec(message);
  if (missing) {
    const statement = sql.replace(LEADING_NOISE, "").replace(/^EXPLAIN(?:\s+QUERY\s+PLAN)?\s+/i, "");
    const target = TARGETS.map((re) => re.exec(statement)?.[1]).find((t) => t !== undefined);
    if (target !== undefined && unquote(target).toLowerCase() === missing[1].toLowerCase()) return message;
  }
  return denied;
}

/**
 * Python's `==`/`hash` key of a row, as lib/oracle/compare.ts `rowKey` (int and integral float
 * coincide, bytes by content); used to de-duplicate rows for set comparison.
 * @param {unknown[]} row
 */
export function rowKey(row) {
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
export class OverCap extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.overCap = true;
  }
}

/**
 * The rows of a running statement under the oracle's caps: text decoding per `textErrors`, and for
 * set comparison (`distinct`) de-duplication once a cap is reached (see sql-worker.mjs's header).
 * Throws `OverCap` past a cap. `iterate` yields each row as a fresh array of values.
 * @param {Iterable<unknown[]>} iterate
 * @param {{maxRows: number, maxBytes: number, textErrors: "ignore" | "replace", distinct?: boolean}} job
 * @returns {unknown[][]}
 */
export function collectRows(iterate, job) {
  /** @type {unknown[][]} */
  let rows = [];
  let bytes = 0;
  /** @type {Set<string> | null} distinct row keys, once de-duplication started */
  let seen = null;
  for (const row of iterate) {
    for (let i = 0; i < row.length; i++) {
      const v = row[i];
      // Python's text_factory decode(errors="ignore") drops undecodable bytes; better-sqlite3 (and
      // sql.js's UTF-8 decoding) have already turned them into U+FFFD, which is removed here to match.
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
