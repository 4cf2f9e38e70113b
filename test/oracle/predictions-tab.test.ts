/**
 * Predictions in the official format (`SQL<TAB>db_id` per line, METHOD.md §1.1 / §11.6): every
 * protocol reads only the first tab field, so a tab-suffixed copy of a bundled prediction file scores
 * exactly like the file itself — verdict for verdict — under official (712/972), merit (709/972)
 * and strict.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadDataset } from "../../lib/data/index.ts";
import type { Dataset } from "../../lib/data/types.ts";
import { evaluatePredictions } from "../../lib/oracle/evaluate.ts";
import { firstTabField, readPredictions } from "../../lib/oracle/predictions.ts";
import type { SpiderProtocol } from "../../lib/oracle/protocol.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SOURCE = join(ROOT, "data/predictions/spider_dev__Deepseek-Coder-7B.sql");
const dir = mkdtempSync(join(tmpdir(), "merit-pred-tab-"));
const TABBED = join(dir, "deepseek-tabbed.sql");
const GOLD_CACHE = join(dir, "gold.sqlite");

describe("first tab field", () => {
  it("keeps the SQL of `SQL<TAB>db_id`, stripped, and leaves other lines alone", () => {
    expect(firstTabField("SELECT 1\tconcert_singer")).toBe("SELECT 1");
    expect(firstTabField("  SELECT a FROM t ORDER BY a\tdb\textra ")).toBe("SELECT a FROM t ORDER BY a");
    const file = join(dir, "mixed.sql");
    writeFileSync(file, "SELECT 1\tdb_a\r\nSELECT 2\nSELECT 3 LIMIT 1\tdb_b\n");
    const p = readPredictions(file, "utf8", 3);
    expect(p.lines).toEqual(["SELECT 1", "SELECT 2", "SELECT 3 LIMIT 1"]);
    expect(p.tabbedLines).toBe(2);
  });
});

describe("official-format predictions score as the plain file under every protocol", () => {
  let spider: Dataset;
  beforeAll(async () => {
    spider = await loadDataset({ name: "spider", dir: join(ROOT, "data/spider") });
    const lines = readFileSync(SOURCE, "utf8").split("\n");
    if (lines.at(-1) === "") lines.pop();
    expect(lines).toHaveLength(spider.examples.length);
    writeFileSync(TABBED, lines.map((l, i) => `${l}\t${spider.examples[i].dbId}`).join("\n") + "\n");
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const CASES: Array<[SpiderProtocol, number | null]> = [
    ["official", 712],
    ["merit", 709],
    ["strict", null],
  ];
  it.each(CASES)("%s", async (protocol, expected) => {
    const opts = { protocol, timeoutMs: 30_000, jobs: 2, goldCacheFile: GOLD_CACHE };
    const plain = await evaluatePredictions(spider, readPredictions(SOURCE, "utf8", spider.examples.length), opts);
    const tabbed = await evaluatePredictions(spider, readPredictions(TABBED, "utf8", spider.examples.length), opts);
    if (expected !== null) expect(plain.summary.correct).toBe(expected);
    expect(tabbed.summary.n).toBe(972);
    expect(tabbed.summary.correct).toBe(plain.summary.correct);
    expect(tabbed.summary.counts).toEqual(plain.summary.counts);
    expect(tabbed.verdicts.map((v) => [v.status, v.dbError])).toEqual(plain.verdicts.map((v) => [v.status, v.dbError]));
  });
});
