/**
 * Benchmark of the report stage (METHOD.md §8, §9; lib/report): size and load time of the static
 * HTML report for a small synthetic report (12 Spider queries × 2 methods × 2 seeds), for an existing
 * report folder passed with `--demo DIR` (e.g. results/demo, written by `merit report --html`), and
 * for a synthetic full grid (1,534 BIRD queries × 13 methods × 3 seeds). Load times are medians of
 * `--loads N` fresh page loads in Debian's chromium from file://; never asserted in tests.
 * Run: `node bench/report.ts [--demo results/demo] [--loads 3] [--queries 1534]`.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { PyRandom } from "../lib/random.ts";
import { writeHtmlReport } from "../lib/report/html-report.ts";
import { getMethod, methodNames } from "../lib/methods/index.ts";
import { CHROMIUM_MISSING, launchChromium, type Browser } from "../test/report/chromium.ts";
import { writeSyntheticGrid, type Status } from "../test/report/synthetic-runs.ts";

const REPO = new URL("..", import.meta.url);
const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const LOADS = Number(flag("loads") ?? 3);
const FULL_QUERIES = Number(flag("queries") ?? 1534);
const FAILS: Status[] = ["EXECUTION_ERROR", "DENOTATION_MISMATCH", "TIMEOUT"];

/** Seeded plan: a query is initially correct with p = 0.55 (shared by all runs); a failed one gets 1–7 repairs and ends correct with p = 0.3. */
function randomPlan(method: string, seed: number, i: number): Status[] {
  const shared = new PyRandom(i);
  const initial: Status = shared.random() < 0.55 ? "CORRECT" : FAILS[shared.randbelow(3)];
  if (initial === "CORRECT" || method === "zeroshot") return [initial];
  const rng = new PyRandom(i * 1000 + seed * 37 + method.length * 7919 + method.charCodeAt(0));
  const steps = 1 + rng.randbelow(7);
  const out: Status[] = [initial];
  for (let k = 1; k <= steps; k++) out.push(k === steps && rng.random() < 0.3 ? "CORRECT" : FAILS[rng.randbelow(3)]);
  return out;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mb = (bytes: number) => (bytes >= 1e6 ? `${(bytes / 1e6).toFixed(2)} MB` : `${(bytes / 1e3).toFixed(1)} kB`);

function dirBytes(dir: string): { total: number; index: number; largestChunk: number; chunks: number } {
  const data = join(dir, "report-data");
  const chunkSizes = readdirSync(data).filter((f) => f.startsWith("episodes-")).map((f) => statSync(join(data, f)).size);
  let total = 0;
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) e.isDirectory() ? walk(join(d, e.name)) : (total += statSync(join(d, e.name)).size);
  };
  walk(dir);
  return { total, index: statSync(join(data, "index.js")).size, largestChunk: Math.max(0, ...chunkSizes), chunks: chunkSizes.length };
}

/** Median ms of: fresh load to data-ready, one filter change, opening the first row's episode. */
async function timePage(browser: Browser, dir: string): Promise<{ load: number; filter: number; episode: number }> {
  const url = pathToFileURL(join(dir, "index.html")).href;
  const load: number[] = [];
  const filter: number[] = [];
  const episode: number[] = [];
  for (let i = 0; i < LOADS; i++) {
    const page = await browser.newPage();
    const t0 = performance.now();
    await page.goto(url + "#queries");
    await page.waitForSelector("body[data-ready=true]");
    load.push(performance.now() - t0);
    const method = await page.$eval("#f-method option:nth-child(2)", (o: any) => o.value);
    const t1 = performance.now();
    await page.selectOption("#f-method", method);
    await page.waitForFunction(`document.querySelector("#rows tbody tr td:nth-child(5)")?.textContent === ${JSON.stringify(method)}`);
    filter.push(performance.now() - t1);
    const t2 = performance.now();
    await page.click("#rows tbody tr:first-child td:nth-child(2)");
    await page.waitForSelector("#episode h2");
    episode.push(performance.now() - t2);
    await page.close();
  }
  return { load: median(load), filter: median(filter), episode: median(episode) };
}

async function measure(label: string, dir: string, browser: Browser | null, writeMs?: number): Promise<void> {
  const b = dirBytes(dir);
  const sizes = `total ${mb(b.total)}, report-data/index.js ${mb(b.index)}, ${b.chunks} chunks (largest ${mb(b.largestChunk)})`;
  const timing = browser ? await timePage(browser, dir) : null;
  const times = timing ? `load ${timing.load.toFixed(0)} ms, filter ${timing.filter.toFixed(0)} ms, open episode ${timing.episode.toFixed(0)} ms (median of ${LOADS})` : `no browser: ${CHROMIUM_MISSING}`;
  console.log(`${label}: ${sizes}${writeMs !== undefined ? `, written in ${(writeMs / 1000).toFixed(1)} s` : ""}; ${times}`);
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "merit-bench-report-"));
  const browser = CHROMIUM_MISSING === null ? await launchChromium() : null;
  try {
    const spider = JSON.parse(readFileSync(new URL("data/spider/dev.json", REPO), "utf8")) as { db_id: string }[];
    const smallDirs = writeSyntheticGrid({
      outDir: join(root, "small-runs"), dataset: "spider", dataDir: new URL("data/spider", REPO).pathname,
      queries: spider.slice(0, 12).map((e, i) => ({ id: String(i), db: e.db_id })),
      methods: ["iterative", "merit"], seeds: [0, 1], memoryMethods: new Set(["merit"]), plan: randomPlan,
    });
    let t = performance.now();
    writeHtmlReport({ outDir: join(root, "small"), runDirs: smallDirs, tables: [], figures: [] });
    await measure("small synthetic (12 queries × 2 methods × 2 seeds = 48 episodes)", join(root, "small"), browser, performance.now() - t);

    const demo = flag("demo");
    if (demo !== undefined) {
      if (existsSync(join(demo, "index.html")) && existsSync(join(demo, "report-data"))) await measure(`demo report ${demo}`, demo, browser);
      else console.log(`demo report ${demo}: no index.html and report-data/ there (run \`merit report ... --out ${demo} --html\` first)`);
    }

    const bird = JSON.parse(readFileSync(new URL("data/bird/dev.json", REPO), "utf8")) as { question_id: number; db_id: string }[];
    const methods = methodNames().filter((m) => m !== "zeroshot");
    t = performance.now();
    const fullDirs = writeSyntheticGrid({
      outDir: join(root, "full-runs"), dataset: "bird", dataDir: new URL("data/bird", REPO).pathname,
      queries: bird.slice(0, FULL_QUERIES).map((e) => ({ id: String(e.question_id), db: e.db_id })),
      methods, seeds: [0, 1, 2], memoryMethods: new Set(methods.filter((m) => getMethod(m).memory !== null)), plan: randomPlan,
    });
    console.log(`full grid: wrote ${fullDirs.length} synthetic runs in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    t = performance.now();
    const s = writeHtmlReport({ outDir: join(root, "full"), runDirs: fullDirs, tables: [], figures: [] });
    await measure(`synthetic full grid (${FULL_QUERIES} queries × ${methods.length} methods × 3 seeds = ${s.episodes} episodes)`, join(root, "full"), browser, performance.now() - t);
  } finally {
    await browser?.close();
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
