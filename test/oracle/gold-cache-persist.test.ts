// The gold cache across processes (lib/oracle/gold-cache.ts, METHOD.md §11.2): `merit eval` with a
// cold and a warm cache file writes the same bytes; keys follow the database's content (a copy hits,
// changed bytes miss); a damaged row is refused with one line naming the file, never used.
import { copyFileSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { serialize } from "node:v8";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import type { CommandIO } from "../../lib/cli/command.ts";
import { InputFileError } from "../../lib/errors.ts";
import { resultRows, type ExecResult } from "../../lib/oracle/executor.ts";
import { GoldCache } from "../../lib/oracle/gold-cache.ts";
import type { Rows } from "../../lib/oracle/types.ts";
import { DEEPSEEK_PREDICTIONS, SPIDER_DIR, tempDir } from "../helpers/run-fixture.ts";
import { budget } from "../helpers/budget.ts";

const root = tempDir("gold-persist");
afterAll(() => rmSync(root, { recursive: true, force: true }));
const CONCERT = join(SPIDER_DIR, "database", "concert_singer", "concert_singer.sqlite");
/** A result with its rows deserialized (a gold cache hit answers them packed), for comparing with `toEqual`. */
const unpacked = (r: ExecResult): ExecResult => (r.ok ? { ok: true, rows: resultRows(r) } : r);
const rowsOf = (rows: Rows) => async (): Promise<ExecResult> => ({ ok: true, rows });

async function merit(argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CommandIO = { out: (line) => out.push(line), err: (line) => err.push(line) };
  return { code: await main(argv, io), out, err };
}

describe("gold cache on disk", () => {
  it("a cold and a warm merit eval write byte-identical verdicts.jsonl and summary.json", async () => {
    const cache = join(root, "eval-gold.sqlite");
    const run = (out: string) => merit(["eval", "--dataset", "spider", "--data", SPIDER_DIR, "--pred", DEEPSEEK_PREDICTIONS, "--jobs", "2", "--gold-cache", cache, "--out", out]);
    const cold = await run(join(root, "cold"));
    const warm = await run(join(root, "warm"));
    expect(cold.code).toBe(0);
    expect(warm.out).toEqual(cold.out);
    for (const file of ["verdicts.jsonl", "summary.json"]) {
      expect(readFileSync(join(root, "warm", file))).toEqual(readFileSync(join(root, "cold", file)));
    }
    const db = new Database(cache, { readonly: true });
    const rows = (db.prepare("SELECT count(*) AS n FROM gold_results").get() as { n: number }).n;
    db.close();
    expect(rows).toBe(533); // one per distinct (database, gold text as the official protocol runs it) of the 972 scoreable examples
    const none = await run(join(root, "none"));
    expect(none.out).toEqual(cold.out);
    expect(await merit(["eval", "--dataset", "spider", "--data", SPIDER_DIR, "--pred", DEEPSEEK_PREDICTIONS, "--gold-cache", "none", "--out", join(root, "none2")])).toMatchObject({ code: 0 });
    expect(readFileSync(join(root, "none2", "summary.json"))).toEqual(readFileSync(join(root, "cold", "summary.json")));
  }, budget(120_000));

  it("is keyed by the database's bytes: a copy elsewhere hits, a changed copy misses", async () => {
    const file = join(root, "content.sqlite");
    const first = new GoldCache(file);
    expect(unpacked(await first.get(CONCERT, "SELECT 1", rowsOf([[1n]])))).toEqual({ ok: true, rows: [[1n]] });
    first.close();

    const copy = join(root, "copy.sqlite");
    copyFileSync(CONCERT, copy);
    const again = new GoldCache(file);
    expect(unpacked(await again.get(copy, "SELECT 1", rowsOf([[2n]])))).toEqual({ ok: true, rows: [[1n]] });
    expect([again.diskHits, again.executions]).toEqual([1, 0]);
    again.close();

    const changed = new Database(copy);
    changed.exec("CREATE TABLE extra (x)");
    changed.close();
    const after = new GoldCache(file);
    expect(unpacked(await after.get(copy, "SELECT 1", rowsOf([[3n]])))).toEqual({ ok: true, rows: [[3n]] });
    expect([after.diskHits, after.executions]).toEqual([0, 1]);
    after.close();

    const otherContext = new GoldCache(file, "sqlite", "text_errors=replace");
    expect(unpacked(await otherContext.get(CONCERT, "SELECT 1", rowsOf([[4n]])))).toEqual({ ok: true, rows: [[4n]] });
    expect(otherContext.executions).toBe(1);
    otherContext.close();
  });

  it("keeps failures, not timeouts", async () => {
    const file = join(root, "failures.sqlite");
    const first = new GoldCache(file);
    await first.get(CONCERT, "SELECT nope", async () => ({ ok: false, error: "no such column: nope", timedOut: false }));
    await first.get(CONCERT, "SELECT slow", async () => ({ ok: false, error: "TIMEOUT", timedOut: true }));
    first.close();
    const again = new GoldCache(file);
    expect(unpacked(await again.get(CONCERT, "SELECT nope", rowsOf([])))).toEqual({ ok: false, error: "no such column: nope", timedOut: false });
    expect(unpacked(await again.get(CONCERT, "SELECT slow", rowsOf([[1n]])))).toEqual({ ok: true, rows: [[1n]] });
    expect([again.diskHits, again.executions]).toEqual([1, 1]);
    again.close();
  });

  it("refuses a file that is not a gold cache, naming it", () => {
    const file = join(root, "garbage.sqlite");
    writeFileSync(file, "not a database, just text that is long enough to have a header".repeat(20));
    expect(() => new GoldCache(file)).toThrow(`${file}: cannot be opened as the gold cache`);
  });

  it("refuses a row whose payload was changed on disk, naming the file", async () => {
    const file = join(root, "damaged.sqlite");
    const first = new GoldCache(file);
    await first.get(CONCERT, "SELECT 1", rowsOf([[1n]]));
    first.close();
    const db = new Database(file);
    db.prepare("UPDATE gold_results SET payload = ?").run(serialize([[2n]]));
    db.close();
    const damaged = new GoldCache(file);
    const result = damaged.get(CONCERT, "SELECT 1", rowsOf([[1n]]));
    await expect(result).rejects.toThrow(InputFileError);
    await expect(result).rejects.toThrow(`${file}: the cached gold result`);
    await expect(result).rejects.toThrow("fails its row_hash check");
    damaged.close();
  });
});
