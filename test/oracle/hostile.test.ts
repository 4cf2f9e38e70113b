/**
 * Hostile SQL against the oracle (METHOD.md §2.1, §11.1, §11.3): writes, DDL, ATTACH, PRAGMA, VACUUM
 * INTO, transactions, extensions, runaway and memory-hungry queries, absurd nesting and sizes — run
 * through `SqlSandbox.execute` and `Oracle.score` on a temp COPY of a Spider database. Every case
 * must come back as an outcome (never a throw) with the expected status; the copy must be byte-for-byte
 * unchanged with no file created next to it; killed workers must be replaced (a normal query works
 * after each case); and no worker process may outlive `close()`.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256Hex } from "../../lib/hash.ts";
import { Oracle } from "../../lib/oracle/oracle.ts";
import { NO_SINGLE_STATEMENT, type SpiderProtocol } from "../../lib/oracle/protocol.ts";
import { SqlSandbox } from "../../lib/oracle/sandbox.ts";
import type { Rows, Status } from "../../lib/oracle/types.ts";
import type { Example } from "../../lib/data/types.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TIMEOUT_MS = 2000;
const MAX_ROWS = 100_000;
const MAX_BYTES = 64 * 1024 * 1024;

const dir = mkdtempSync(join(tmpdir(), "merit-hostile-"));
const dbDir = join(dir, "concert_singer");
const db = join(dbDir, "concert_singer.sqlite");
mkdirSync(dbDir);
copyFileSync(join(ROOT, "data/spider/database/concert_singer/concert_singer.sqlite"), db);
const originalHash = sha256Hex(readFileSync(db));
const attachTarget = join(dir, "attached.sqlite");
const vacuumTarget = join(dir, "vacuum-copy.sqlite");
const seenPids = new Set<number>();

// Refusals answer what the reference's read-only authorizer answers (refusals-and-caps.test.ts).
const REFUSED = /^not authorized$/;
const VACUUM_DENIED = /^authorization denied$/;
const RECURSE = (tail: string) => `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) ${tail}`;
const cross = (n: number) => Array.from({ length: n }, (_, i) => `singer s${i}`).join(", ");
const TEN_MB = "x".repeat(10_000_000);

/** What a case must produce: these rows, some rows, an error matching, a timeout, or an error-or-timeout. */
type Expect = { rows: Rows } | { executes: true } | { error: RegExp } | { timeout: true } | { errorOrTimeout: RegExp };

const SANDBOX_CASES: Array<[string, string, Expect]> = [
  ["INSERT", "INSERT INTO singer (Name) VALUES ('x')", { error: REFUSED }],
  ["UPDATE", "UPDATE singer SET Age = 1", { error: REFUSED }],
  ["DELETE", "DELETE FROM singer", { error: REFUSED }],
  ["REPLACE", "REPLACE INTO singer (Singer_ID, Name) VALUES (1, 'x')", { error: REFUSED }],
  ["CREATE TABLE", "CREATE TABLE t (a)", { error: REFUSED }],
  ["CREATE TEMP TABLE", "CREATE TEMP TABLE t AS SELECT 1", { error: REFUSED }],
  ["DROP TABLE", "DROP TABLE singer", { error: REFUSED }],
  ["CREATE INDEX", "CREATE INDEX i ON singer(Age)", { error: REFUSED }],
  ["DROP INDEX", "DROP INDEX IF EXISTS i", { error: REFUSED }],
  ["CREATE VIEW", "CREATE VIEW v AS SELECT 1", { error: REFUSED }],
  ["CREATE TRIGGER", "CREATE TRIGGER tr AFTER INSERT ON singer BEGIN SELECT 1; END", { error: REFUSED }],
  ["ALTER TABLE", "ALTER TABLE singer ADD COLUMN z", { error: REFUSED }],
  ["ATTACH another file", `ATTACH '${attachTarget}' AS a`, { error: REFUSED }],
  ["DETACH", "DETACH main", { error: REFUSED }],
  ["PRAGMA writable_schema", "PRAGMA writable_schema = 1", { error: REFUSED }],
  ["PRAGMA journal_mode", "PRAGMA journal_mode=DELETE", { error: REFUSED }],
  ["PRAGMA query_only off", "PRAGMA query_only = 0", { error: REFUSED }],
  ["PRAGMA table_info", "PRAGMA table_info(singer)", { error: REFUSED }],
  ["VACUUM", "VACUUM", { error: VACUUM_DENIED }],
  ["VACUUM INTO", `VACUUM INTO '${vacuumTarget}'`, { error: VACUUM_DENIED }],
  ["REINDEX", "REINDEX", { error: REFUSED }],
  ["ANALYZE", "ANALYZE", { error: REFUSED }],
  ["BEGIN", "BEGIN", { error: REFUSED }],
  ["COMMIT", "COMMIT", { error: REFUSED }],
  ["SAVEPOINT", "SAVEPOINT s", { error: REFUSED }],
  ["load_extension", "SELECT load_extension('x')", { error: /not authorized/ }],
  ["two statements", "SELECT 1; SELECT 2", { error: /more than one statement/ }],
  ["a write after a select", "SELECT 1; DROP TABLE singer", { error: /more than one statement/ }],
  ["SELECT 1;;", "SELECT 1;;", { rows: [[1n]] }],
  // EXPLAIN of a query runs (it lists the program, never executes it), as in the reference.
  ["EXPLAIN", "EXPLAIN SELECT 1", { executes: true }],
  ["EXPLAIN of a DELETE", "EXPLAIN DELETE FROM singer", { error: REFUSED }],
  ["WITH … DELETE", "WITH x AS (SELECT 1) DELETE FROM singer WHERE Singer_ID IN (SELECT * FROM x)", { error: REFUSED }],
  ["empty string", "", { error: /no statements/ }],
  ["only a comment", "-- nothing here", { error: /no statements/ }],
  ["infinite recursive CTE with rows", RECURSE("SELECT x FROM c"), { errorOrTimeout: new RegExp(`^result too large: more than ${MAX_ROWS} rows`) }],
  ["recursive CTE that never returns a row", RECURSE("SELECT count(*) FROM c"), { timeout: true }],
  // 6 singers ⇒ 6^12 ≈ 2.2e9 combinations: only the deadline stops it.
  ["huge cartesian count", `SELECT count(*) FROM ${cross(12)}`, { timeout: true }],
  // 6^7 = 279,936 rows > the 100,000-row cap.
  ["huge cartesian rows", `SELECT * FROM ${cross(7)}`, { errorOrTimeout: /^result too large/ }],
  ["randomblob(2e9)", "SELECT length(randomblob(2e9))", { error: /string or blob too big/ }],
  ["zeroblob(1e9)", "SELECT zeroblob(1e9)", { error: /string or blob too big/ }],
  // 6 rows × 50 MB > the 64 MiB result cap.
  ["zeroblob rows over the byte cap", "SELECT zeroblob(50000000) FROM singer", { errorOrTimeout: /^result too large: more than \d+ bytes/ }],
  ["1,000 nested parentheses", `SELECT ${"(".repeat(1000)}1${")".repeat(1000)}`, { rows: [[1n]] }],
  ["5,000 nested parentheses", `SELECT ${"(".repeat(5000)}1${")".repeat(5000)}`, { error: /Recursion limit|parser stack overflow|too large/ }],
  ["1,000 nested subqueries", `SELECT count(*) FROM ${"(SELECT * FROM ".repeat(1000)}singer${")".repeat(1000)}`, { error: /Recursion limit|parser stack overflow|too large/ }],
  // A lone surrogate cannot be encoded as UTF-8; it still executes and yields one row.
  ["lone surrogate", "SELECT length('a\uD800b') > 0", { rows: [[1n]] }],
  ["invalid UTF-8 bytes in a result (dropped, as Python's errors='ignore')", "SELECT CAST(x'41C342' AS TEXT)", { rows: [["AB"]] }],
];

const ORACLE_EXAMPLE: Example = {
  id: "0",
  sourceIndex: 0,
  dbId: "concert_singer",
  question: "How many singers do we have?",
  evidence: "",
  goldSql: "SELECT count(*) FROM singer",
  difficulty: "easy",
};

/** [name, protocol, prediction, status, db_error matcher, db executions (null: not checked)] */
const ORACLE_CASES: Array<[string, SpiderProtocol, string, Status, RegExp | null, number | null]> = [
  ["sanity: the gold itself", "official", "SELECT count(*) FROM singer", "CORRECT", null, 1],
  ["DELETE", "official", "DELETE FROM singer", "EXECUTION_ERROR", REFUSED, 1],
  ["INSERT … VALUES", "merit", "INSERT INTO singer (Name) VALUES ('x')", "EXECUTION_ERROR", REFUSED, 1],
  // official keeps only the first sqlparse statement (remove_distinct), so the DROP never reaches SQLite.
  ["select then drop (official)", "official", "SELECT count(*) FROM singer; DROP TABLE singer", "CORRECT", null, 1],
  ["select then drop (merit)", "merit", "SELECT count(*) FROM singer; DROP TABLE singer", "EXECUTION_ERROR", /./, 0],
  ["SELECT 1;; (merit: two sqlparse statements)", "merit", "SELECT 1;;", "EXECUTION_ERROR", /./, 0],
  ["empty (official)", "official", "", "EXECUTION_ERROR", new RegExp(`^${NO_SINGLE_STATEMENT}$`), 0],
  ["empty (merit)", "merit", "   ", "EXECUTION_ERROR", new RegExp(`^${NO_SINGLE_STATEMENT}$`), 0],
  ["only a comment (merit)", "merit", "-- c", "EXECUTION_ERROR", /./, 0],
  ["ATTACH", "official", `ATTACH '${attachTarget}' AS a`, "EXECUTION_ERROR", REFUSED, 1],
  ["WITH … DELETE", "merit", "WITH x AS (SELECT 1) DELETE FROM singer", "EXECUTION_ERROR", REFUSED, 1],
  ["runaway count", "official", RECURSE("SELECT count(*) FROM c"), "TIMEOUT", /^TIMEOUT$/, 1],
  ["ORDER\\nBY (one token with a newline)", "merit", "SELECT count(*) FROM singer ORDER\nBY 1", "EXECUTION_ERROR", /token newline/, 0],
  ["1,000 nested parentheses", "official", `SELECT ${"(".repeat(1000)}count(*)${")".repeat(1000)} FROM singer`, "CORRECT", null, 1],
  ["5,000 nested parentheses", "merit", `SELECT ${"(".repeat(5000)}count(*)${")".repeat(5000)} FROM singer`, "EXECUTION_ERROR", /./, 1],
  // SQLite stops reading at a NUL, so the tail would be silently ignored; Python's sqlite3 (the
  // reference executor) refuses the query: "the query contains a null character".
  ["NUL inside the SQL", "official", "SELECT count(*) FROM singer\u0000 garbage", "EXECUTION_ERROR", /null character/, null],
  ["Latin-1 text", "merit", "SELECT count(*) FROM singer WHERE Name <> 'Ã©tÃ© Ã¿'", "CORRECT", null, 1],
];

/** `process.kill(pid, 0)`'s error code: "ESRCH" once the process is gone, "alive" while it runs. */
function signalCode(pid: number): string {
  try {
    process.kill(pid, 0);
    return "alive";
  } catch (error) {
    return String((error as NodeJS.ErrnoException).code);
  }
}

describe("hostile SQL", () => {
  let sandbox: SqlSandbox;
  const oracles = new Map<SpiderProtocol, Oracle>();
  const databases = new Map([["concert_singer", { dbId: "concert_singer", canonicalPath: db, allPaths: [db] }]]);
  const note = (pids: number[]) => pids.forEach((p) => seenPids.add(p));

  beforeAll(() => {
    sandbox = new SqlSandbox({ jobs: 1, timeoutMs: TIMEOUT_MS, maxRows: MAX_ROWS, maxBytes: MAX_BYTES });
    for (const protocol of ["official", "merit"] as const) {
      oracles.set(protocol, new Oracle({ dataset: "spider", databases, protocol, jobs: 1, timeoutMs: TIMEOUT_MS, maxRows: MAX_ROWS, maxBytes: MAX_BYTES }));
    }
  });
  afterAll(async () => {
    await sandbox?.close();
    for (const o of oracles.values()) await o.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * The pool answers a normal query (after any kill it has replaced the worker). Until the sandbox
   * stops charging worker start-up to the statement's deadline (see sandbox-deadline.test.ts), a
   * replacement that starts slowly on a loaded machine can time out this probe: up to two retries,
   * on TIMEOUT only.
   */
  async function expectPoolWorks(box: SqlSandbox): Promise<void> {
    let r = await box.execute({ db, sql: "SELECT count(*) FROM singer" });
    for (let retry = 0; retry < 2 && !r.ok && r.timedOut; retry++) r = await box.execute({ db, sql: "SELECT count(*) FROM singer" });
    expect(r).toEqual({ ok: true, rows: [[6n]] });
    note(box.pids);
  }

  it.each(SANDBOX_CASES)("sandbox: %s", async (_name, sql, want) => {
    await expectPoolWorks(sandbox); // warm worker, so the timing below is the statement's alone
    const restartsBefore = sandbox.restarts;
    const started = Date.now();
    const result = await sandbox.execute({ db, sql, textErrors: "ignore" });
    const elapsed = Date.now() - started;
    note(sandbox.pids);
    if ("rows" in want) expect(result).toEqual({ ok: true, rows: want.rows });
    else if ("executes" in want) expect(result.ok).toBe(true);
    else if ("error" in want) {
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.timedOut).toBe(false);
        expect(result.error).toMatch(want.error);
      }
    } else {
      expect(result.ok).toBe(false);
      if (!result.ok) {
        if ("timeout" in want || result.timedOut) expect(result).toEqual({ ok: false, error: "TIMEOUT", timedOut: true });
        else expect(result.error).toMatch(want.errorOrTimeout);
      }
    }
    if (!result.ok && result.timedOut) {
      expect(elapsed).toBeLessThan(TIMEOUT_MS + 1000); // upper bound only: the deadline really fires
      await expectPoolWorks(sandbox);
      expect(sandbox.restarts).toBeGreaterThan(restartsBefore);
    }
    await expectPoolWorks(sandbox);
    expect(existsSync(attachTarget)).toBe(false);
    expect(existsSync(vacuumTarget)).toBe(false);
  });

  it.each(ORACLE_CASES)("Oracle.score: %s (%s)", async (_name, protocol, sql, status, dbError, executions) => {
    const oracle = oracles.get(protocol)!;
    const verdict = await oracle.score(ORACLE_EXAMPLE, sql);
    note(oracle.sandbox.pids);
    expect(verdict.status).toBe(status);
    if (executions !== null) expect(verdict.dbExecutions).toBe(executions);
    if (dbError === null) expect(verdict.dbError).toBeNull();
    else expect(verdict.dbError).toMatch(dbError);
    expect(verdict.predictedExecOk).toBe(status === "CORRECT" || status === "DENOTATION_MISMATCH");
    await expectPoolWorks(oracle.sandbox);
  });

  // A 10 MB statement takes a while to ship and parse on a loaded machine: a roomy deadline here.
  it("a 10 MB string literal executes in the sandbox and scores through Oracle.score", async () => {
    const roomy = new SqlSandbox({ jobs: 1, timeoutMs: 30_000 });
    const oracle = new Oracle({ dataset: "spider", databases, protocol: "official", jobs: 1, timeoutMs: 30_000 });
    const merit = new Oracle({ dataset: "spider", databases, protocol: "merit", jobs: 1, timeoutMs: 30_000 });
    try {
      expect(await roomy.execute({ db, sql: `SELECT length('${TEN_MB}')` })).toEqual({ ok: true, rows: [[10_000_000n]] });
      const sql = `SELECT count(*) FROM singer WHERE Name <> '${TEN_MB}'`;
      for (const o of [oracle, merit]) {
        // Must be a verdict, not a thrown RangeError from the SQL lexer.
        const verdict = await o.score(ORACLE_EXAMPLE, sql).catch((error: unknown) => String(error));
        expect(verdict).toMatchObject({ status: "CORRECT", dbError: null, dbExecutions: 1 });
      }
    } finally {
      for (const box of [roomy, oracle.sandbox, merit.sandbox]) note(box.pids);
      await roomy.close();
      await oracle.close();
      await merit.close();
    }
  });

  it("a worker that exhausts its V8 heap dies, is answered and replaced", async () => {
    const small = new SqlSandbox({ jobs: 1, timeoutMs: 20_000, maxRows: 1e9, maxBytes: 1e12, workerHeapMiB: 32 });
    try {
      await expectPoolWorks(small);
      const rows = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 3000000) SELECT x, printf('%040d', x) FROM c";
      const result = await small.execute({ db, sql: rows });
      expect(result).toMatchObject({ ok: false, timedOut: false });
      if (!result.ok) expect(result.error).toMatch(/^SQL worker died/);
      await expectPoolWorks(small);
      expect(small.restarts).toBe(1);
    } finally {
      await small.close();
      note(small.pids);
    }
  });

  it("leaves the database untouched and no worker alive after close()", async () => {
    note(sandbox.pids);
    for (const o of oracles.values()) note(o.sandbox.pids);
    await sandbox.close();
    for (const o of oracles.values()) await o.close();
    expect(await sandbox.execute({ db, sql: "SELECT 1" })).toEqual({ ok: false, error: "sandbox is closed", timedOut: false });
    expect(sha256Hex(readFileSync(db))).toBe(originalHash);
    expect(readdirSync(dir).sort()).toEqual(["concert_singer"]);
    expect(readdirSync(dbDir)).toEqual(["concert_singer.sqlite"]);
    expect(seenPids.size).toBeGreaterThan(3); // killed workers were replaced by new processes
    const alive = [...seenPids].filter((pid) => signalCode(pid) !== "ESRCH");
    expect(alive).toEqual([]);
  });
});
