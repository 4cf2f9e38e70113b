/**
 * A follow-up study run end to end, the library's `runStudy` (`merit study run`; README "Write a
 * follow-up study"): the initial caches (from the bundled predictions, or the model), the grid into
 * RUNS/<dataset>/<method>-s<seed> (only the runs not yet complete; one grid per set of arm
 * conditions; `shard` runs streams i, i+n, ... and stops before the audit), the causal audit of every
 * run, then the report (buildReport) with the study's methods in Tables 1 and 3 and its comparisons in
 * Table 2. Rerunnable: a second run computes only what is missing.
 * @module
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { writeFileAtomic } from "../atomic-file.ts";
import { InputFileError, MeritError } from "../errors.ts";
import { auditLines, auditRunDir } from "../experiment/audit.ts";
import { loadConfig, type ExperimentConfig } from "../experiment/config.ts";
import { planStreams, runCheckedGrid, withGridSequences, type Stream } from "../experiment/grid.ts";
import { buildInitialCache, initialCacheLines } from "../experiment/initial-build.ts";
import { loadPluginSources } from "../experiment/plugin-sources.ts";
import { cacheRows, REPLAY_CACHE } from "../experiment/replay-cache.ts";
import type { Reporter } from "../experiment/reporter.ts";
import { LOCK_FILE } from "../experiment/run-lock.ts";
import { readRunJson } from "../experiment/run-dir.ts";
import { selectShard, type Shard } from "../experiment/shard.ts";
import { byConditions, checkStudyDatabases, isRunComplete, openStudy, studyDatabasesLine, studyModelsLine, studyReportLayout, STUDY_TIMING_FILE } from "../experiment/study-grid.ts";
import { datasetRunRoot, initialPredictions, orderResults, orderRunRoot, orderText, studyCallCache, studyConfig, studyOrders, studyPaths, type Study, type StudyPaths } from "../experiment/study.ts";
import type { PluginRecord } from "../plugin-import.ts";
import { buildReport, type ReportResult } from "./build-report.ts";

export interface StudyRunOptions {
  /** Run only this shard of the streams, and stop before the audit and the report. */
  shard?: Shard;
  /** The runs folder (default runs/studies/NAME). */
  runs?: string;
  /** The report's folder (default results/studies/NAME). */
  out?: string;
  /** The HTML explorer in the report (default true). */
  html?: boolean;
  /** The memory diagnostics in the report (`merit study run --diagnostics`; default false). */
  diagnostics?: boolean;
  /** Status lines, the initial cache's counter and the grid's progress. */
  reporter?: Reporter;
  /** Build the initial caches only, and stop (`merit study run --initial-only`). */
  initialOnly?: boolean;
}

export interface StudyRunResult {
  study: Study;
  /** Each dataset's run root, RUNS/<dataset>. */
  runRoots: string[];
  /** Model calls computed (not answered by the call cache) in this run. */
  computedCalls: number;
  /** Violations the causal audit found; null with a shard (no audit). */
  violations: number | null;
  /** The report over the paper's shuffled orders; null with a shard or --initial-only, or when the audit found a violation. */
  report: ReportResult | null;
  /** The report folder of each structured order (`orders`), beside the report. */
  orderReports: { order: string; out: string }[];
}

/** The tiny models' call cache starts as the committed replay cache, so the demo's calls are answered. */
function seedCallCache(study: Study, paths: StudyPaths, log: (line: string) => void): void {
  const cache = studyCallCache(paths);
  if (study.models.kind !== "tiny" || existsSync(cache) || !existsSync(REPLAY_CACHE)) return;
  try {
    // whole or not at all: a copy cut short by a full disk would leave a damaged cache the next run trusts
    writeFileAtomic(cache, readFileSync(REPLAY_CACHE));
  } catch (error) {
    const code = ((error as { cause?: NodeJS.ErrnoException }).cause ?? (error as NodeJS.ErrnoException))?.code;
    const full = code === "ENOSPC" || code === "EDQUOT";
    // the disk that is full is the runs folder's (the copy's target), never the committed source cache
    if (full) throw new InputFileError(cache, `no space left on the disk of the study's runs folder ${paths.runs} to copy the replay cache (${statSync(REPLAY_CACHE).size} bytes); nothing was written`, "free space there or pass --runs DIR on a disk with room, and run `merit study run` again (it continues where it stopped)", error);
    throw error;
  }
  log(`study: ${cache} starts as a copy of ${REPLAY_CACHE} (${cacheRows(cache)} stored calls of the tiny models)`);
}

/** Builds a dataset's initial cache when it is missing: from the study's `initial` (relative to the study file) or the bundled predictions, else with the model. */
async function ensureInitialCache(study: Study, file: string, dataset: string, config: ExperimentConfig, paths: StudyPaths, reporter: Reporter): Promise<void> {
  if (existsSync(config.initial_cache)) return;
  const log = reporter.log ?? (() => undefined);
  const configFile = join(paths.runs, "configs", `${dataset}.json`);
  const found = initialPredictions(study, dataset, file);
  const predictions = found === null ? null : shownPath(found);
  log(`study: initial cache of ${dataset} ${predictions ? `from ${predictions}` : "from the model (one greedy call per query)"} -> ${config.initial_cache}`);
  await loadPluginSources([], { configs: [configFile] }, log);
  const built = await buildInitialCache(loadConfig(configFile), { fromPredictions: predictions ?? undefined, data: { configFile }, reporter });
  for (const line of initialCacheLines(built)) log(line);
}

/** A path as the study's log shows it: relative to the working folder when inside it (no machine's absolute path), else as it is. */
function shownPath(path: string): string {
  const rel = relative(process.cwd(), resolve(path));
  return rel === "" ? "." : rel.startsWith("..") || isAbsolute(rel) ? path : rel.split(sep).join("/");
}

/** A finished run made with other plugin code is stale: refuse rather than report it. */
function checkFinishedPlugins(dir: string, plugins: readonly PluginRecord[]): void {
  const manifest = readRunJson(dir, "manifest", { fix: "delete the run directory to recompute it" }) as { plugins?: PluginRecord[] };
  const recorded = new Map((manifest.plugins ?? []).map((p) => [p.path, p.sha256]));
  for (const p of plugins) {
    const sha = recorded.get(p.path);
    if (sha !== undefined && sha !== p.sha256) throw new InputFileError(dir, `was run with another version of ${p.path} (sha256 ${sha.slice(0, 12)}…, now ${p.sha256.slice(0, 12)}…)`, "delete the run directory to recompute it with the plugin as it is now");
  }
}

/**
 * A run directory of the study that cannot be resumed (an unfinished run made with other inputs, a
 * damaged or foreign folder, a stale lock): the run layer's error advises `--out`, which `merit study
 * run` does not take (each run's folder is the study's). The advice becomes the study's: delete that
 * run's folder and run the study again (it computes only what is missing), or restore the inputs the
 * run started with to resume it. Other errors pass unchanged.
 */
export function studyRunDirError(error: unknown, streams: readonly Stream[], file: string): unknown {
  if (!(error instanceof MeritError) || !error.message.includes("--out")) return error;
  const dir = streams.map((s) => s.outDir).filter((d) => error.message.includes(d)).sort((a, b) => b.length - a.length)[0];
  if (dir === undefined) return error;
  const cut = error.message.lastIndexOf("; ");
  const problem = cut > 0 && error.message.slice(cut).includes("--out") ? error.message.slice(0, cut) : error.message.replace(/[;,]? *(or )?(choose|start|re-?run)[^;]*--out[^;]*/g, "");
  const fix = /lock|in use by/.test(problem)
    ? `wait for that process, or delete ${join(dir, LOCK_FILE)} if it is gone, then run \`merit study run ${file}\` again`
    : `this run of the study cannot be resumed: delete ${dir} and run \`merit study run ${file}\` again (it recomputes that run and keeps the finished ones), or restore the inputs the run started with to resume it`;
  return new MeritError(`${problem}; ${fix}`, { exitCode: error.exitCode, cause: error });
}

/** Runs the study of `file` (studies/NAME/study.ts): initial caches, grid, audit, report. */
export async function runStudy(file: string, options: StudyRunOptions = {}): Promise<StudyRunResult> {
  const reporter = options.reporter ?? {};
  const log = reporter.log ?? (() => undefined);
  const shard = options.shard;
  const { study, plugins } = await openStudy(file);
  const paths = studyPaths(study, { runs: options.runs, results: options.out });
  log(`study ${study.name}: ${studyModelsLine(study, studyConfig(study, study.datasets[0], paths))}`);
  seedCallCache(study, paths, log);
  const databases = studyDatabasesLine(study);
  if (databases !== "") log(`study ${study.name}: ${databases}`);
  await checkStudyDatabases(study, file, paths);
  const orders = studyOrders(study);
  if (orders.length > 1) log(`study ${study.name}: stream orders ${orders.map(orderText).join("; ")} (each structured order run and reported apart)`);
  const roots: string[] = [];
  let computed = 0;
  let seconds = 0;
  for (const dataset of study.datasets) {
    const config = studyConfig(study, dataset, paths);
    const configFile = join(paths.runs, "configs", `${dataset}.json`);
    mkdirSync(dirname(configFile), { recursive: true });
    // the saved config carries the study's query count, so `merit grid --config` on it plans and runs the study's streams
    writeFileSync(configFile, JSON.stringify(study.queries === null ? config : { ...config, limit: study.queries }, null, 2) + "\n");
    await ensureInitialCache(study, file, dataset, config, paths, reporter);
    roots.push(datasetRunRoot(paths, dataset));
    if (options.initialOnly === true) continue;
    for (const order of orders) {
      const root = orderRunRoot(paths, dataset, order.kind);
      const all = planStreams(study.methods, order.seeds, root);
      const streams = shard ? selectShard(all, shard) : all;
      const finished = streams.filter((s) => isRunComplete(s.outDir));
      for (const s of finished) checkFinishedPlugins(s.outDir, plugins);
      const missing: Stream[] = streams.filter((s) => !isRunComplete(s.outDir));
      const where = order.kind === "random" ? dataset : `${dataset}, order ${order.kind}`;
      log(`study: ${where}: ${streams.length} runs${shard ? ` (shard ${shard.index}/${shard.count} of ${all.length})` : ""}, ${finished.length} already complete, ${missing.length} to run`);
      if (missing.length === 0) continue;
      const before = cacheRows(config.call_cache);
      const started = Date.now();
      // One grid per set of conditions: a study's arms may run under another feedback regime or K.
      for (const group of byConditions(study, missing)) {
        const armConfig = studyConfig(study, dataset, paths, group[0].method, order.kind);
        try {
          await runCheckedGrid(withGridSequences(armConfig, group.length), group, { limit: study.queries, resume: true, plugins, reporter });
        } catch (error) {
          throw studyRunDirError(error, group, file);
        }
      }
      seconds += (Date.now() - started) / 1000;
      computed += cacheRows(config.call_cache) - before;
    }
  }
  if (options.initialOnly === true) {
    log(`study ${study.name}: the initial caches are built (${study.datasets.map((d) => join(paths.runs, "initial", `${d}.json`)).join(", ")}); run \`merit study run\` without --initial-only for the grid`);
    return { study, runRoots: roots, computedCalls: 0, violations: null, report: null, orderReports: [] };
  }
  if (computed > 0) writeFileSync(join(paths.runs, STUDY_TIMING_FILE), JSON.stringify({ seconds: Math.round(seconds * 10) / 10, computed_calls: computed }, null, 2) + "\n");
  if (shard) return { study, runRoots: roots, computedCalls: computed, violations: null, report: null, orderReports: [] };
  let violations = 0;
  let audited = 0;
  for (const dataset of study.datasets) {
    for (const order of orders) {
      for (const s of planStreams(study.methods, order.seeds, orderRunRoot(paths, dataset, order.kind))) {
        await loadPluginSources([], { runDirs: [s.outDir] }); // the run's dataset may be a plugin's
        const audit = await auditRunDir(s.outDir);
        if (audit.violations.length > 0) for (const l of auditLines(audit).slice(0, -1)) log(`audit ${s.outDir}: ${l}`);
        violations += audit.violations.length;
        audited++;
      }
    }
  }
  log(`study: causal audit of ${audited} runs: ${violations} violations`);
  if (violations > 0) {
    log(`study ${study.name}: the causal audit found ${violations} violations (listed above); the report is not written`);
    return { study, runRoots: roots, computedCalls: computed, violations, report: null, orderReports: [] };
  }
  const layout = { ...studyReportLayout(study), html: options.html ?? true, diagnostics: options.diagnostics === true, reporter };
  const report = await buildReport(roots, { out: paths.results, ...layout });
  // each structured order on its own: its runs pair only with each other (one order, one seed)
  const orderReports: { order: string; out: string }[] = [];
  for (const order of orders.filter((o) => o.kind !== "random")) {
    const out = orderResults(paths, order.kind);
    const dirs = study.datasets.flatMap((d) => planStreams(study.methods, order.seeds, orderRunRoot(paths, d, order.kind)).map((s) => s.outDir));
    await buildReport(dirs, { out, ...layout });
    orderReports.push({ order: order.kind, out });
    log(`study ${study.name}: the report over the ${order.kind} order is in ${out}`);
  }
  return { study, runRoots: roots, computedCalls: computed, violations, report, orderReports };
}
