// Tests examples/sqljs-executor.ts from outside lib/: the sql.js executor answers hostile SQL
// (writes, ATTACH, PRAGMA, VACUUM, transactions, runaway and oversized queries) exactly as the
// bundled better-sqlite3 executor does — same refusal text, rows, caps and TIMEOUT (within the limit
// + 1 s), the database file untouched, a working thread after every case — and the reference
// authorizer fixture gets the same answers from both; then the oracle scores on engine "sqljs".
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Example } from "../lib/data/types.ts";
import { Oracle } from "../lib/oracle/oracle.ts";
import { SqlSandbox } from "../lib/oracle/sandbox.ts";
import type { ExecResult } from "../lib/plugin.ts";
import { SqlJsExecutor } from "./sqljs-executor.ts";
import { budget } from "../test/helpers/budget.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SOURCE = join(ROOT, "data/spider/database/concert_singer/concert_singer.sqlite");
const TIMEOUT_MS = 1500;
const LIMITS = { jobs: 1, timeoutMs: TIMEOUT_MS, maxRows: 100_000, maxBytes: 64 * 1024 * 1024 };
/** The comparisons run under a deadline no loaded machine reaches, so a cap is met before it (only the runaway test times out). */
const GENEROUS = { ...LIMITS, timeoutMs: 60_000 };
const dir = mkdtempSync(join(tmpdir(), "merit-sqljs-"));
const db = join(dir, "concert_singer", "concert_singer.sqlite");
mkdirSync(join(dir, "concert_singer"));
copyFileSync(SOURCE, db);
const RECURSE = (tail: string) => `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) ${tail}`;
const cross = (n: number) => Array.from({ length: n }, (_, i) => `singer s${i}`).join(", ");

/** Cases both engines must answer identically (refusals, errors, rows, caps). */
const SAME: string[] = [
  "INSERT INTO singer (Name) VALUES ('x')",
  "UPDATE singer SET Age = 1",
  "DELETE FROM singer",
  "REPLACE INTO singer (Singer_ID, Name) VALUES (1, 'x')",
  "CREATE TABLE t (a)",
  "CREATE TEMP TABLE t AS SELECT 1",
  "DROP TABLE singer",
  "DROP TABLE nosuch",
  "ALTER TABLE singer ADD COLUMN z",
  `ATTACH '${join(dir, "attached.sqlite")}' AS a`,
  "DETACH main",
  "PRAGMA writable_schema = 1",
  "PRAGMA query_only = 0",
  "PRAGMA table_info(singer)",
  "VACUUM",
  `VACUUM INTO '${join(dir, "copy.sqlite")}'`,
  "BEGIN",
  "SAVEPOINT s",
  "SELECT load_extension('x')",
  "EXPLAIN DELETE FROM singer",
  "WITH x AS (SELECT 1) DELETE FROM singer WHERE Singer_ID IN (SELECT * FROM x)",
  "SELECT 1; SELECT 2",
  "SELECT 1; DROP TABLE singer",
  "SELECT 1;;",
  "SELECT 1; -- trailing comment",
  "",
  "-- nothing here",
  "selec 1",
  "SELECT nosuch FROM singer",
  "SELECT * FROM nosuch",
  `SELECT * FROM ${cross(7)}`, // 279,936 rows > the 100,000-row cap
  "SELECT length(randomblob(2e9))",
  "SELECT CAST(x'41C342' AS TEXT)",
  "SELECT Name, Age, 1.5, x'00ff', NULL, 9223372036854775807 FROM singer ORDER BY Singer_ID",
  "SELECT count(*), avg(Age), max(Name) FROM singer",
  `SELECT ${"(".repeat(1000)}1${")".repeat(1000)}`,
  'SELECT count(*) FROM singer WHERE Country = "France"', // a double-quoted string (DQS)
];

/** A result as comparable text: bigint as `12n`, a blob (Buffer or Uint8Array alike) as x'…'. */
const plain = (r: ExecResult) =>
  JSON.stringify(r, function (this: Record<string, unknown>, key: string, v: unknown) {
    const raw = this[key];
    return typeof raw === "bigint" ? `${raw}n` : raw instanceof Uint8Array ? `x'${Buffer.from(raw).toString("hex")}'` : v;
  });

describe("the sqljs executor on hostile SQL", () => {
  let sqljs: SqlJsExecutor;
  let bundled: SqlSandbox;
  beforeAll(() => {
    sqljs = new SqlJsExecutor(GENEROUS);
    bundled = new SqlSandbox(GENEROUS);
  });
  afterAll(async () => {
    await sqljs?.close();
    await bundled?.close();
  });

  it(`answers ${SAME.length} cases exactly as the bundled executor, and a query works after each`, async () => {
    for (const sql of SAME) {
      const [a, b] = [await sqljs.execute({ db, sql, textErrors: "ignore" }), await bundled.execute({ db, sql, textErrors: "ignore" })];
      expect(plain(a), sql.slice(0, 80)).toBe(plain(b));
      expect(await sqljs.execute({ db, sql: "SELECT count(*) FROM singer" })).toEqual({ ok: true, rows: [[6n]] });
    }
    expect(readFileSync(db).equals(readFileSync(SOURCE))).toBe(true);
  }, budget(120_000));

  it("a result over the byte cap is over the cap (or TIMEOUT: sql.js copies each blob out of WebAssembly memory)", async () => {
    const r = await sqljs.execute({ db, sql: "SELECT zeroblob(50000000) FROM singer" }); // 6 × 50 MB > the 64 MiB cap
    expect([plain({ ok: false, error: "TIMEOUT", timedOut: true }), plain(await bundled.execute({ db, sql: "SELECT zeroblob(50000000) FROM singer" }))]).toContain(plain(r));
    expect(await sqljs.execute({ db, sql: "SELECT 1" })).toEqual({ ok: true, rows: [[1n]] });
  }, budget(30_000));

  it("runaway statements are TIMEOUT within the limit + 1 s; the thread is replaced", async () => {
    const quick = new SqlJsExecutor(LIMITS);
    try {
      for (const sql of [RECURSE("SELECT count(*) FROM c"), `SELECT count(*) FROM ${cross(12)}`]) {
        const started = Date.now();
        expect(await quick.execute({ db, sql })).toEqual({ ok: false, error: "TIMEOUT", timedOut: true });
        expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 1000);
        expect(await quick.execute({ db, sql: "SELECT 1" })).toEqual({ ok: true, rows: [[1n]] });
      }
      expect(quick.restarts).toBeGreaterThanOrEqual(2);
    } finally {
      await quick.close();
    }
  }, budget(60_000));

  it("the reference authorizer fixture gets the same answer from both engines", async () => {
    const fixture = JSON.parse(readFileSync(join(ROOT, "test/fixtures/oracle/authorizer-messages.json"), "utf8")) as { cases: Array<{ sql: string }> };
    for (const { sql } of fixture.cases) expect(plain(await sqljs.execute({ db, sql })), sql).toBe(plain(await bundled.execute({ db, sql })));
    expect(readFileSync(db).equals(readFileSync(SOURCE))).toBe(true);
  }, budget(120_000));

  it("differs only where the two SQLite builds do (README, the sqljs parity paragraph)", async () => {
    const both = async (sql: string) => [plain(await sqljs.execute({ db, sql })), plain(await bundled.execute({ db, sql }))];
    // better-sqlite3 is built with SQLITE_ENABLE_PERCENTILE and SQLITE_SOUNDEX; sql.js is not.
    expect(await both("SELECT median(Age) FROM singer")).toEqual([plain({ ok: false, error: "no such function: median", timedOut: false }), plain({ ok: true, rows: [[36.5]] })]);
    expect(await both("SELECT soundex(Name) FROM singer LIMIT 1")).toEqual([plain({ ok: false, error: "no such function: soundex", timedOut: false }), plain({ ok: true, rows: [["J261"]] })]);
    // better-sqlite3 is built with SQLITE_LIKE_DOESNT_MATCH_BLOBS.
    expect(await both("SELECT x'41' LIKE 'A'")).toEqual([plain({ ok: true, rows: [[1n]] }), plain({ ok: true, rows: [[0n]] })]);
    expect(await both("SELECT sqlite_version()")).toEqual([plain({ ok: true, rows: [["3.54.1"]] }), plain({ ok: true, rows: [["3.53.2"]] })]);
  });

  it("never rejects after close, and close is idempotent", async () => {
    const executor = new SqlJsExecutor({ timeoutMs: 1000 });
    const pending = executor.execute({ db, sql: RECURSE("SELECT count(*) FROM c") });
    await executor.close();
    await executor.close();
    expect(await pending).toEqual({ ok: false, error: "executor is closed", timedOut: false });
    expect(await executor.execute({ db, sql: "SELECT 1" })).toEqual({ ok: false, error: "executor is closed", timedOut: false });
  });
});

describe("the oracle on engine sqljs", () => {
  const databases = new Map([["concert_singer", { dbId: "concert_singer", canonicalPath: db, allPaths: [db] }]]);
  const example = (goldSql: string): Example => ({ id: "0", sourceIndex: 0, dbId: "concert_singer", question: "q", evidence: "", goldSql, difficulty: "easy" });
  let oracle: Oracle;
  beforeAll(() => {
    oracle = new Oracle({ dataset: "spider", databases, protocol: "merit", engine: "sqljs", ...LIMITS });
  });
  afterAll(async () => {
    await oracle?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("scores the four statuses through the registered engine", async () => {
    expect(oracle.executor.engine).toBe("sqljs");
    const gold = example("SELECT count(*) FROM singer");
    expect((await oracle.score(gold, "SELECT count(*) FROM singer")).status).toBe("CORRECT");
    expect((await oracle.score(gold, "SELECT count(*) + 1 FROM singer")).status).toBe("DENOTATION_MISMATCH");
    expect(await oracle.score(gold, "DELETE FROM singer")).toMatchObject({ status: "EXECUTION_ERROR", dbError: "not authorized" });
    expect(await oracle.score(gold, "SELECT count(*) FROM singers")).toMatchObject({ status: "EXECUTION_ERROR", dbError: "no such table: singers" });
    expect((await oracle.score(gold, RECURSE("SELECT count(*) FROM c"))).status).toBe("TIMEOUT");
  }, budget(30_000));
});
