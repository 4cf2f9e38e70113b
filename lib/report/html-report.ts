/**
 * Report stage, output adapter (METHOD.md §8, §9): writes the static, offline HTML report —
 * OUT/index.html, OUT/assets/viewer.{js,css} and OUT/report-data/{index.js, episodes-NNN.js} — from run
 * directories plus the tables and figure files `merit report` already produced. Data files are
 * classic scripts (not fetch()ed JSON) so the page works from file:// without a server.
 * @module
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { Table } from "../analysis/table.ts";
import { writeFileAtomic } from "../atomic-file.ts";
import { encodeRows } from "./column-codec.ts";
import { buildChunks } from "./episode-chunks.ts";
import { pageHtml } from "./page-html.ts";
import { loadDatasetContext, type DatasetContext } from "./query-context.ts";
import { buildIndex } from "./report-index.ts";
import { readRun, type RunInput } from "./run-reader.ts";

const ASSETS = fileURLToPath(new URL("./assets/", import.meta.url));
/** Folder of the page's data scripts, named so that `--out .` never touches a project's own data/. */
const DATA_DIR = "report-data";
const DATA_FILE = /^(index|episodes-\d+)\.js$/;

export interface HtmlReportOptions {
  /** Output directory (the same as `merit report --out`); index.html is written here. */
  outDir: string;
  /** Run directories, each holding trajectories.jsonl. */
  runDirs: readonly string[];
  /** Tables to show on the summary tab. */
  tables: readonly Table[];
  /** Figure files relative to outDir (e.g. `figures/ex-per-method.svg`). */
  figures: readonly string[];
  /** Page title; default "MERIT report". */
  title?: string;
  /** Queries per episode chunk; default 8 (≈ 300 episodes a chunk on a 13-method, 3-seed grid). */
  chunkQueries?: number;
  /** Directory relative data_dir values are resolved against; default process.cwd(). */
  cwd?: string;
  /** The runs' model line and test-model banner (model-identity.ts), shown in the page header. */
  model?: { line: string; banner: string | null };
}

export interface HtmlReportSummary {
  /** Files written, relative to outDir. */
  files: string[];
  /** Total bytes of the files written. */
  bytes: number;
  episodes: number;
  chunks: number;
  warnings: string[];
}

/** Writes the report; deletes the chunk files of a previous report in OUT/report-data first, so no stale chunk survives. */
export function writeHtmlReport(opts: HtmlReportOptions): HtmlReportSummary {
  const cwd = opts.cwd ?? process.cwd();
  const parent = commonParent(opts.runDirs);
  const runs: RunInput[] = opts.runDirs.map((dir) => readRun(dir, relative(parent, dir).split(sep).join("/") || basename(dir)));
  const warnings: string[] = [];
  const contexts = new Map<string, DatasetContext | null>();
  for (const r of runs) {
    const dataset = r.trajectories[0]?.dataset;
    if (dataset === undefined || contexts.has(dataset)) continue;
    if (r.dataDir === null) {
      warnings.push(`${r.label}: config.json has no data_dir, so ${dataset} questions and schemas are not shown`);
      contexts.set(dataset, null);
      continue;
    }
    const ctx = loadDatasetContext(dataset, r.dataDir, cwd);
    if (typeof ctx === "string") warnings.push(ctx);
    contexts.set(dataset, typeof ctx === "string" ? null : ctx);
  }
  for (const r of runs) {
    if (r.trajectories.length === 0) warnings.push(`${r.label}: trajectories.jsonl is empty`);
    else if (r.memory !== null && r.retrievalLog === null) warnings.push(`${r.label}: has memory/ but no retrieval_log.jsonl, so retrieved memories are not shown`);
  }
  const nonEmpty = runs.filter((r) => r.trajectories.length > 0);
  const { index, episodes } = buildIndex(nonEmpty, {
    title: opts.title ?? "MERIT report",
    chunkQueries: opts.chunkQueries ?? 8,
    queryText: (dataset, id) => contexts.get(dataset)?.queries.get(id),
    warnings,
  });
  const q = index.queries;
  const chunks = buildChunks(nonEmpty, episodes, {
    chunkOfQuery: q.chunk,
    chunkCount: index.chunkCount,
    evidence: (i) => contexts.get(index.datasets[q.dataset[i]])?.queries.get(q.id[i])?.evidence ?? "",
    schema: (i) => {
      const dataset = index.datasets[q.dataset[i]];
      const text = contexts.get(dataset)?.schemas.get(q.db[i]);
      return text === undefined ? undefined : { key: `${dataset}/${q.db[i]}`, text };
    },
  });

  const files: string[] = [];
  // each file whole or not at all, like the report's tables and figures (lib/atomic-file.ts)
  const write = (rel: string, content: string | Uint8Array) => {
    writeFileAtomic(join(opts.outDir, rel), content);
    files.push(rel);
  };
  removeOldData(join(opts.outDir, DATA_DIR));
  write("index.html", pageHtml({ title: index.title, tables: opts.tables, figures: opts.figures, modelLine: opts.model?.line, banner: opts.model?.banner }));
  write(`${DATA_DIR}/index.js`, `window.MERIT_REPORT = ${jsonLiteral({ ...index, rows: encodeRows(index.rows) })};\n`);
  chunks.forEach((chunk, n) => write(chunkFile(n), `window.meritReportChunk(${n}, ${jsonLiteral(chunk)});\n`));
  for (const name of readdirSync(ASSETS).sort()) write(`assets/${name}`, readFileSync(join(ASSETS, name)));
  const bytes = files.reduce((s, f) => s + statSync(join(opts.outDir, f)).size, 0);
  return { files, bytes, episodes: episodes.length, chunks: chunks.length, warnings };
}

/**
 * `JSON.parse("…")` of the value: Chromium parses a JSON string several times faster than the same
 * data as an object literal (≈ 5 ms vs ≈ 100 ms for a 0.3 MB chunk, bench/report.ts).
 */
function jsonLiteral(value: unknown): string {
  return `JSON.parse(${JSON.stringify(JSON.stringify(value))})`;
}

/** `report-data/episodes-007.js`: the path the page loads for chunk n (viewer.js builds the same name). */
export function chunkFile(n: number): string {
  return `${DATA_DIR}/episodes-${String(n).padStart(3, "0")}.js`;
}

/** Deletes only the files this writer creates (index.js, episodes-NNN.js) from a previous report. */
function removeOldData(dir: string): void {
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) if (DATA_FILE.test(name)) rmSync(join(dir, name));
}

/** The deepest directory containing every one of `dirs` (the parent of a single dir). */
function commonParent(dirs: readonly string[]): string {
  if (dirs.length === 0) return ".";
  const parts = dirs.map((d) => dirname(join(d, "x")).split(sep));
  const first = dirs.length === 1 ? dirname(dirs[0]).split(sep) : parts[0];
  let n = first.length;
  for (const p of parts) {
    let i = 0;
    while (i < n && i < p.length && p[i] === first[i]) i++;
    n = i;
  }
  return first.slice(0, n).join(sep) || sep;
}
