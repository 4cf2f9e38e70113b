/**
 * `merit study new|plan|run` (README "Write a follow-up study"): a follow-up study as one file,
 * studies/NAME/study.ts (lib/experiment/study.ts). `new` writes the folder from studies/template;
 * `plan` says, before any compute, what will run and what each comparison can detect
 * (lib/analysis/study-plan.ts); `run` builds the initial caches, runs the grid (only the streams not
 * yet complete; `--shard i/n`), audits every run and writes the report with the study's methods in
 * every table and its comparisons in Table 2. Rerunnable: a second `run` computes only what is missing.
 * @module
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { readReportInputs } from "../analysis/report-inputs.ts";
import type { RunSummary } from "../analysis/run-summary.ts";
import { readPaperNumbers } from "../analysis/paper-comparison.ts";
import { callRate, comparisonPowers, gridBudget, planLines, type DatasetStreams, type GridTiming, type PlannedCalls } from "../analysis/study-plan.ts";
import { planGrid } from "../experiment/grid-plan.ts";
import { paperVariances } from "../analysis/study-power.ts";
import { InputFileError, MeritError, UsageError } from "../errors.ts";
import type { ExperimentConfig } from "../experiment/config.ts";
import { loadConfigDataset } from "../experiment/database-set.ts";
import { planStreams, type Stream } from "../experiment/grid.ts";
import { readInitialCache } from "../experiment/initial-cache.ts";
import { readRunJson, runFile } from "../experiment/run-dir.ts";
import { parseShard, selectShard } from "../experiment/shard.ts";
import { buildStream } from "../experiment/stream.ts";
import {
  armConditions, checkStudyFiles, checkStudyNames, datasetRunRoot, initialPredictions, loadStudyFile, registerStudyArms, STUDY_NAME, studyCallCache, studyConditions, studyConfig, studyPaths, studyPluginFiles, subsetText,
  type Study, type StudyPaths,
} from "../experiment/study.ts";
import { loadPlugins, type PluginRecord } from "../methods/index.ts";
import { protocolIdOf } from "../oracle/oracle.ts";
import { numberFlag, parseFlags, type Command, type CommandIO } from "./command.ts";
import { cacheRows, REPLAY_CACHE } from "./demo-replay.ts";

const USAGE = `usage: merit study new NAME [--dir DIR]
       merit study plan FILE [--target PP] [--runs DIR]
       merit study run FILE [--shard i/n] [--runs DIR] [--out DIR] [--no-html]
  A follow-up study is one file, studies/NAME/study.ts: datasets, methods (the paper's and the
  study's own, registered by its plugin files), stream seeds, the reference method, the comparisons,
  how many queries, and the models (the tiny test models by default; realModels() or server({...})).
  new   writes DIR/NAME/ (default studies/NAME/) from studies/template: study.ts, my-method.ts (the
        study's method, a plugin) and study.test.ts (the study's test, whatever it lists; found by
        \`make test\`); refuses an existing folder
  plan  before any compute: runs, the most model calls and tokens, an estimated time (the rate this
        machine measured in the study's last run, else a stated assumption), and each comparison's
        MDE at α = 0.05 and 80% power for its queries and orders (variance from the study's finished
        runs when present, else from the paper's Table 2), with the queries and orders a target Δ
        needs (--target, percentage points, default 2)
  run   the initial caches (from the bundled predictions, or the model), the grid into
        RUNS/<dataset>/<method>-s<seed> (default RUNS = runs/studies/NAME; only runs not yet complete
        are computed; their configs in RUNS/configs/<dataset>.json serve \`merit grid --config\` too),
        the causal audit of every run (exit 1 on a violation, and no report), then the report in
        OUT (default results/studies/NAME) with the study's methods in Tables 1 and 3 and its
        comparisons in Table 2 (and, as every report, the learning curves). --shard i/n runs only streams i, i+n, ... and stops before the audit
        and the report (rerun without --shard once every shard is done). The tiny models' call
        cache starts as a copy of ${REPLAY_CACHE}.`;

const TEMPLATE = fileURLToPath(new URL("../../studies/template", import.meta.url));
const LIB = fileURLToPath(new URL("..", import.meta.url));
const DEFAULT_TARGET = 2;
/** Timing of the study's last grid on this machine, read by the next `plan` (runs/, git-ignored). */
const TIMING_FILE = "timing.json";

export const studyCommand: Command = {
  name: "study",
  summary: "a follow-up study in one file: new (from the template), plan (runs, calls, power), run (grid, audit, report)",
  usage: USAGE,
  async run(argv, io) {
    const [sub, ...rest] = argv;
    if (sub === "new") return newStudy(rest, io);
    if (sub === "plan") return planStudy(rest, io);
    if (sub === "run") return runStudy(rest, io);
    throw new UsageError(`${sub === undefined ? "missing sub-command" : `unknown sub-command "${sub}"`}: use merit study new|plan|run; see \`merit study --help\``);
  },
};

/** `merit study new NAME`: the template copied, its name and its imports of lib/ rewritten. */
function newStudy(argv: string[], io: CommandIO): number {
  const { values, positionals } = parseFlags(argv, { dir: { type: "string" } }, USAGE, true);
  if (positionals.length !== 1) throw new UsageError(`merit study new takes one NAME (e.g. merit study new schema-local); see \`merit study --help\``);
  const name = positionals[0];
  if (!STUDY_NAME.test(name)) throw new UsageError(`study name "${name}": use lower-case letters, digits, - and _, starting with a letter or digit (it names studies/NAME, runs/studies/NAME and results/studies/NAME)`);
  const target = join(values.dir ?? "studies", name);
  if (existsSync(target)) throw new MeritError(`${target} already exists; choose another NAME or delete the folder`);
  let lib = relative(resolve(target), LIB).split(sep).join("/");
  if (!lib.startsWith(".")) lib = `./${lib}`;
  mkdirSync(target, { recursive: true });
  const files = readdirSync(TEMPLATE).filter((f) => f.endsWith(".ts")).sort();
  for (const file of files) {
    const text = readFileSync(join(TEMPLATE, file), "utf8")
      .replaceAll(`"../../lib/`, `"${lib}/`)
      .replaceAll("studies/template/", `${target.split(sep).join("/")}/`)
      .replaceAll("results/studies/template", `results/studies/${name}`)
      .replace(`name: "template",`, `name: ${JSON.stringify(name)},`);
    writeFileSync(join(target, file), text);
  }
  // outside the kit's folder no package.json says "type": "module", and Node would have to guess the files' module format
  const outside = relative(dirname(LIB), resolve(target)).startsWith("..");
  if (outside) writeFileSync(join(target, "package.json"), JSON.stringify({ private: true, type: "module" }, null, 2) + "\n");
  const study = join(target, "study.ts").split(sep).join("/");
  io.out(`wrote ${[...files, ...(outside ? ["package.json"] : [])].map((f) => join(target, f).split(sep).join("/")).join(", ")}`);
  io.out(`next: merit study plan ${study}   then   merit study run ${study}`);
  return 0;
}

/** A study file with its plugins loaded and its names checked. */
async function openStudy(file: string): Promise<{ study: Study; plugins: PluginRecord[] }> {
  const study = await loadStudyFile(file);
  checkStudyFiles(study, file);
  const plugins = await loadPlugins(studyPluginFiles(study, file));
  registerStudyArms(study);
  checkStudyNames(study);
  return { study, plugins };
}

function studyFile(positionals: string[], sub: string): string {
  if (positionals.length !== 1) throw new UsageError(`merit study ${sub} takes one study FILE (studies/NAME/study.ts); see \`merit study --help\``);
  return positionals[0];
}

function modelsLine(study: Study, config: ExperimentConfig): string {
  if (study.models.kind === "tiny") return `models: the TINY RANDOM test models (${config.model.path}): real mechanics, SMOKE-SCALE AND MEANINGLESS numbers; switch to realModels() or server({...}) in the study file for real ones`;
  if (study.models.kind === "real") return `models: ${config.model.path} and ${config.embedder.path} (local GGUFs; \`make models\`)`;
  return `models: ${config.model.model_name} at ${config.model.base_urls.join(", ")}`;
}

/** Streams grouped by their arm's conditions (the study's own first), each group run as one grid with its config. */
function byConditions<T extends { method: string }>(study: Study, streams: readonly T[]): T[][] {
  const groups = new Map<string, T[]>();
  for (const s of streams) {
    const key = JSON.stringify(armConditions(study, s.method));
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  return [...groups.values()];
}

/** Whether a stream's run directory holds a finished run (metrics.json is written last). */
function isComplete(dir: string): boolean {
  return existsSync(runFile(dir, "metrics"));
}

/** What is known about each dataset's streams: exact from the initial cache when it exists. */
async function datasetStreams(study: Study, paths: StudyPaths): Promise<DatasetStreams[]> {
  const out: DatasetStreams[] = [];
  for (const dataset of study.datasets) {
    const config = studyConfig(study, dataset, paths);
    const { dataset: data } = await loadConfigDataset(config, {});
    if (existsSync(config.initial_cache)) {
      const cache = readInitialCache(config.initial_cache, data, protocolIdOf(config.dataset, config.protocol));
      const stream = buildStream(data, cache, 0, study.queries ?? undefined, config.subset);
      out.push({ dataset, queries: stream.length, failed: stream.filter((s) => s.initial.oracle_correct === false).length, exact: true, available: data.examples.length });
    } else {
      const queries = Math.min(study.queries ?? data.examples.length, data.examples.length);
      const correct = study.subset?.rule === "initially_failed" ? Math.min(study.subset.initially_correct, queries) : 0;
      out.push({ dataset, queries, failed: queries - correct, exact: false, available: data.examples.length });
    }
  }
  return out;
}

/**
 * The grid plan's calls (lib/experiment/grid-plan.ts) of each dataset whose initial cache exists: of
 * every stream with nothing cached, and of the streams not yet complete with the call cache's calls
 * subtracted. Datasets without an initial cache are left to the per-stream bound.
 */
async function plannedCalls(study: Study, streams: readonly DatasetStreams[], paths: StudyPaths, complete: (d: string, m: string, s: number) => boolean): Promise<Map<string, PlannedCalls>> {
  const planned = new Map<string, PlannedCalls>();
  for (const s of streams) {
    if (!s.exact) continue;
    const all = planStreams(study.methods, study.seeds, datasetRunRoot(paths, s.dataset));
    const left = all.filter((x) => !complete(s.dataset, x.method, x.seed));
    const limit = study.queries ?? null;
    let calls = 0;
    let callsLeft = 0;
    // Arms under other conditions (feedback regime, K) are planned with their own config.
    for (const group of byConditions(study, all)) {
      const config = studyConfig(study, s.dataset, paths, group[0].method);
      const open = group.filter((x) => left.includes(x));
      calls += (await planGrid(config, group, { limit, consultCache: false })).computedAtMost;
      callsLeft += open.length === 0 ? 0 : (await planGrid(config, open, { limit })).computedAtMost;
    }
    planned.set(s.dataset, { calls, callsLeft });
  }
  return planned;
}

/** The finished runs of the study (the pilot of `plan`), or none. */
function finishedRuns(study: Study, paths: StudyPaths): RunSummary[] {
  const dirs = planStreams(study.methods, study.seeds, "").flatMap((s) => study.datasets.map((d) => join(datasetRunRoot(paths, d), s.outDir))).filter(isComplete);
  return dirs.length === 0 ? [] : readReportInputs(dirs).runs;
}

/** The timing the study's last run wrote, or null. */
function readTiming(paths: StudyPaths): GridTiming | null {
  const file = join(paths.runs, TIMING_FILE);
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as GridTiming) : null;
}

async function planStudy(argv: string[], io: CommandIO): Promise<number> {
  const { values, positionals } = parseFlags(argv, { target: { type: "string" }, runs: { type: "string" } }, USAGE, true);
  const file = studyFile(positionals, "plan");
  const target = numberFlag(values.target, "target", DEFAULT_TARGET, { min: 0, exclusiveMin: true, max: 100 });
  const { study } = await openStudy(file);
  const paths = studyPaths(study, { runs: values.runs });
  const first = studyConfig(study, study.datasets[0], paths);
  io.out(`study ${study.name} (${file}): ${study.datasets.join(", ")}; methods ${study.methods.join(", ")}; stream orders ${study.seeds.join(", ")}; ${subsetText(study)}`);
  io.out(`comparisons (Δ = EX(a) − EX(b)): ${study.comparisons.map(([a, b]) => `${a} vs ${b}`).join(", ")}`);
  io.out(modelsLine(study, first));
  const streams = await datasetStreams(study, paths);
  const complete = (d: string, m: string, s: number) => isComplete(join(datasetRunRoot(paths, d), `${m}-s${s}`));
  const budgets = gridBudget(study, streams, complete, await plannedCalls(study, streams, paths, complete));
  const pilot = finishedRuns(study, paths);
  const calls = pilot.reduce((n, r) => n + r.metrics.accounting.llm_calls, 0);
  const tokens = pilot.reduce((n, r) => n + r.metrics.accounting.total_tokens, 0);
  const perCall = calls > 0 ? { tokens: tokens / calls, source: `${Math.round(tokens / calls)} per call, the mean of the study's finished runs` } : { tokens: first.decoding.max_input_tokens + first.decoding.max_output_tokens, source: `at most max_input_tokens ${first.decoding.max_input_tokens} + max_output_tokens ${first.decoding.max_output_tokens} per call` };
  const powers = comparisonPowers(study, streams, paperVariances(readPaperNumbers().numbers), target, pilot);
  for (const line of planLines(study, streams, budgets, callRate(readTiming(paths), study.models.kind), perCall, powers, target)) io.out(line);
  return 0;
}

/** The tiny models' call cache starts as the committed replay cache, so the demo's calls are answered. */
function seedCallCache(study: Study, paths: StudyPaths, io: CommandIO): void {
  const cache = studyCallCache(paths);
  if (study.models.kind !== "tiny" || existsSync(cache) || !existsSync(REPLAY_CACHE)) return;
  mkdirSync(dirname(cache), { recursive: true });
  copyFileSync(REPLAY_CACHE, cache);
  io.err(`study: ${cache} starts as a copy of ${REPLAY_CACHE} (${cacheRows(cache)} stored calls of the tiny models)`);
}

/** Builds a dataset's initial cache when it is missing: from the study's `initial` (relative to the study file) or the bundled predictions, else with the model. */
async function ensureInitialCache(study: Study, file: string, dataset: string, config: ExperimentConfig, paths: StudyPaths, io: CommandIO): Promise<void> {
  if (existsSync(config.initial_cache)) return;
  const configFile = join(paths.runs, "configs", `${dataset}.json`);
  const predictions = initialPredictions(study, dataset, file);
  io.err(`study: initial cache of ${dataset} ${predictions ? `from ${predictions}` : "from the model (one greedy call per query)"} -> ${config.initial_cache}`);
  const quiet = { out: (line: string) => io.err(line), err: (line: string) => io.err(line) };
  // Each phase's commands load when it runs, not when `merit study` starts (issue 22 §2).
  const { initialCommand } = await import("./initial.ts");
  const rc = await initialCommand.run(["--config", configFile, ...(predictions ? ["--from-pred", predictions] : [])], quiet);
  if (rc !== 0) throw new MeritError(`study ${study.name}: building the initial cache of ${dataset} failed (exit ${rc})`);
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

async function runStudy(argv: string[], io: CommandIO): Promise<number> {
  const { values, positionals } = parseFlags(argv, { shard: { type: "string" }, runs: { type: "string" }, out: { type: "string" }, "no-html": { type: "boolean" } }, USAGE, true);
  const file = studyFile(positionals, "run");
  const shard = values.shard === undefined ? undefined : parseShard(values.shard);
  const { study, plugins } = await openStudy(file);
  const paths = studyPaths(study, { runs: values.runs, results: values.out });
  io.err(`study ${study.name}: ${modelsLine(study, studyConfig(study, study.datasets[0], paths))}`);
  seedCallCache(study, paths, io);
  const roots: string[] = [];
  let computed = 0;
  let seconds = 0;
  for (const dataset of study.datasets) {
    const config = studyConfig(study, dataset, paths);
    const configFile = join(paths.runs, "configs", `${dataset}.json`);
    mkdirSync(dirname(configFile), { recursive: true });
    writeFileSync(configFile, JSON.stringify(config, null, 2) + "\n");
    await ensureInitialCache(study, file, dataset, config, paths, io);
    const root = datasetRunRoot(paths, dataset);
    roots.push(root);
    const all = planStreams(study.methods, study.seeds, root);
    const streams = shard ? selectShard(all, shard) : all;
    const finished = streams.filter((s) => isComplete(s.outDir));
    for (const s of finished) checkFinishedPlugins(s.outDir, plugins);
    const missing: Stream[] = streams.filter((s) => !isComplete(s.outDir));
    io.err(`study: ${dataset}: ${streams.length} runs${shard ? ` (shard ${shard.index}/${shard.count} of ${all.length})` : ""}, ${finished.length} already complete, ${missing.length} to run`);
    if (missing.length === 0) continue;
    const before = cacheRows(config.call_cache);
    const started = Date.now();
    const { applyOverrides, runGridWithProgress } = await import("./run.ts");
    // One grid per set of conditions: a study's arms may run under another feedback regime or K.
    for (const group of byConditions(study, missing)) {
      const armConfig = studyConfig(study, dataset, paths, group[0].method);
      await runGridWithProgress(applyOverrides(armConfig, {}, group.length), group, study.queries, true, io, {}, plugins);
    }
    seconds += (Date.now() - started) / 1000;
    computed += cacheRows(config.call_cache) - before;
  }
  if (computed > 0) writeFileSync(join(paths.runs, TIMING_FILE), JSON.stringify({ seconds: Math.round(seconds * 10) / 10, computed_calls: computed }, null, 2) + "\n");
  if (shard) {
    io.out(`study ${study.name}: shard ${shard.index}/${shard.count} done; once every shard is, unite the call caches (merit cache merge) and rerun without --shard for the audit and the report`);
    return 0;
  }
  let violations = 0;
  for (const root of roots) {
    for (const s of planStreams(study.methods, study.seeds, root)) {
      const lines: string[] = [];
      const { auditCommand } = await import("./audit.ts");
      const rc = await auditCommand.run([s.outDir], { out: (l) => lines.push(l), err: () => undefined });
      const n = Number(/^violations (\d+)$/.exec(lines.at(-1) ?? "")?.[1] ?? NaN);
      if (rc !== 0) for (const l of lines.slice(0, -1)) io.err(`audit ${s.outDir}: ${l}`);
      violations += Number.isNaN(n) ? 1 : n;
    }
  }
  io.err(`study: causal audit of ${roots.length * study.methods.length * study.seeds.length} runs: ${violations} violations`);
  if (violations > 0) {
    io.err(`study ${study.name}: the causal audit found ${violations} violations (listed above); the report is not written`);
    return 1;
  }
  const { reportCommand } = await import("./report.ts");
  return reportCommand.run(studyReportArgs(study, roots, paths.results, values["no-html"] === true), io);
}

/**
 * The `merit report` arguments of a finished study: its methods and comparisons, the conditions its
 * arms change, and the HTML report unless `noHtml` (the learning curves are in every report).
 */
export function studyReportArgs(study: Study, roots: readonly string[], out: string, noHtml: boolean): string[] {
  const conditions = studyConditions(study);
  return [
    ...roots,
    "--out", out,
    "--methods", study.methods.join(","),
    "--comparisons", study.comparisons.map((p) => p.join(":")).join(","),
    ...(conditions.length > 0 ? ["--conditions", conditions.join(",")] : []),
    ...(noHtml ? [] : ["--html"]),
  ];
}
