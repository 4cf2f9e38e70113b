/**
 * Packed results (lib/oracle/executor.ts `ExecRows`, `samePacked`, `resultRows`; issue 22 §3, issue 30
 * §2): the SQL worker answers the oracle's statements with the v8 serialization of their rows, an
 * explicit `{ ok: true, packed }` result (no getter), and the oracle judges a prediction whose packed
 * bytes equal the gold's CORRECT without reading either's rows. Checked here: equal bytes always mean
 * `result_eq` is True (random rows of every value type, and the int/float and -0.0 cases that
 * quick_rej tells apart); with `rows: false` (what `evaluatePredictions` asks) such a verdict is made
 * without deserializing anything, and a verdict is plain data either way; different bytes fall back
 * to the comparison (equal rows in another order are still CORRECT); and the real sandbox answers
 * packed bytes that a fresh gold cache stores as they are, so a second prediction with the same rows
 * matches byte for byte.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serialize } from "node:v8";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { DatabaseFiles, Example } from "../../lib/data/types.ts";
import { spiderResultEq } from "../../lib/oracle/compare.ts";
import { resultRows, samePacked, type ExecRequest, type ExecResult, type SqlExecutor } from "../../lib/oracle/executor.ts";
import { GoldCache } from "../../lib/oracle/gold-cache.ts";
import { Oracle } from "../../lib/oracle/oracle.ts";
import { SqlSandbox } from "../../lib/oracle/sandbox.ts";
import type { Rows, SqlValue } from "../../lib/oracle/types.ts";
import { PyRandom } from "../../lib/random.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "merit-packed-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A packed result. */
const packed = (bytes: Uint8Array): ExecResult => ({ ok: true, packed: bytes });
/** Bytes that v8.deserialize refuses: a result packed with them must never be read. */
const UNREADABLE = Uint8Array.of(0xff, 0x0f, 0xff);

class ScriptedExecutor implements SqlExecutor {
  readonly engine = "scripted";
  readonly timeoutMs = 1000;
  readonly requests: ExecRequest[] = [];
  readonly answer: (request: ExecRequest) => ExecResult;
  constructor(answer: (request: ExecRequest) => ExecResult) {
    this.answer = answer;
  }
  async execute(request: ExecRequest): Promise<ExecResult> {
    this.requests.push(request);
    return this.answer(request);
  }
  async close(): Promise<void> {}
}

const db: DatabaseFiles = { dbId: "shop", canonicalPath: "/nowhere/shop.db", allPaths: ["/nowhere/shop.db"] };
const example = (goldSql: string): Example => ({ id: "0", sourceIndex: 0, dbId: "shop", question: "q", evidence: "", goldSql, difficulty: "unknown" });

describe("samePacked", () => {
  it("equal bytes mean result_eq is True, for random rows of every value type", () => {
    const random = new PyRandom(7);
    // factories, so that no two cells share an object (v8.serialize writes a repeated object as a reference)
    const values: Array<() => SqlValue> = [() => null, () => 0n, () => 1n, () => -3n, () => 10n, () => 2n ** 70n, () => 1, () => 1.5, () => 10.5, () => -0, () => 0, () => 1e16, () => "", () => "a", () => "10", () => "é", () => "Σ", () => "\u{1F600}", () => new Uint8Array([0, 255]), () => new Uint8Array([])];
    const table = (seed: number, size: number): Rows => {
      const r = new PyRandom(seed);
      const cols = 1 + r.randbelow(3);
      return Array.from({ length: r.randbelow(4) }, () => Array.from({ length: cols }, () => values[r.randbelow(size)]()));
    };
    let equalBytes = 0;
    for (let n = 0; n < 3000; n++) {
      // the same seed twice (equal rows, separate objects), or two seeds over a few values (sometimes equal)
      const seed = random.randbelow(1 << 30);
      const [x, y] = n % 2 === 0 ? [table(seed, values.length), table(seed, values.length)] : [table(seed, 4), table(random.randbelow(1 << 30), 4)];
      const a = { ok: true as const, packed: serialize(x) };
      const b = { ok: true as const, packed: serialize(y) };
      if (n % 2 === 0) expect(samePacked(a, b)).toBe(true);
      if (!samePacked(a, b)) continue;
      equalBytes += 1;
      for (const orderMatters of [false, true]) expect(spiderResultEq(resultRows(a), resultRows(b), orderMatters), JSON.stringify(x, (_, v) => (typeof v === "bigint" ? `${v}n` : v))).toBe(true);
    }
    expect(equalBytes).toBeGreaterThan(1500);
  });

  it("tells int from float and 0.0 from -0.0 (whose quick_rej sort keys differ), and needs both packed", () => {
    expect(samePacked(packed(serialize([[1n, "10"]])), packed(serialize([[1, "10"]])))).toBe(false);
    expect(samePacked(packed(serialize([[0, "a"]])), packed(serialize([[-0, "a"]])))).toBe(false);
    expect(samePacked({ ok: true, rows: [[1n]] }, { ok: true, rows: [[1n]] })).toBe(false); // not packed: the comparison decides
    expect(samePacked(packed(serialize([[1n]])), { ok: true, rows: [[1n]] })).toBe(false);
    expect(samePacked(packed(serialize([[1n]])), { ok: false, error: "x", timedOut: false })).toBe(false);
  });

  it("resultRows reads either form; a packed result is plain data (spread or compared, it shows its bytes)", () => {
    const rows: Rows = [[1n, "a"], [null, 2.5]];
    expect(resultRows({ ok: true, packed: serialize(rows) })).toEqual(rows);
    expect(resultRows({ ok: true, rows })).toBe(rows);
    const result = { ok: true as const, packed: UNREADABLE };
    expect({ ...result }).toEqual({ ok: true, packed: UNREADABLE });
    expect(Object.getOwnPropertyDescriptors(result)).not.toHaveProperty("rows");
    expect(() => resultRows(result)).toThrow(); // the bytes are read only through resultRows
  });
});

describe("the oracle with packed results", () => {
  it("judges equal bytes CORRECT without reading the rows when asked for none (rows: false, as merit eval asks)", async () => {
    const executor = new ScriptedExecutor(() => packed(UNREADABLE));
    const oracle = new Oracle({ dataset: "spider", databases: new Map([["shop", db]]), protocol: "strict", executor });
    const verdict = await oracle.score(example("SELECT n FROM t"), "SELECT n FROM t", { rows: false });
    // asked for rows, the oracle deserializes the prediction's bytes (these ones do not deserialize)
    await expect(oracle.score(example("SELECT n FROM t"), "SELECT n FROM t")).rejects.toThrow();
    await oracle.close();
    expect(executor.requests.every((r) => r.pack === true)).toBe(true); // gold and prediction asked packed
    expect(verdict).toEqual({ status: "CORRECT", dbError: null, predictedExecOk: true, oracleCorrect: true, dbExecutions: 1, predictedRows: null });
  });

  it("a verdict asked for rows holds them as plain data (no getter)", async () => {
    const executor = new ScriptedExecutor(() => packed(serialize([[1n], [2n]])));
    const oracle = new Oracle({ dataset: "spider", databases: new Map([["shop", db]]), protocol: "strict", executor });
    const verdict = await oracle.score(example("SELECT n FROM t"), "SELECT n FROM t");
    await oracle.close();
    expect(verdict).toEqual({ status: "CORRECT", dbError: null, predictedExecOk: true, oracleCorrect: true, dbExecutions: 1, predictedRows: [[1n], [2n]] });
    expect(Object.getOwnPropertyDescriptor(verdict, "predictedRows")).toHaveProperty("value");
  });

  it("compares the rows when the bytes differ: another order is CORRECT, other rows a mismatch", async () => {
    const rows: Record<string, Rows> = { gold: [[1n], [2n]], reordered: [[2n], [1n]], other: [[3n], [1n]] };
    const executor = new ScriptedExecutor((r) => packed(serialize(rows[r.sql.split(" ").at(-1)!] ?? rows.gold)));
    const oracle = new Oracle({ dataset: "spider", databases: new Map([["shop", db]]), protocol: "strict", executor });
    expect((await oracle.score(example("SELECT n FROM gold"), "SELECT n FROM reordered")).status).toBe("CORRECT");
    const mismatch = await oracle.score(example("SELECT n FROM gold"), "SELECT n FROM other");
    expect(mismatch.status).toBe("DENOTATION_MISMATCH");
    expect(mismatch.predictedRows).toEqual([[3n], [1n]]);
    await oracle.close();
  });
});

describe("the sandbox and the gold cache with packed results", () => {
  it("the sandbox answers packed rows, a fresh gold cache stores those bytes, and a reopened one matches them", async () => {
    const path = join(ROOT, "data/spider/database/concert_singer/concert_singer.sqlite");
    const sql = "SELECT name, age FROM singer ORDER BY age";
    const sandbox = new SqlSandbox({ jobs: 1, timeoutMs: 10_000 });
    try {
      const bytes = await sandbox.execute({ db: path, sql, textErrors: "ignore", pack: true });
      const plain = await sandbox.execute({ db: path, sql, textErrors: "ignore" });
      expect(bytes.ok && "packed" in bytes).toBe(true);
      expect(plain.ok && !("packed" in plain)).toBe(true);
      expect(bytes.ok && resultRows(bytes)).toEqual(plain.ok && "rows" in plain && plain.rows);

      const file = join(tmp, "gold.sqlite");
      const cold = new GoldCache(file);
      const first = await cold.get(path, sql, () => sandbox.execute({ db: path, sql, textErrors: "ignore", pack: true }));
      cold.close();
      const warm = new GoldCache(file);
      const again = await warm.get(path, sql, () => Promise.reject(new Error("executed again")));
      warm.close();
      expect(warm.diskHits).toBe(1);
      expect(samePacked(first, again)).toBe(true);
      expect(samePacked(again, await sandbox.execute({ db: path, sql, textErrors: "ignore", pack: true }))).toBe(true);
    } finally {
      await sandbox.close();
    }
  });
});
