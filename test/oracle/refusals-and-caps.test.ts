/**
 * The classifier sees the messages the reference's oracle would produce (METHOD.md §2.1, §3):
 *  - a statement the sandbox refuses before running gets the message of the reference's read-only
 *    authorizer, checked against CPython's sqlite3 with that authorizer
 *    (test/fixtures/oracle/authorizer_check.py → authorizer-messages.json), so it is classified as
 *    the reference classifies it (`not authorized` → Unknown, not Execution / Read Only Violation);
 *  - a result over the row or byte cap is judged against the gold (a mismatch; for BIRD's set
 *    comparison, the distinct rows decide), never an execution error. Gold over a cap stays GOLD_ERROR.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { classifyFailure } from "../../lib/classify.ts";
import type { Example } from "../../lib/data/types.ts";
import { Oracle } from "../../lib/oracle/oracle.ts";
import { SqlSandbox } from "../../lib/oracle/sandbox.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const FIXTURE = JSON.parse(readFileSync(join(ROOT, "test/fixtures/oracle/authorizer-messages.json"), "utf8")) as {
  sqlite: string;
  cases: Array<{ sql: string; error?: string; rows?: number }>;
};

/**
 * Where the kit knowingly differs, and why. better-sqlite3 has no authorizer, so the kit prepares a
 * refused statement (never runs it) and keeps SQLite's error only when it precedes authorization in
 * every case it can tell (a parse error; the statement's own target missing; UPDATE's columns).
 */
const KNOWN_DIFFERENCES: Record<string, { kit: string; why: string }> = {
  "DROP TABLE IF EXISTS nosuch": { kit: "not authorized", why: "the reference runs a no-op DROP of an absent object (0 rows); the kit never runs a DROP" },
  "SELECT * FROM pragma_table_info('singer')": { kit: "rows", why: "a pragma table-valued function in a SELECT: the reference's authorizer denies it, the kit runs it" },
};

const dir = mkdtempSync(join(tmpdir(), "merit-refusals-"));
const dbDir = join(dir, "concert_singer");
const db = join(dbDir, "concert_singer.sqlite");
mkdirSync(dbDir);
copyFileSync(join(ROOT, "data/spider/database/concert_singer/concert_singer.sqlite"), db);
const databases = new Map([["concert_singer", { dbId: "concert_singer", canonicalPath: db, allPaths: [db] }]]);

const example = (goldSql: string): Example => ({ id: "0", sourceIndex: 0, dbId: "concert_singer", question: "q", evidence: "", goldSql, difficulty: "easy" });
const cross = (n: number, select = "*") => `SELECT ${select} FROM ${Array.from({ length: n }, (_, i) => `singer s${i}`).join(", ")}`;

describe("refused statements answer what the reference's authorizer answers", () => {
  let sandbox: SqlSandbox;
  beforeAll(() => {
    sandbox = new SqlSandbox({ jobs: 1, timeoutMs: 20_000 });
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it(`matches CPython sqlite3 (${FIXTURE.sqlite}) with the read-only authorizer on ${FIXTURE.cases.length} statements`, async () => {
    const differences: string[] = [];
    for (const c of FIXTURE.cases) {
      const r = await sandbox.execute({ db, sql: c.sql });
      const kit = r.ok ? "rows" : r.error;
      const reference = c.error ?? "rows";
      const known = KNOWN_DIFFERENCES[c.sql];
      if (known) {
        expect(kit, c.sql).toBe(known.kit);
        if (known.kit !== reference) differences.push(c.sql);
      } else expect(kit, c.sql).toBe(reference);
    }
    expect(differences.sort()).toEqual(["DROP TABLE IF EXISTS nosuch", "SELECT * FROM pragma_table_info('singer')"]);
    expect(readFileSync(db).equals(readFileSync(join(ROOT, "data/spider/database/concert_singer/concert_singer.sqlite")))).toBe(true);
  });

  it("a refused DML prediction is an execution error classified as the reference does (Unknown)", async () => {
    const oracle = new Oracle({ dataset: "spider", databases, protocol: "merit", jobs: 1, timeoutMs: 20_000 });
    try {
      const verdict = await oracle.score(example("SELECT count(*) FROM singer"), "DELETE FROM singer");
      expect(verdict).toMatchObject({ status: "EXECUTION_ERROR", dbError: "not authorized" });
      expect(classifyFailure(verdict)).toMatchObject({ errorType: "Unknown", errorSubtype: "Unknown", source: "dbms" });
      const missing = await oracle.score(example("SELECT count(*) FROM singer"), "DELETE FROM singers");
      expect(classifyFailure(missing)).toMatchObject({ errorType: "Schema Linking", errorSubtype: "Missing Table" });
    } finally {
      await oracle.close();
    }
  });
});

describe("results over the row or byte cap are judged against the gold", () => {
  const caps = { jobs: 1, timeoutMs: 20_000, maxRows: 1000, maxBytes: 1 << 20 };
  let spider: Oracle;
  let bird: Oracle;
  beforeAll(() => {
    spider = new Oracle({ dataset: "spider", databases, protocol: "merit", ...caps });
    bird = new Oracle({ dataset: "bird", databases, ...caps });
  });
  afterAll(async () => {
    await spider?.close();
    await bird?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("Spider: 6^4 = 1,296 rows > the 1,000-row cap is a DENOTATION_MISMATCH (Result Mismatch), not an error", async () => {
    const verdict = await spider.score(example("SELECT Name FROM singer"), cross(4, "s0.Name"));
    expect(verdict).toMatchObject({ status: "DENOTATION_MISMATCH", dbError: null, predictedExecOk: true, oracleCorrect: false, dbExecutions: 1 });
    expect(classifyFailure(verdict)).toMatchObject({ errorType: "Result Mismatch", source: "semantic_hypothesis" });
  });

  it("Spider: over the byte cap is a mismatch too", async () => {
    const verdict = await spider.score(example("SELECT Name FROM singer"), "SELECT zeroblob(300000) FROM singer");
    expect(verdict).toMatchObject({ status: "DENOTATION_MISMATCH", dbError: null });
  });

  it("BIRD: duplicates past the cap do not count — a cartesian product with the gold's set is CORRECT, as set() says", async () => {
    // 1,296 rows, 6 distinct names: set(pred) == set(gold).
    const verdict = await bird.score(example("SELECT Name FROM singer"), cross(4, "s0.Name"));
    expect(verdict).toMatchObject({ status: "CORRECT", dbError: null });
    // Python's set semantics in the de-duplication: 1 == 1.0, and '1' and x'31' are other values.
    const mixed = cross(4, "CASE WHEN s0.Singer_ID % 2 = 0 THEN 1 ELSE 1.0 END");
    expect((await bird.score(example("SELECT 1"), mixed)).status).toBe("CORRECT");
    expect((await bird.score(example("SELECT '1'"), mixed)).status).toBe("DENOTATION_MISMATCH");
    expect((await bird.score(example("SELECT x'31'"), cross(4, "CASE WHEN s0.Singer_ID % 2 = 0 THEN x'31' ELSE '1' END"))).status).toBe("DENOTATION_MISMATCH");
    // Another set, still over the cap in rows: a mismatch.
    expect((await bird.score(example("SELECT Name FROM singer"), cross(4, "s1.Country"))).status).toBe("DENOTATION_MISMATCH");
  });

  it("BIRD: more distinct rows than the cap is a mismatch, not an error", async () => {
    const verdict = await bird.score(example("SELECT Name FROM singer"), cross(4, "s0.Name, s1.Name, s2.Name, s3.Name"));
    expect(verdict).toMatchObject({ status: "DENOTATION_MISMATCH", dbError: null, dbExecutions: 1 });
  });

  it("the caps still protect the oracle: a gold over a cap is GOLD_ERROR", async () => {
    const verdict = await bird.score(example(cross(4)), "SELECT 1");
    expect(verdict.status).toBe("GOLD_ERROR");
    expect(verdict.dbError).toMatch(/result too large/);
  });
});
