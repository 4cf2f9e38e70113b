/**
 * Oracle sandbox isolation between statements (METHOD.md §2.1, §11.1): a refused statement must leave
 * no trace on the worker's connection. SQLite applies flag PRAGMAs (`case_sensitive_like`,
 * `reverse_unordered_selects`, `query_only`, `writable_schema`, …) while PREPARING them, so a check
 * that prepares first and refuses afterwards still lets them change how every later query — including
 * gold queries, whose rows are cached — behaves on that worker.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { Example } from "../../lib/data/types.ts";
import { Oracle } from "../../lib/oracle/oracle.ts";
import { SqlSandbox } from "../../lib/oracle/sandbox.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "merit-sandbox-state-"));
mkdirSync(join(dir, "concert_singer"));
const db = join(dir, "concert_singer", "concert_singer.sqlite");
copyFileSync(join(ROOT, "data/spider/database/concert_singer/concert_singer.sqlite"), db);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The reference's read-only authorizer denies PRAGMAs (refusals-and-caps.test.ts).
const REFUSED = /^not authorized$/;

// Probes of connection state, each with the value a fresh read-only, query_only connection gives.
const PROBES: Array<[string, unknown[][]]> = [
  ["SELECT 'a' LIKE 'A'", [[1n]]], // LIKE is case-insensitive for ASCII by default
  ["SELECT * FROM pragma_query_only", [[1n]]],
  ["SELECT * FROM pragma_writable_schema", [[0n]]],
  ["SELECT * FROM pragma_reverse_unordered_selects", [[0n]]],
  // concert_singer.singer holds Singer_ID 1..6; a plain scan returns them in rowid order.
  ["SELECT Singer_ID FROM singer", [[1n], [2n], [3n], [4n], [5n], [6n]]],
];

const STATE_PRAGMAS = [
  "PRAGMA case_sensitive_like = 1",
  "PRAGMA reverse_unordered_selects = 1",
  "PRAGMA query_only = 0",
  "PRAGMA writable_schema = 1",
  // EXPLAIN compiles the PRAGMA too, so it has the same prepare-time effect.
  "EXPLAIN PRAGMA case_sensitive_like = 1",
  "EXPLAIN QUERY PLAN PRAGMA query_only = 0",
  "  /* c */ PRAGMA reverse_unordered_selects = 1",
];

describe("sandbox connection state", () => {
  it("refused PRAGMAs change nothing for later statements on the same worker", async () => {
    const sandbox = new SqlSandbox({ jobs: 1, timeoutMs: 10_000 });
    try {
      for (const [sql, rows] of PROBES) expect(await sandbox.execute({ db, sql }), sql).toEqual({ ok: true, rows });
      for (const sql of STATE_PRAGMAS) {
        const r = await sandbox.execute({ db, sql });
        expect(r.ok, sql).toBe(false);
        if (!r.ok) expect(r.error).toMatch(REFUSED);
      }
      for (const [sql, rows] of PROBES) expect(await sandbox.execute({ db, sql }), `after the PRAGMAs: ${sql}`).toEqual({ ok: true, rows });
    } finally {
      await sandbox.close();
    }
  });

  it("a refused PRAGMA in one prediction does not change the verdicts of later predictions or golds", async () => {
    const databases = new Map([["concert_singer", { dbId: "concert_singer", canonicalPath: db, allPaths: [db] }]]);
    const oracle = new Oracle({ dataset: "spider", databases, protocol: "merit", jobs: 1, timeoutMs: 10_000 });
    const example = (i: number, goldSql: string): Example => ({
      id: String(i),
      sourceIndex: i,
      dbId: "concert_singer",
      question: "q",
      evidence: "",
      goldSql,
      difficulty: "easy",
    });
    // Gold: one singer's name contains "joe" case-insensitively ("Joe Sharp") ⇒ [(1,)].
    const first = example(0, "SELECT count(*) FROM singer WHERE Name LIKE '%joe%'");
    // Gold computed only after the PRAGMA: SQLite's LIKE matches "Joe Sharp" ⇒ [("Joe Sharp",)].
    const second = example(1, "SELECT Name FROM singer WHERE Name LIKE '%JOE%'");
    try {
      expect((await oracle.score(first, "SELECT count(*) FROM singer WHERE Name LIKE '%JOE%'")).status).toBe("CORRECT");
      const hostile = await oracle.score(first, "PRAGMA case_sensitive_like = 1");
      expect(hostile.status).toBe("EXECUTION_ERROR");
      expect((await oracle.score(first, "SELECT count(*) FROM singer WHERE Name LIKE '%JOE%'")).status).toBe("CORRECT");
      expect((await oracle.score(second, "SELECT Name FROM singer WHERE Name = 'Joe Sharp'")).status).toBe("CORRECT");
    } finally {
      await oracle.close();
    }
  });
});
