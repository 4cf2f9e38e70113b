// A persisted gold cache keeps each executor's gold results apart (lib/oracle/gold-cache.ts): a
// second engine does not get SQLite's rows from the same file, and SQLite's keys are unchanged.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { resultRows, type ExecResult } from "../../lib/oracle/executor.ts";
import { GoldCache } from "../../lib/oracle/gold-cache.ts";
import { SPIDER_DIR, tempDir } from "../helpers/run-fixture.ts";

const root = tempDir("gold-engine");
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A result with its rows deserialized (a gold cache hit answers them packed), for comparing with `toEqual`. */
const unpacked = (r: ExecResult): ExecResult => (r.ok ? { ok: true, rows: resultRows(r) } : r);

describe("gold cache and executors", () => {
  it("caches per engine on disk", async () => {
    const file = join(root, "gold.sqlite");
    const db = join(SPIDER_DIR, "database", "concert_singer", "concert_singer.sqlite");
    const run = (rows: number[][]) => async (): Promise<ExecResult> => ({ ok: true, rows });
    const first = new GoldCache(file);
    expect(unpacked(await first.get(db, "SELECT 1", run([[1]])))).toEqual({ ok: true, rows: [[1]] });
    first.close();
    const again = new GoldCache(file, "sqlite");
    expect(unpacked(await again.get(db, "SELECT 1", run([[2]])))).toEqual({ ok: true, rows: [[1]] });
    expect(again.hits).toBe(1);
    again.close();
    const other = new GoldCache(file, "sql.js");
    expect(unpacked(await other.get(db, "SELECT 1", run([[3]])))).toEqual({ ok: true, rows: [[3]] });
    expect(other.executions).toBe(1);
    other.close();
  });
});
