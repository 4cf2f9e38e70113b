/**
 * Oracle sandbox deadlines (METHOD.md §11.1: "default 30 s per statement"): the deadline bounds the
 * STATEMENT, so the time a freshly forked worker needs to start (Node start-up, loading
 * better-sqlite3) must not count against it. Otherwise, on a loaded machine or with a short --timeout,
 * the statement sent to a replacement worker after a kill times out too, the replacement is killed,
 * and every later statement cascades into TIMEOUT. Worker start-up is made slow here, deterministically,
 * with a start-up hook in NODE_OPTIONS that busy-waits 800 ms in each forked worker.
 */
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { SqlSandbox } from "../../lib/oracle/sandbox.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "merit-sandbox-deadline-"));
const db = join(dir, "concert_singer.sqlite");
copyFileSync(join(ROOT, "data/spider/database/concert_singer/concert_singer.sqlite"), db);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SLOW_START = "--import=data:text/javascript,const%20t=Date.now();while(Date.now()-t<800);";

describe("sandbox deadline", () => {
  it("does not charge a worker's start-up to the statement it runs", async () => {
    const saved = process.env.NODE_OPTIONS;
    process.env.NODE_OPTIONS = SLOW_START; // inherited by every worker forked while it is set
    const sandbox = new SqlSandbox({ jobs: 1, timeoutMs: 400 });
    try {
      // Fresh worker: 800 ms start-up, then a statement that takes a millisecond.
      expect(await sandbox.execute({ db, sql: "SELECT 1" })).toEqual({ ok: true, rows: [[1n]] });
      // A real runaway is still cut at the deadline…
      const runaway = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c";
      expect(await sandbox.execute({ db, sql: runaway })).toEqual({ ok: false, error: "TIMEOUT", timedOut: true });
      // …and the slow-starting replacement answers the next statement.
      expect(await sandbox.execute({ db, sql: "SELECT 2" })).toEqual({ ok: true, rows: [[2n]] });
    } finally {
      if (saved === undefined) delete process.env.NODE_OPTIONS;
      else process.env.NODE_OPTIONS = saved;
      await sandbox.close();
    }
  });

  it("in a batch, the runaway is the TIMEOUT, and the statements answered before and queued after it are answered", async () => {
    const sandbox = new SqlSandbox({ jobs: 1, timeoutMs: 300 });
    try {
      await sandbox.execute({ db, sql: "SELECT 0" }); // the worker is up: the next statements go as one batch
      const runaway = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c";
      const sqls = ["SELECT 1", "SELECT 2", runaway, "SELECT 3", "SELECT count(*) FROM singer"];
      expect(await Promise.all(sqls.map((sql) => sandbox.execute({ db, sql })))).toEqual([
        { ok: true, rows: [[1n]] },
        { ok: true, rows: [[2n]] },
        { ok: false, error: "TIMEOUT", timedOut: true },
        { ok: true, rows: [[3n]] },
        { ok: true, rows: [[6n]] },
      ]);
      expect(sandbox.restarts).toBe(1);
    } finally {
      await sandbox.close();
    }
  });
});
