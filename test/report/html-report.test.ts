// Report stage (lib/report/html-report.ts, report-index.ts, episode-chunks.ts, memory-growth.ts,
// assets/filters.js): a synthetic grid of 3 Spider queries × {iterative, merit} × seeds {0, 1} with
// hand-planned statuses; the written data files are read back in a VM and checked against answers
// worked out by hand from the plan below.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeHtmlReport, type HtmlReportSummary } from "../../lib/report/html-report.ts";
import type { EpisodeChunk, ReportIndex } from "../../lib/report/report-data.ts";
import { tableHtml } from "../../lib/report/page-html.ts";
import { REPO, SPIDER_DIR, tempDir } from "../helpers/run-fixture.ts";
import { writeSyntheticGrid, type Status } from "./synthetic-runs.ts";

const C = "CORRECT", EE = "EXECUTION_ERROR", DM = "DENOTATION_MISMATCH";
/**
 * q0 is initially correct everywhere. q1 starts EXECUTION_ERROR: merit repairs it at step 2 on both
 * seeds, iterative fails once and stops. q2 starts DENOTATION_MISMATCH: merit seed 1 and iterative
 * seed 0 repair it at step 1; merit seed 0 and iterative seed 1 do not.
 */
const PLAN: Record<string, Status[][]> = {
  "iterative/0": [[C], [EE, EE], [DM, C]],
  "iterative/1": [[C], [EE, EE], [DM, DM]],
  "merit/0": [[C], [EE, DM, C], [DM, DM]],
  "merit/1": [[C], [EE, DM, C], [DM, C]],
};

let root: string;
let summary: HtmlReportSummary;
let index: ReportIndex;
const chunks: EpisodeChunk[] = [];
let filter: { decodeRows: (i: unknown) => unknown; filterRows: (i: ReportIndex, f: Record<string, string>) => number[]; diffWords: (a: string, b: string) => { op: string; text: string }[] };

beforeAll(() => {
  root = tempDir("report-html");
  const dirs = writeSyntheticGrid({
    outDir: join(root, "runs"),
    dataset: "spider",
    dataDir: SPIDER_DIR,
    queries: [0, 1, 2].map((i) => ({ id: String(i), db: "concert_singer" })),
    methods: ["iterative", "merit"],
    seeds: [0, 1],
    memoryMethods: new Set(["merit"]),
    plan: (method, seed, i) => PLAN[`${method}/${seed}`][i] as Status[],
  });
  summary = writeHtmlReport({ outDir: join(root, "out"), runDirs: dirs, tables: [], figures: [], chunkQueries: 2 });
  const sandbox: { window: Record<string, unknown> } = { window: {} };
  sandbox.window.meritReportChunk = (n: number, payload: EpisodeChunk) => (chunks[n] = payload);
  runInNewContext(readFileSync(join(root, "out", "report-data", "index.js"), "utf8"), sandbox);
  for (let n = 0; n < 2; n++) runInNewContext(readFileSync(join(root, "out", "report-data", `episodes-00${n}.js`), "utf8"), sandbox);
  runInNewContext(readFileSync(join(REPO, "lib", "report", "assets", "filters.js"), "utf8"), sandbox);
  filter = sandbox.window.meritFilter as typeof filter;
  const decoded = filter.decodeRows(sandbox.window.MERIT_REPORT) as ReportIndex;
  index = { ...decoded, rows: Object.fromEntries(Object.entries(decoded.rows).map(([k, v]) => [k, Array.from(v as ArrayLike<number>)])) as unknown as ReportIndex["rows"] };
});

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

const rowsOf = (f: Record<string, string>) => Array.from(filter.filterRows(index, f));

describe("writeHtmlReport", () => {
  it("writes the page, its assets and one data file per chunk", () => {
    for (const f of ["index.html", "assets/viewer.js", "assets/filters.js", "assets/episode-view.js", "assets/viewer.css", "report-data/index.js", "report-data/episodes-000.js", "report-data/episodes-001.js"]) {
      expect(existsSync(join(root, "out", f)), f).toBe(true);
    }
    // 3 queries in chunks of 2 → 2 chunks; 3 queries × 4 runs = 12 episodes.
    expect(summary.chunks).toBe(2);
    expect(summary.episodes).toBe(12);
    expect(summary.warnings).toEqual([]);
    expect(readFileSync(join(root, "out", "index.html"), "utf8")).not.toMatch(/https?:\/\//);
  });

  it("indexes one row per episode, sorted by query, method, seed", () => {
    expect(index.runs.map((r) => `${r.method}-${r.seed}`)).toEqual(["iterative-0", "iterative-1", "merit-0", "merit-1"]);
    expect(index.queries.id).toEqual(["0", "1", "2"]);
    expect(index.queries.chunk).toEqual([0, 0, 1]);
    const dev = JSON.parse(readFileSync(join(SPIDER_DIR, "dev.json"), "utf8")) as { question: string }[];
    expect(index.queries.question).toEqual([dev[0].question, dev[1].question, dev[2].question]);
    expect(index.rows.query).toEqual([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]);
    expect(index.rows.run).toEqual([0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]);
    // Status codes: CORRECT 0, DENOTATION_MISMATCH 1, EXECUTION_ERROR 2.
    expect(index.rows.final).toEqual([0, 0, 0, 0, 2, 2, 0, 0, 0, 1, 1, 0]);
    expect(index.rows.steps).toEqual([0, 0, 0, 0, 1, 1, 2, 2, 1, 1, 1, 1]);
    // merit q1 = [EE, DM, C]: Schema Linking (bit 0) + Result Mismatch (bit 5) = 1 + 32 = 33.
    expect(index.rows.failureMask[6]).toBe(33);
    // Tokens of [EE, DM, C]: prompts 0 + 410 + 420, outputs 0 + 21 + 22 → 830 + 43 = 873.
    expect(index.rows.tokens[6]).toBe(873);
  });

  it("records memory growth from each entry's first stream position", () => {
    // Seed 0 positions are 0,1,2: q1 (repaired → positive) enters at 1, q2 (still wrong → negative) at 2.
    // Seed 1 positions are (i + 5) mod 3: q1 → 0 (positive), q2 → 1 (repaired → positive).
    expect(index.growth).toEqual([
      { run: 2, position: [1, 2], positive: [1, 1], negative: [0, 1] },
      { run: 3, position: [0, 1], positive: [1, 2], negative: [0, 0] },
    ]);
  });

  it("puts every episode in its query's chunk with the retrieved memories joined to their entries", () => {
    expect(chunks[0].episodes.map((e) => e.row)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(chunks[1].episodes.map((e) => e.row)).toEqual([8, 9, 10, 11]);
    expect(chunks[0].schemas["spider/concert_singer"]).toMatch(/^Database: concert_singer\n/);
    // merit seed 0, q2 (row 10) at position 2: memory holds q1's positive entry from position 1.
    const e = chunks[1].episodes.find((x) => x.row === 10)!;
    expect(e.statuses).toEqual([DM, DM]);
    expect(e.retrieval).toHaveLength(1);
    const hit = e.retrieval[0].hits[0];
    expect(e.retrieval[0].hits).toHaveLength(1);
    expect([hit.polarity, hit.errorType, hit.sourcePosition, hit.dense, hit.bm25]).toEqual(["positive", "Schema Linking", 1, 0.9, 0.5]);
    // final = 0.75 · 0.9 + 0.25 · 0.5 = 0.675 + 0.125 = 0.8.
    expect(hit.final).toBeCloseTo(0.8, 12);
    expect(chunks[1].entries[2][hit.id]).toMatchObject({ sourceQuery: "1", confirmations: 1, successes: 1, failures: 0 });
  });

  it("ships BIRD evidence with the episode chunk", () => {
    const birdDir = join(REPO, "data", "bird");
    const dev = JSON.parse(readFileSync(join(birdDir, "dev.json"), "utf8")) as { question_id: number; db_id: string; evidence: string }[];
    const dirs = writeSyntheticGrid({ outDir: join(root, "bird-runs"), dataset: "bird", dataDir: birdDir, queries: [{ id: String(dev[0].question_id), db: dev[0].db_id }], methods: ["iterative"], seeds: [0], memoryMethods: new Set(), plan: () => [C] });
    writeHtmlReport({ outDir: join(root, "out-bird"), runDirs: dirs, tables: [], figures: [] });
    let chunk: EpisodeChunk | undefined;
    runInNewContext(readFileSync(join(root, "out-bird", "report-data", "episodes-000.js"), "utf8"), { window: { meritReportChunk: (_n: number, p: EpisodeChunk) => (chunk = p) } });
    expect(dev[0].evidence).not.toBe("");
    expect(chunk!.evidence[0]).toBe(dev[0].evidence);
    expect(chunk!.schemas[`bird/${dev[0].db_id}`]).toMatch(new RegExp(`^Database: ${dev[0].db_id}\n`));
  });

  it("replaces its own stale chunk files and leaves other files alone", () => {
    const out = join(root, "rewrite");
    mkdirSync(join(out, "report-data"), { recursive: true });
    writeFileSync(join(out, "report-data", "episodes-099.js"), "stale");
    writeFileSync(join(out, "report-data", "notes.txt"), "mine");
    const dirs = writeSyntheticGrid({ outDir: join(root, "rewrite-runs"), dataset: "spider", dataDir: SPIDER_DIR, queries: [{ id: "0", db: "concert_singer" }], methods: ["iterative"], seeds: [0], memoryMethods: new Set(), plan: () => [C] });
    writeHtmlReport({ outDir: out, runDirs: dirs, tables: [], figures: [] });
    expect(readdirSync(join(out, "report-data")).sort()).toEqual(["episodes-000.js", "index.js", "notes.txt"]);
  });

  it("warns, and leaves questions empty, when a run's data_dir is missing", () => {
    const dirs = writeSyntheticGrid({ outDir: join(root, "nodata"), dataset: "spider", dataDir: join(root, "absent"), queries: [{ id: "0", db: "x" }], methods: ["iterative"], seeds: [0], memoryMethods: new Set(), plan: () => [C] });
    const s = writeHtmlReport({ outDir: join(root, "out-nodata"), runDirs: dirs, tables: [], figures: [] });
    expect(s.warnings).toHaveLength(1);
    expect(s.warnings[0]).toMatch(/dev\.json is missing/);
  });
});

describe("filters.js", () => {
  it("filters by method, seed, status and failure type", () => {
    expect(rowsOf({})).toHaveLength(12);
    expect(rowsOf({ method: "merit" })).toEqual([2, 3, 6, 7, 10, 11]);
    expect(rowsOf({ method: "merit", seed: "1" })).toEqual([3, 7, 11]);
    expect(rowsOf({ initial: EE })).toEqual([4, 5, 6, 7]);
    // Final CORRECT: all 4 of q0, merit's 2 of q1, iterative s0 and merit s1 of q2.
    expect(rowsOf({ final: C })).toEqual([0, 1, 2, 3, 6, 7, 8, 11]);
    expect(rowsOf({ failure: "Result Mismatch", failureScope: "initial" })).toEqual([8, 9, 10, 11]);
    // "any attempt" adds merit's q1 episodes, whose step 1 was a Result Mismatch.
    expect(rowsOf({ failure: "Result Mismatch", failureScope: "any" })).toEqual([6, 7, 8, 9, 10, 11]);
    expect(rowsOf({ text: "total number" })).toEqual([4, 5, 6, 7]);
    expect(rowsOf({ text: "2" })).toEqual([8, 9, 10, 11]);
  });

  it("keeps the (query, seed) pairs repaired by A but not by B", () => {
    // merit repaired q1 on seeds 0 and 1 (iterative did not) and q2 on seed 1 (iterative s1 did not).
    expect(rowsOf({ repairedA: "merit", repairedB: "iterative" })).toEqual([4, 5, 6, 7, 9, 11]);
    expect(rowsOf({ repairedA: "merit", repairedB: "iterative", method: "merit" })).toEqual([6, 7, 11]);
    // iterative repaired only q2 on seed 0, where merit ended wrong.
    expect(rowsOf({ repairedA: "iterative", repairedB: "merit" })).toEqual([8, 10]);
  });

  it("diffs SQL word by word", () => {
    expect(Array.from(filter.diffWords("SELECT a FROM t", "SELECT b FROM t")).map((p) => ({ ...p }))).toEqual([
      { op: "same", text: "SELECT " },
      { op: "del", text: "a" },
      { op: "ins", text: "b" },
      { op: "same", text: " FROM t" },
    ]);
  });
});

describe("tableHtml", () => {
  it("escapes cell text and marks the best value", () => {
    const html = tableHtml({ id: "t1", title: "A <b> & C", columns: ["Method", "EX"], align: ["l", "r"], rows: [[{ text: "<script>" }, { text: "1.0", bold: true }]], notes: [], data: [] });
    expect(html).toContain("A &lt;b&gt; &amp; C");
    expect(html).toContain('<th scope="row">&lt;script&gt;</th>');
    expect(html).toContain('<td class="num"><strong>1.0</strong></td>');
  });
});

describe("tableHtml: CSV-only columns and rules", () => {
  it("leaves CSV-only columns out and rules the row", () => {
    const html = tableHtml({ id: "t2", title: "T", columns: ["Method", "EX", "B"], align: ["l", "r", "r"], rows: [[{ text: "a" }, { text: "1" }, { text: "9" }], [{ text: "b" }, { text: "2" }, { text: "9" }]], notes: [], data: [], csvOnly: [2], rulesBefore: [1] });
    expect(html).toContain('<thead><tr><th scope="col" class="">Method</th><th scope="col" class="num">EX</th></tr></thead>');
    expect(html).toContain('<tr class="rule"><th scope="row">b</th><td class="num">2</td></tr>');
    expect(html).not.toContain(">9<");
  });
});

describe("imported initial predictions and refused statements", () => {
  it("rows record that the initial tokens are unknown (shown n/a), and chunks carry the user-facing reason", () => {
    // synthetic runs import their initial SQL (initial_tokens_known false, call 0 counted as 0 tokens)
    expect(index.rows.initialTokensKnown).toEqual(index.rows.run.map(() => 0));
    expect(chunks.flatMap((c) => c.episodes).every((e) => e.initialTokensKnown === false)).toBe(true);
    const dir = join(root, "runs", "iterative-s0");
    const file = join(dir, "trajectories.jsonl");
    const lines = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    for (const t of lines) t.db_errors = t.db_errors.map((e: string | null) => (e === null ? null : "Spider prediction is not one statement at source index 634"));
    const other = join(root, "runs-refused", "iterative-s0");
    mkdirSync(other, { recursive: true });
    writeFileSync(join(other, "config.json"), readFileSync(join(dir, "config.json")));
    writeFileSync(join(other, "trajectories.jsonl"), lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    writeHtmlReport({ outDir: join(root, "out-refused"), runDirs: [other], tables: [], figures: [] });
    const got: EpisodeChunk[] = [];
    runInNewContext(readFileSync(join(root, "out-refused", "report-data", "episodes-000.js"), "utf8"), { window: { meritReportChunk: (n: number, p: EpisodeChunk) => (got[n] = p) } });
    const errors = got[0].episodes.flatMap((e) => e.dbErrors).filter((e) => e !== null);
    expect(errors.length).toBeGreaterThan(0);
    for (const e of errors) expect(e).toBe("Not executed: the SQL is not exactly one statement (several statements, or none), and Spider scores one statement per line.");
  });
});

