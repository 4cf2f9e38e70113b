// A cached gold and the SQL deadline (lib/oracle/gold-cache.ts, issue item 9): each row records the
// deadline it ran under, and under a shorter deadline it is not used — the gold runs again, so a
// gold that would not meet the deadline is a gold timeout exactly as with no cache file (it used to
// be answered from the cache, computed under the default deadline, while predictions were held to
// the short one). Table-lookup executors stand in for a fast machine and a too-short deadline.
import { rmSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import type { DatabaseFiles, Example } from "../../lib/data/types.ts";
import { resultRows, type ExecRequest, type ExecResult, type SqlExecutor } from "../../lib/oracle/executor.ts";
import { GoldCache } from "../../lib/oracle/gold-cache.ts";
import { Oracle } from "../../lib/oracle/oracle.ts";
import { SPIDER_DIR, tempDir } from "../helpers/run-fixture.ts";

const root = tempDir("gold-deadline");
afterAll(() => rmSync(root, { recursive: true, force: true }));
const CONCERT = join(SPIDER_DIR, "database", "concert_singer", "concert_singer.sqlite");
const db: DatabaseFiles = { dbId: "concert_singer", canonicalPath: CONCERT, allPaths: [CONCERT] };
const example: Example = { id: "0", sourceIndex: 0, dbId: "concert_singer", question: "q", evidence: "", goldSql: "SELECT count(*) FROM singer", difficulty: "easy" };

/** Answers every statement the same way under `timeoutMs`; counts executions. */
class FixedExecutor implements SqlExecutor {
  readonly engine = "sqlite";
  executions = 0;
  readonly timeoutMs: number;
  readonly answer: ExecResult;
  constructor(timeoutMs: number, answer: ExecResult) {
    this.timeoutMs = timeoutMs;
    this.answer = answer;
  }
  async execute(_request: ExecRequest): Promise<ExecResult> {
    this.executions += 1;
    return this.answer;
  }
  async close(): Promise<void> {}
}
const rows: ExecResult = { ok: true, rows: [[6n]] };
const timeout: ExecResult = { ok: false, error: "TIMEOUT", timedOut: true };

async function verdict(executor: SqlExecutor, goldCacheFile: string | null) {
  const oracle = new Oracle({ dataset: "spider", databases: new Map([["concert_singer", db]]), protocol: "strict", executor, goldCacheFile });
  try {
    return await oracle.score(example, "SELECT count(*) FROM singer");
  } finally {
    await oracle.close();
  }
}

/** A result with its rows deserialized (a gold cache hit answers them packed), for comparing with `toEqual`. */
const unpacked = (r: ExecResult): ExecResult => (r.ok ? { ok: true, rows: resultRows(r) } : r);

describe("a cached gold under a shorter deadline than it ran under", () => {
  it("is a gold timeout exactly as with no cache file when the gold does not meet the deadline", async () => {
    const file = join(root, "warm.sqlite");
    expect((await verdict(new FixedExecutor(30_000, rows), file)).status).toBe("CORRECT"); // warms the file
    const short = new FixedExecutor(1, timeout);
    const cached = await verdict(short, file);
    const uncached = await verdict(new FixedExecutor(1, timeout), null);
    expect(cached).toEqual(uncached);
    expect(cached).toMatchObject({ status: "GOLD_ERROR", goldTimedOut: true });
    expect(short.executions).toBe(1); // the gold ran again: the cached row was not used
    // The timeout is not stored: the row from the longer deadline still answers under it.
    const again = new FixedExecutor(30_000, timeout);
    expect((await verdict(again, file)).status).toBe("TIMEOUT"); // gold from the file; the prediction timed out
    expect(again.executions).toBe(1);
  });

  it("uses a row under a deadline at least as long; a gold that meets a shorter one replaces it", async () => {
    const file = join(root, "levels.sqlite");
    const get = async (deadlineMs: number, answer: ExecResult) => {
      const cache = new GoldCache(file, "sqlite", "", deadlineMs);
      const result = await cache.get(CONCERT, "SELECT 1", async () => answer);
      cache.close();
      return { result: unpacked(result), executions: cache.executions };
    };
    expect(await get(5_000, { ok: true, rows: [[1n]] })).toEqual({ result: { ok: true, rows: [[1n]] }, executions: 1 });
    expect(await get(5_000, rows)).toEqual({ result: { ok: true, rows: [[1n]] }, executions: 0 });
    expect(await get(60_000, rows)).toEqual({ result: { ok: true, rows: [[1n]] }, executions: 0 });
    expect(await get(100, { ok: true, rows: [[2n]] })).toEqual({ result: { ok: true, rows: [[2n]] }, executions: 1 });
    expect(await get(100, rows)).toEqual({ result: { ok: true, rows: [[2n]] }, executions: 0 });
    expect(await get(5_000, rows)).toEqual({ result: { ok: true, rows: [[2n]] }, executions: 0 });
  });

  it("opens a file written before rows recorded their deadline (its rows never match, so they run again)", async () => {
    const file = join(root, "v3.sqlite");
    const old = new Database(file);
    old.exec("CREATE TABLE gold_results (key TEXT PRIMARY KEY, ok INTEGER NOT NULL, payload BLOB NOT NULL, row_hash TEXT NOT NULL)");
    old.close();
    const cache = new GoldCache(file, "sqlite", "", 1_000);
    expect(unpacked(await cache.get(CONCERT, "SELECT 1", async () => rows))).toEqual(rows);
    cache.close();
    const again = new GoldCache(file, "sqlite", "", 1_000);
    expect(unpacked(await again.get(CONCERT, "SELECT 1", async () => timeout))).toEqual(rows);
    expect(again.diskHits).toBe(1);
    again.close();
  });
});
