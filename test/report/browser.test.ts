// SLOW: starts a real headless Chromium; its timeouts scale with the machine (test/helpers/budget.ts, README "Slow tests").
// Report stage in a real browser (lib/report, `merit report --html`): two real scripted runs on Spider
// (merit and iterative, test/helpers/scripted-scenario.ts: 609 repaired at step 3, 585 never, 109 at
// step 1, 426 and 278 initially correct) are reported with --html and the page is driven in Debian's
// chromium from file://. Screenshots go to $TMPDIR/merit-report-screenshots (kept for a human to look at).
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportCommand } from "../../lib/cli/report.ts";
import { writeHtmlReport } from "../../lib/report/html-report.ts";
import type { RetrievalLogRecord } from "../../lib/retrieval/retrieval-log.ts";
import { cacheFromChosenSql, loadSpider, SPIDER_DIR, spiderOracle, tempDir } from "../helpers/run-fixture.ts";
import { A, C, runScenario, scenarioInitialSql, scenarioScript } from "../helpers/scripted-scenario.ts";
import { CHROMIUM_MISSING, launchChromium, type Browser } from "./chromium.ts";
import { writeSyntheticGrid } from "./synthetic-runs.ts";
import { budget } from "../helpers/budget.ts";

const SHOTS = join(tmpdir(), "merit-report-screenshots");
let root: string;
let url: string;
let browser: Browser;
let page: Page;
let initialA: string;
let scriptA: readonly string[];

describe.skipIf(CHROMIUM_MISSING !== null)(`report page in chromium${CHROMIUM_MISSING ? ` — skipped: ${CHROMIUM_MISSING}` : ""}`, () => {
  beforeAll(async () => {
    root = tempDir("report-browser");
    const dataset = await loadSpider();
    const oracle = spiderOracle(dataset);
    try {
      const { cache, path: cachePath } = await cacheFromChosenSql(dataset, oracle, scenarioInitialSql(dataset), root);
      for (const method of ["merit", "iterative"]) await runScenario({ method, dataset, oracle, cache, cachePath, outDir: join(root, "runs", `${method}-s0`) });
    } finally {
      await oracle.close();
    }
    initialA = scenarioInitialSql(dataset).get(A)!;
    scriptA = scenarioScript(dataset).get(dataset.examples.find((e) => e.id === A)!.question)!;
    const sink = { out: () => {}, err: () => {} };
    await reportCommand.run([join(root, "runs"), "--out", join(root, "report"), "--html", "--no-figures", "--resamples", "50"], sink);
    url = pathToFileURL(join(root, "report", "index.html")).href;
    browser = await launchChromium();
    page = await browser.newPage();
    mkdirSync(SHOTS, { recursive: true });
  }, budget(120_000));

  afterAll(async () => {
    await browser?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  /** A fresh load (a goto that only changes the hash would not reload the page). */
  const open = async (hash = "") => {
    await page.goto("about:blank");
    await page.goto(url + hash);
    await page.waitForSelector("body[data-ready=true]");
  };
  const visibleRows = () => page.$$eval("#rows tbody tr", (trs: any[]) => trs.map((tr) => Array.from(tr.querySelectorAll("td")).map((td: any) => td.textContent ?? "")));
  const choose = (id: string, value: string) => page.selectOption(`#${id}`, value);

  it("loads from file:// with no console errors and shows the tables", async () => {
    await open();
    expect(await page.isVisible("#summary")).toBe(true);
    expect(await page.$$eval("#summary table", (t) => t.length)).toBeGreaterThanOrEqual(3);
    expect(await page.textContent("#summary")).toContain("table1");
    // the scripted test double made these runs: the header says so before anything else
    expect(await page.isVisible("header .banner")).toBe(true);
    expect(await page.textContent("header .banner")).toMatch(/^TEST MODEL — numbers are meaningless: scripted is a test double/);
    expect(await page.textContent("header .model")).toBe("Model: scripted (test-scripted, none); embedder hashed-bag (test-hashed-bag, none).");
    await page.screenshot({ path: join(SHOTS, "summary.png"), fullPage: true });
    expect(browser.errors).toEqual([]);
  });

  it("filters change the visible rows", async () => {
    await open("#queries");
    expect(await visibleRows()).toHaveLength(10); // 5 queries × 2 runs
    await choose("f-method", "merit");
    let rows = await visibleRows();
    expect(rows.map((r) => r[4])).toEqual(["merit", "merit", "merit", "merit", "merit"]);
    await choose("f-final", "CORRECT"); // all but 585, which is never repaired
    rows = await visibleRows();
    expect(rows.map((r) => r[1]).sort()).toEqual(["109", "278", "426", "609"]);
    await page.click("#f-reset");
    await choose("f-initial", "EXECUTION_ERROR"); // 609, 585 and 109 fail initially, under both methods
    expect((await visibleRows()).map((r) => r[1]).sort()).toEqual(["109", "109", "585", "585", "609", "609"]);
    await page.click("#f-reset");
    await choose("f-repaired-a", "merit");
    await choose("f-repaired-b", "iterative"); // the scripted answers are the same for both methods
    expect(await visibleRows()).toHaveLength(0);
    expect(await page.textContent("#row-count")).toBe("0 of 10 episodes match");
    await page.click("#f-reset");
    await page.fill("#f-text", A);
    await page.waitForFunction(`document.querySelectorAll("#rows tbody tr").length === 2`);
    expect(browser.errors).toEqual([]);
  });

  it("the episode view shows every attempt of query 609 under merit", async () => {
    await open("#queries");
    await page.fill("#f-text", A);
    await page.waitForFunction(`document.querySelectorAll("#rows tbody tr").length === 2`);
    await page.click("#rows tbody tr:nth-child(2) td:nth-child(2)"); // rows sort iterative before merit
    await page.waitForSelector("#episode h2");
    expect(await page.textContent("#episode h2")).toBe(`Episode: spider query ${A} · merit · seed 0`);
    const attempts = await page.$$eval("#episode table.attempts tbody tr", (trs: any[]) =>
      trs.map((tr) => ["pre.sql", ".badge", ".ftype", ".dberror"].map((sel) => tr.querySelector(sel)?.textContent ?? null)),
    );
    expect(attempts.map((r) => r[0])).toEqual([initialA, ...scriptA]);
    expect(attempts.map((r) => r[1])).toEqual(["EXECUTION_ERROR", "EXECUTION_ERROR", "EXECUTION_ERROR", "CORRECT"]);
    // no such column, no such table → Schema Linking; incomplete input → Syntax (METHOD.md §3).
    expect(attempts.map((r) => r[2])).toEqual(["failure type: Schema Linking", "failure type: Schema Linking", "failure type: Syntax", ""]);
    expect(attempts[0][3]).toMatch(/no such column/);
    expect(attempts[3][3]).toBeNull();
    expect(await page.$$eval("#episode table.tokens tbody tr", (t) => t.length)).toBe(4); // initial + 3 repairs
    expect(await page.textContent("#episode .question")).toContain("Question:");
    expect(browser.errors).toEqual([]);
  });

  it("shows the retrieved memories of query 109 with the scores of the retrieval log", async () => {
    const log = readFileSync(join(root, "runs", "merit-s0", "retrieval_log.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as RetrievalLogRecord);
    const record = log.find((r) => r.query_id === C && r.repair_iteration === 1)!;
    await open("#queries");
    await page.fill("#f-text", C);
    await page.waitForFunction(`document.querySelectorAll("#rows tbody tr").length === 2`);
    await page.click("#rows tbody tr:nth-child(2) td:nth-child(2)");
    await page.waitForSelector("#episode h2");
    expect(await page.textContent("#episode h2")).toBe(`Episode: spider query ${C} · merit · seed 0`);
    const hits = await page.$$eval("#episode table.hits tbody tr.hit", (trs: any[]) => trs.map((tr) => Array.from(tr.querySelectorAll("td")).map((td: any) => td.textContent ?? "")));
    expect(record.retrieved_entry_ids.length).toBeGreaterThan(0);
    expect(hits.map((h) => h[0])).toEqual(record.retrieved_polarities);
    expect(hits.map((h) => [h[2], h[3], h[5]])).toEqual(record.dense_scores.map((d, i) => [d.toFixed(3), record.bm25_scores[i].toFixed(3), record.final_scores[i].toFixed(3)]));
    expect(hits.map((h) => h[6].split(" · ")[0])).toEqual(record.source_stream_positions.map((p, i) => `${record.source_db_ids[i]} @ stream position ${p}`));
    // Side by side with iterative on the same query: two columns and a diff of the final SQL.
    await choose("compare", await page.$eval("#compare option:nth-child(2)", (o: any) => o.value));
    expect(await page.$$eval("#episode .episode-col", (c) => c.length)).toBe(2);
    expect(await page.textContent("#episode .final-diff h4")).toContain("merit · seed 0 (deleted) → iterative · seed 0 (inserted)");
    expect(await page.$$eval("#episode .final-diff ins, #episode .final-diff del", (x) => x.length)).toBe(0); // same final SQL
    await page.screenshot({ path: join(SHOTS, "episode-diff.png"), fullPage: true });
    expect(statSync(join(SHOTS, "episode-diff.png")).size).toBeGreaterThan(10_000);
    expect(browser.errors).toEqual([]);
  });

  it("rows are reachable and openable with the keyboard", async () => {
    await open("#queries");
    await page.focus("#rows tbody tr[tabindex='0']");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    await page.waitForSelector("#episode h2");
    expect(await page.evaluate("location.hash")).toBe("#episode-1");
    expect(await page.evaluate("document.activeElement.id")).toBe("episode");
    // End jumps to the last row of the page; every filter control has a label.
    await page.focus("#rows tbody tr[tabindex='0']");
    await page.keyboard.press("End");
    expect(await page.evaluate("document.activeElement.getAttribute('data-row')")).toBe("9");
    expect(await page.evaluate("[...document.querySelectorAll('select, input')].filter((e) => e.labels.length === 0).map((e) => e.id)")).toEqual([]);
    // A deep link opens the same episode on a fresh load.
    await open("#episode-1");
    await page.waitForSelector("#episode h2");
    expect(await page.isVisible("#queries")).toBe(true);
    expect(browser.errors).toEqual([]);
  });

  it("draws memory growth for the memory run only, with the counts of its memory files", async () => {
    const lines = (name: string) => readFileSync(join(root, "runs", "merit-s0", "memory", name), "utf8").split("\n").filter((l) => l.trim() !== "").length;
    const positive = lines("memory_positive.jsonl");
    const negative = lines("memory_negative.jsonl");
    await open("#memory");
    expect(await page.$$eval("#growth svg path", (p) => p.length)).toBe(1);
    const table = () => page.$$eval("#growth tbody tr", (rows: any[]) => rows.map((tr) => Array.from(tr.querySelectorAll("td")).map((td: any) => td.textContent)));
    expect(await table()).toEqual([["merit (merit-s0)", String(positive), String(negative), String(positive + negative)]]);
    await choose("m-polarity", "negative");
    expect(await page.getAttribute("#growth svg", "aria-label")).toMatch(/^Memory entries \(negative\) over the stream/);
    expect(await page.$$eval("#growth svg path", (p) => p.length)).toBe(1);
    expect(browser.errors).toEqual([]);
  });

  it("imported initial tokens show n/a, and a refused multi-statement attempt shows the user-facing reason", async () => {
    const dirs = writeSyntheticGrid({
      outDir: join(root, "na-runs"), dataset: "spider", dataDir: SPIDER_DIR, queries: [{ id: "0", db: "concert_singer" }, { id: "1", db: "concert_singer" }],
      methods: ["iterative"], seeds: [0], memoryMethods: new Set(), plan: (_m, _s, q) => (q === 0 ? ["CORRECT"] : ["EXECUTION_ERROR", "CORRECT"]),
    });
    const file = join(dirs[0], "trajectories.jsonl");
    const lines = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    for (const t of lines) t.db_errors = t.db_errors.map((e: string | null) => (e === null ? null : "Spider prediction is not one statement at source index 1"));
    writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    writeHtmlReport({ outDir: join(root, "na"), runDirs: dirs, tables: [], figures: [] });
    await page.goto(pathToFileURL(join(root, "na", "index.html")).href + "#queries");
    await page.waitForSelector("body[data-ready=true]");
    const rows = await visibleRows();
    // query 0: only the imported initial call, whose tokens the cache records as null; query 1 adds one repair call
    expect(rows.map((r) => [r[1], r[10]])).toEqual([["0", "n/a"], ["1", `${lines.find((t) => t.query_id === "1").accounting.total_tokens} + n/a`]]);
    await page.click("#rows tbody tr:nth-child(2) td:nth-child(2)");
    await page.waitForSelector("#episode table.tokens");
    const tokens = await page.$$eval("#episode table.tokens tbody tr", (trs: any[]) => trs.map((tr) => Array.from(tr.querySelectorAll("td")).map((td: any) => td.textContent)));
    expect(tokens[0]).toEqual(["0", "initial_cache", "n/a", "n/a", "n/a"]);
    expect(tokens[1][2]).not.toBe("n/a");
    expect(await page.textContent("#episode table.attempts .dberror")).toBe("Not executed: the SQL is not exactly one statement (several statements, or none), and Spider scores one statement per line.");
    expect(browser.errors).toEqual([]);
  });

  it("long SQL wraps instead of widening the page", async () => {
    const long = `SELECT ${"averyveryverylongcolumnname_".repeat(150)} FROM t`;
    const dirs = writeSyntheticGrid({
      outDir: join(root, "long-runs"), dataset: "spider", dataDir: SPIDER_DIR, queries: [{ id: "0", db: "concert_singer" }],
      methods: ["merit"], seeds: [0], memoryMethods: new Set(["merit"]), plan: () => ["EXECUTION_ERROR", "CORRECT"], sql: (_m, _s, _q, k) => (k === 0 ? long : "SELECT 1"),
    });
    writeHtmlReport({ outDir: join(root, "long"), runDirs: dirs, tables: [], figures: [] });
    await page.goto(pathToFileURL(join(root, "long", "index.html")).href + "#episode-0");
    await page.waitForSelector("#episode table.attempts");
    expect(await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")).toBe(true);
    await page.screenshot({ path: join(SHOTS, "long-sql.png"), fullPage: false });
    expect(browser.errors).toEqual([]);
  });
});
