/**
 * The demo, the library's `runDemo` (`make demo`, `merit demo`): the main job on the bundled data, end to end —
 *  1. EX of every bundled predictions file with the oracle (official protocol);
 *  2. the shared initial cache from the real DeepSeek-Coder-7B predictions (merit protocol);
 *  3. iterative, reflexion, dynamic_rag and merit over stream orders 0–2 on the same N queries, chosen
 *     by configs/demo.json's `subset` rule (mostly initially failed queries, lib/experiment/stream.ts),
 *     each seed visiting them in its own order;
 *  4. the causal audit of every run, then the report (tables, figures incl. the Figure 2 example
 *     episode, HTML explorer) in results/demo.
 * Quick by default: the tiny random test models (under a loud banner — their numbers mean nothing),
 * with every model call replayed from the committed call cache (demo-replay.ts), so `make demo`
 * rewrites results/demo byte for byte on any CPU (the tiny BGE's vectors come from the same file's
 * embedding cache where it holds them, else they are computed; README "Reproducibility" says what
 * that leaves open). `--fresh` recomputes from an empty cache;
 * `--full` runs the real GGUFs of models/ (`make models`) on 100 queries, after saying what it will
 * run and roughly how long it takes. `--peers` (`make demo-peers`) is a second demo: MERIT and the nine
 * peer memory methods on 100 of the queries with K = 3 on the simulated engine (lib/llm/engines/simulated.ts:
 * planted effects, deterministic from (seed, prompt), no model file and no call cache to replay), its
 * report in results/demo-peers (PEERS_DEMO below; notebook 09 reads it) under the SIMULATED ENGINE banner.
 * @module
 */
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { loadDataset, missingDatabases } from "../data/index.ts";
import type { Dataset, DatasetName } from "../data/types.ts";
import { MeritError } from "../errors.ts";
import { auditRun } from "../experiment/audit.ts";
import { loadConfig, type ExperimentConfig } from "../experiment/config.ts";
import { initialCacheFromPredictions, writeInitialCache, type InitialCache } from "../experiment/initial-cache.ts";
import { planStreams } from "../experiment/grid.ts";
import { quickConfig, TINY_CACHE } from "../experiment/quick-config.ts";
import { PEER_METHODS } from "../experiment/grid-plan.ts";
import { buildStream } from "../experiment/stream.ts";
import { runCheckedGrid } from "../experiment/grid.ts";
import { loadPluginSources } from "../experiment/plugin-sources.ts";
import type { Reporter } from "../experiment/reporter.ts";
import { defaultJobs } from "../experiment/services.ts";
import { episodeCallBound, familyBudgetSteps, getMethod, hookCallBound } from "../methods/index.ts";
import { registerArm } from "../experiment/study.ts";
import { evaluatePredictions, writeEvalOutputs } from "../oracle/evaluate.ts";
import { Oracle } from "../oracle/oracle.ts";
import { readPredictions } from "../oracle/predictions.ts";
import { cacheRows, stageReplayCache } from "../experiment/replay-cache.ts";
import { LONG_ITERATIVE_ARM, LONG_ITERATIVE_K } from "../analysis/prefix-runs.ts";
import { buildReport, reportLines, type ReportOptions, type ReportResult } from "./build-report.ts";
import { defaultExampleQuery } from "./example-episode.ts";
import { readRun } from "./run-reader.ts";
import { simulatedBackendOf } from "../experiment/services.ts";
import { simulatedCountRows, simulatedCounts } from "./demo-simulated.ts";
import { SIMULATED_HEADLINE } from "../llm/engines/simulated.ts";
import { DEFAULT_SIMULATION_FILE } from "../llm/engines/simulated-params.ts";

/** The committed call cache of the quick demo and the notebooks (tracked; never opened by SQLite). */
export { REPLAY_CACHE } from "../experiment/replay-cache.ts";
import { REPLAY_CACHE } from "../experiment/replay-cache.ts";
/** The quick demo's report (committed); --full writes its own, so the committed one stays as it is. */
export const REPORT_DIR = "results/demo";
export const FULL_REPORT_DIR = "results/demo-full";
export const QUICK_LIMIT = 16;
export const FULL_LIMIT = 100;
/**
 * Assumed seconds per model call of a 7B Q4 GGUF with ~1,000-token prompts: an order of magnitude
 * for the plan printed before `--full` starts, not a measurement (the progress line's ETA is).
 */
const ASSUMED_SECONDS_PER_CALL = { cpu: 20, gpu: 1 };
/** Minutes of the quick demo's fresh recompute on two CPU cores (2 min 20 s measured, README "Set up"). */
const FRESH_MINUTES = 6;

const LATIN1 = new Set(["spider_dev__Llama3-8B.sql"]);
const DEMO_METHODS = ["iterative", "reflexion", "dynamic_rag", "merit"];

/** The report options a demo profile sets. */
type DemoReportOptions = Pick<ReportOptions, "allMethods" | "peers" | "diagnostics" | "html" | "conditions">;

/** The `merit report` flags of a profile's report options. */
function reportFlagsOf(o: DemoReportOptions): string[] {
  return [
    ...(o.allMethods ? ["--all-methods"] : []),
    ...(o.peers ? ["--peers", o.peers.join(",")] : []),
    ...(o.conditions ? ["--conditions", o.conditions.join(",")] : []),
    ...(o.diagnostics ? ["--diagnostics"] : []),
    ...(o.html ? ["--html"] : []),
  ];
}

/**
 * The equal-budget control a demo runs beside its methods (METHOD.md §13, "Budget-matched control"):
 * `method` as the arm `arm`, with K = the config's K plus the most extra calls one episode of any of
 * `budgetOf` declares — what `make reproduce PEERS=1` runs as `merit grid --arm`.
 */
export interface DemoControl {
  arm: string;
  method: string;
  budgetOf: readonly string[];
}

/** The control's K on `config` (budgetMatchedSteps of its most expensive method). */
export function controlSteps(control: DemoControl, config: Pick<ExperimentConfig, "max_repair_steps">): number {
  return familyBudgetSteps(control.budgetOf, config.max_repair_steps);
}

const PEERS_CONTROL: DemoControl = { arm: "iterative_budget", method: "iterative", budgetOf: PEER_METHODS };

/**
 * The long run of a memoryless method a demo runs beside its methods (METHOD.md §13.8, "Token-matched
 * Iterative"): `method` as the arm `arm` at K = `k`; the report reads it at every K′ ≤ k (the shorter
 * runs it holds as prefixes) for the token-matched comparison — what `make reproduce PEERS=1` runs as
 * `merit grid --arm iterative_long --max-repair-steps 15`.
 */
export interface DemoLongRun {
  arm: string;
  method: string;
  k: number;
}

const PEERS_LONG_RUN: DemoLongRun = { arm: LONG_ITERATIVE_ARM, method: "iterative", k: LONG_ITERATIVE_K };

/** What one replayed demo runs and where it writes: the main demo, or the peers demo (`--peers`). */
export interface DemoProfile {
  methods: readonly string[];
  /** Default config file (its models are swapped for the tiny ones unless --full). */
  configFile: string;
  /** Folder of the runs (`<root>/tiny`), the initial cache and the working call cache; --fresh deletes it. */
  runsDir: string;
  /** The quick demo's working call cache (git-ignored) and its committed replay copy (null: none, the simulated engine needs no replay). */
  workingCache: string;
  replayCache: string | null;
  reportDir: string;
  quickLimit: number;
  /** Report options beyond the reference and the example (lib/report/build-report.ts). */
  report: DemoReportOptions;
  /** The same as `merit report` flags. */
  reportFlags: readonly string[];
  /** The equal-budget control run beside the methods (its own K), if any. */
  control?: DemoControl;
  /** The long Iterative run beside the methods (its own K), read at every K′ by the report, if any. */
  longRun?: DemoLongRun;
}

export const MAIN_DEMO: DemoProfile = {
  methods: DEMO_METHODS,
  configFile: "configs/demo.json",
  runsDir: "runs/demo",
  workingCache: TINY_CACHE,
  replayCache: REPLAY_CACHE,
  reportDir: REPORT_DIR,
  quickLimit: QUICK_LIMIT,
  report: { html: true },
  reportFlags: reportFlagsOf({ html: true }),
};

/**
 * `merit demo --peers` (`make demo-peers`; issue "The peers on the same stream" §3, issue 38 §2): MERIT
 * and the nine peer memory methods (METHOD.md §13) over stream orders 0-2 on 100 of the demo's queries
 * (90 initially failed, 10 initially correct) with K = 3 (configs/demo-peers.json), and the equal-budget
 * control (iterative_budget: Iterative with K = 3 + the most extra calls a peer declares), on the
 * simulated engine (configs/simulated-engine.json: its planted effects), one long Iterative run
 * (iterative_long, K = 15: the report reads it at every K′ ≤ 15 for the token-matched comparison), and
 * the report with the peers table (the control among its rows, the token-matched columns), the
 * token-matched and Pareto figures, learning curves and memory diagnostics. The
 * engine answers every call from (seed, prompt) in microseconds, so nothing is replayed: the working
 * call cache is emptied first and results/demo-peers is rewritten byte for byte on any machine.
 */
export const PEERS_DEMO: DemoProfile = {
  methods: ["merit", ...PEER_METHODS],
  configFile: "configs/demo-peers.json",
  runsDir: "runs/demo-peers",
  workingCache: "runs/demo-peers/llm-call-cache-simulated.sqlite",
  replayCache: null,
  reportDir: "results/demo-peers",
  quickLimit: 100,
  report: { allMethods: true, peers: [...PEER_METHODS, PEERS_CONTROL.arm], conditions: ["max_repair_steps"], diagnostics: true },
  reportFlags: reportFlagsOf({ allMethods: true, peers: [...PEER_METHODS, PEERS_CONTROL.arm], conditions: ["max_repair_steps"], diagnostics: true }),
  control: PEERS_CONTROL,
  longRun: PEERS_LONG_RUN,
};

/** The bundled predictions files (data/predictions/*.sql), sorted. */
function bundledPredictionFiles(): string[] {
  return readdirSync("data/predictions").filter((f) => f.endsWith(".sql")).sort();
}

/** Dataset of a bundled predictions file: `bird_…` is BIRD, every other file Spider. */
function datasetOfFile(file: string): DatasetName {
  return file.startsWith("bird_") ? "bird" : "spider";
}

/** Heading of step 1, naming every dataset the bundled files cover with its official protocol. */
export function bundledHeading(files: readonly string[]): string {
  const names = { spider: "Spider dev, official test-suite protocol", bird: "BIRD dev, official BIRD protocol" } as const;
  const datasets = (["spider", "bird"] as const).filter((d) => files.some((f) => datasetOfFile(f) === d));
  return `== 1. Execution accuracy of the bundled real predictions (${datasets.map((d) => names[d]).join("; ")})`;
}

async function scoreBundledPredictions(print: (line: string) => void): Promise<string[][]> {
  const files = bundledPredictionFiles();
  const datasets = new Map<DatasetName, Dataset>();
  const rows: string[][] = [];
  for (const file of files) {
    const name = datasetOfFile(file);
    if (!datasets.has(name)) datasets.set(name, await loadDataset({ name, dir: join("data", name) }));
    const data = datasets.get(name)!;
    if (data.databases.size === 0) {
      rows.push([file, name, "-", "-", "-", "-", `no ${name} databases (make data-${name})`]);
      continue;
    }
    const missing = missingDatabases(data).reduce((s, m) => s + m.examples, 0);
    const predictions = readPredictions(join("data/predictions", file), LATIN1.has(file) ? "latin1" : "utf8", data.examples.length);
    const result = await evaluatePredictions(data, predictions, { protocol: "official", timeoutMs: 30_000, jobs: defaultJobs() });
    writeEvalOutputs(join("runs/demo/eval", file.replace(/\.sql$/, "")), data, result);
    const s = result.summary;
    rows.push([file, name, String(s.n), String(s.correct), s.ex.toFixed(2), String(s.counts.EXECUTION_ERROR), missing ? `${missing} NO_DATABASE` : ""]);
  }
  printTable(print, ["predictions", "dataset", "n", "correct", "EX %", "exec errors", "note"], rows);
  return rows;
}

function printTable(print: (line: string) => void, header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const fmt = (r: string[]) => "| " + r.map((c, i) => c.padEnd(widths[i])).join(" | ") + " |";
  print(fmt(header));
  print("|" + widths.map((w) => "-".repeat(w + 2)).join("|") + "|");
  for (const r of rows) print(fmt(r));
}

function simulatedBanner(config: ExperimentConfig, log: (line: string) => void): void {
  const banner = "!".repeat(100);
  log(banner);
  log(`!!  ${SIMULATED_HEADLINE}.`);
  log(`!!  Every model call is answered by the simulated engine (${config.model.simulation ?? DEFAULT_SIMULATION_FILE}): a response model`);
  log(`!!  whose effects were PLANTED (docs/METHOD.md "Simulated engine"). The report shows what a study looks like when`);
  log(`!!  a method works; it measures nothing about any model.`);
  log(banner);
}

function tinyBanner(realModel: string, log: (line: string) => void): void {
  const banner = "!".repeat(100);
  log(banner);
  log(`!!  QUICK DEMO with the TINY RANDOM test models: their output is gibberish, so every repair fails and`);
  log(`!!  the numbers below are SMOKE-SCALE AND MEANINGLESS. They show the mechanics only.`);
  log(
    existsSync(realModel)
      ? `!!  ${realModel} is present: \`make demo-full\` (merit demo --full) runs the demo with it.`
      : `!!  For real numbers: \`make models\` (model-hub access), then \`make demo-full\` or \`make reproduce\`.`,
  );
  log(banner);
}

export interface DemoPlanInput {
  full: boolean;
  /** The demo's methods and replay file (default: the main demo). */
  profile?: DemoProfile;
  limit: number;
  config: ExperimentConfig;
  /** Rows of the committed replay cache staged for this run; null = none (fresh, full, or absent). */
  replayRows: number | null;
}

/** Most initially failed queries the subset rule can select from `limit` (lib/experiment/stream.ts). */
function maxFailed(config: ExperimentConfig, limit: number): number {
  return config.subset?.rule === "initially_failed" ? limit - Math.min(config.subset.initially_correct, limit) : limit;
}

/**
 * What the demo will run, printed before it starts: models, queries, streams, the most model calls
 * it can make (`episodeCallBound` per initially failed query and stream: K repairs; reflexion also
 * reflects after the initial failure and after each failed repair, 2K + 1 calls)
 * and, for --full, what that costs at the assumed seconds per call.
 */
export function demoPlan({ full, limit, config, replayRows, profile = MAIN_DEMO }: DemoPlanInput): string[] {
  const k = config.max_repair_steps;
  const failed = maxFailed(config, limit);
  const methods = profile.methods;
  const streams = methods.length * 3;
  // Every stream counted in full (the grid plan's per-episode bound; `merit grid --plan` counts repeats
  // once), with the peers' declared hook calls (judge, distill, curate, ...) of every episode they may run in.
  const correct = Math.min(limit - failed, limit);
  const maxCalls =
    3 *
    methods.reduce((n, m) => {
      const spec = getMethod(m);
      return n + failed * (episodeCallBound(spec, k) + hookCallBound(spec, k)) + correct * hookCallBound(spec, k, { initiallyAccepted: true, finallyAccepted: true });
    }, 0);
  const rule = config.subset?.rule === "initially_failed" ? `up to ${failed} initially failed + ${limit - failed} initially correct queries (config subset rule initially_failed)` : `the first ${limit} queries of the seed-0 stream`;
  const control = profile.control;
  const controlK = control === undefined ? 0 : controlSteps(control, config);
  const controlCalls = control === undefined ? 0 : 3 * failed * episodeCallBound(getMethod(control.method), controlK);
  const longRun = profile.longRun;
  const longCalls = longRun === undefined ? 0 : 3 * failed * episodeCallBound(getMethod(longRun.method), longRun.k);
  const simulated = config.model.backend === "simulated";
  const lines = [
    simulated ? `the simulated engine (${config.model.simulation ?? DEFAULT_SIMULATION_FILE}), embedder ${config.embedder.backend === "simulated" ? "its hashed bag of words" : config.embedder.path}` : `model ${config.model.path}, embedder ${config.embedder.path}`,
    `${methods.join(", ")} x stream orders 0,1,2 (${streams} runs) on ${rule}, K = ${k}` +
      (control === undefined ? "" : `, and the equal-budget control ${control.arm} (${control.method} with K = ${controlK}, 3 runs)`) +
      (longRun === undefined ? "" : `, and the long run ${longRun.arm} (${longRun.method} with K = ${longRun.k}, 3 runs, read at every K′ ≤ ${longRun.k})`) +
      `: at most ${(maxCalls + controlCalls + longCalls).toLocaleString("en-US")} model calls`,
  ];
  if (full) {
    const hours = (s: number) => (maxCalls * s) / 3600;
    lines.push(
      `estimated time: up to ~${hours(ASSUMED_SECONDS_PER_CALL.cpu).toFixed(0)} h on a CPU, ~${hours(ASSUMED_SECONDS_PER_CALL.gpu).toFixed(1)} h on one GPU ` +
        `(assuming ${ASSUMED_SECONDS_PER_CALL.cpu} s / ${ASSUMED_SECONDS_PER_CALL.gpu} s per call, not measured; memoryless methods repeat across seeds, so the call cache answers many: the progress line gives the real ETA); ` +
        `interrupt with Ctrl-C, rerun to continue from the call cache`,
    );
  } else if (simulated) {
    lines.push(`simulated: every call answered by the response model from (seed, prompt), nothing replayed; the oracle and the report take the time`);
  } else if (replayRows !== null) {
    lines.push(`replay: ${replayRows} stored model calls from ${profile.replayCache} (copied to ${profile.workingCache}); no model call should be computed (the oracle and the report take the time)`);
  } else {
    lines.push(`fresh: every model call computed into an empty ${profile.workingCache}${profile === MAIN_DEMO ? `, ~${FRESH_MINUTES} min on 2 CPU cores` : ""}`);
  }
  return lines;
}

export interface DemoOptions {
  /** The peers demo (`make demo-peers`) instead of the main demo. */
  peers?: boolean;
  /** The real GGUFs of models/ on FULL_LIMIT queries, its runs in runs/demo/qwen and its report in results/demo-full. */
  full?: boolean;
  /** Delete the demo's runs folder first and compute every model call into an empty call cache. */
  fresh?: boolean;
  /** Queries per stream (default: the profile's quick limit, or FULL_LIMIT with `full`). */
  limit?: number;
  /** Config file (default: the profile's, with its models swapped for the tiny ones unless `full`). */
  config?: string;
  /** Only score the bundled predictions (step 1). */
  skipRuns?: boolean;
  /** Plugin files to load besides the config's `plugins`. */
  plugins?: readonly string[];
  /** The demo's narrative: the plan, each step's heading and table, and the report's tables (`merit demo` prints it on stdout). */
  print?: (line: string) => void;
  /** Status lines, warnings, the tiny-model banner and the grid's progress. */
  reporter?: Reporter;
}

/** One run of the demo's grid, as step 3's table shows it. */
export interface DemoRun {
  method: string;
  seed: number;
  outDir: string;
  total: number;
  successAt1: number;
  finalAccuracy: number;
  repaired: number;
  steps: number;
  llmCalls: number;
  auditViolations: number;
}

export interface DemoResult {
  /** Step 1's rows (predictions file, dataset, n, correct, EX %, exec errors, note); [] for the peers demo. */
  predictions: string[][];
  /** Step 2's initial cache file and its EX; null with `skipRuns`. */
  initial: { file: string; correct: number; scored: number; cacheHash: string } | null;
  /** Step 3's runs, in stream order. */
  runs: DemoRun[];
  /** Model calls computed on this machine although the replay cache was staged (0: an exact replay). */
  computedBeyondReplay: number;
  /** Step 4's report; null with `skipRuns`. */
  report: ReportResult | null;
}

/**
 * The demo (`make demo`, `make demo-peers`, `merit demo`): the bundled predictions' EX, the shared
 * initial cache, the profile's methods over stream orders 0-2, the causal audit of every run, and the
 * report in the profile's folder.
 */
export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
  const print = options.print ?? (() => undefined);
  const reporter = options.reporter ?? {};
  const log = reporter.log ?? (() => undefined);
  const profile = options.peers ? PEERS_DEMO : MAIN_DEMO;
  const full = options.full ?? false;
  const configFile = options.config ?? profile.configFile;
  const plugins = await loadPluginSources(options.plugins ?? [], { configs: [configFile] }); // first: a plugin may register the config's dataset
  const base = loadConfig(configFile);
  if (full && base.model.backend === "llama" && !existsSync(base.model.path)) {
    throw new MeritError(`${base.model.path} is not present: run \`make models\` (model-hub access) for \`merit demo --full\`, or drop --full for the quick demo`);
  }
  // the simulated engine needs no tiny models and no replay: it answers every call itself
  const simulated = base.model.backend === "simulated";
  const config = full ? base : simulated ? { ...base, call_cache: profile.workingCache } : { ...quickConfig(base), call_cache: profile.workingCache };
  const limit = options.limit ?? (full ? FULL_LIMIT : profile.quickLimit);
  if (options.fresh) rmSync(profile.runsDir, { recursive: true, force: true });
  // an empty working cache, so every run's cache counters (and so the report) are the same on every rerun
  if (simulated && !options.skipRuns) for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(profile.workingCache + suffix, { force: true });
  const replay = !full && !simulated && !options.fresh && !options.skipRuns && profile.replayCache !== null && stageReplayCache(profile.replayCache, profile.workingCache);
  const replayRows = replay ? cacheRows(profile.workingCache) : null;
  if (!options.skipRuns) {
    if (simulated) simulatedBanner(config, log);
    else if (!full) tinyBanner(base.model.path, log);
    print(`== 0. Plan (${full ? "merit demo --full" : options.peers ? `peers demo${simulated ? " on the simulated engine" : ""}, merit demo --peers` : "quick demo; the real model: merit demo --full"})`);
    for (const line of demoPlan({ full, limit, config, replayRows, profile })) print(line);
    print("");
  }
  let predictions: string[][] = [];
  if (options.peers) {
    print("== 1. (the bundled predictions' EX is the main demo's step 1: make demo)");
  } else {
    print(bundledHeading(bundledPredictionFiles()));
    predictions = await scoreBundledPredictions(print);
  }
  if (options.skipRuns) return { predictions, initial: null, runs: [], computedBeyondReplay: 0, report: null };

  const dataset = await loadDataset({ name: config.dataset, dir: config.data_dir });
  print("");
  print(`== 2. Shared initial cache from spider_dev__Deepseek-Coder-7B.sql (protocol ${config.protocol})`);
  let initial: InitialCache;
  let initialSummary: DemoResult["initial"];
  const oracle = new Oracle({ dataset: config.dataset, databases: dataset.databases, protocol: config.protocol, jobs: defaultJobs() });
  try {
    const predictionsFile = readPredictions("data/predictions/spider_dev__Deepseek-Coder-7B.sql", "utf8", dataset.examples.length);
    initial = await initialCacheFromPredictions(dataset, predictionsFile, oracle);
    writeInitialCache(config.initial_cache, initial);
    const scored = initial.records.filter((r) => r.oracle_correct !== null);
    const correct = scored.filter((r) => r.oracle_correct).length;
    initialSummary = { file: config.initial_cache, correct, scored: scored.length, cacheHash: initial.cache_hash };
    print(`${config.initial_cache}: initial EX ${((100 * correct) / scored.length).toFixed(2)} (${correct}/${scored.length}), cache_hash ${initial.cache_hash.slice(0, 16)}`);
  } finally {
    await oracle.close();
  }

  const selected = buildStream(dataset, initial, 0, limit, config.subset);
  const failed = selected.filter((s) => s.initial.oracle_correct === false).length;
  print("");
  print(
    `== 3. ${profile.methods.join(", ")} x stream orders 0,1,2 on the same ${selected.length} queries (${failed} initially failed, ${selected.length - failed} initially correct: ` +
      `${config.subset?.rule === "initially_failed" ? "the first of each in the seed-0 stream, config subset rule" : `the first ${limit} of the seed-0 stream`})${full ? "" : simulated ? " (SIMULATED ENGINE: effects planted, not measured)" : " (TINY RANDOM MODEL: smoke-scale, meaningless)"}`,
  );
  const root = full ? "runs/demo/qwen" : `${profile.runsDir}/${simulated ? "simulated" : "tiny"}`;
  const streams = planStreams([...profile.methods], [0, 1, 2], root);
  for (const s of streams) rmSync(s.outDir, { recursive: true, force: true });
  // Fresh outputs do not depend on the thread count or the number of parallel slots (llama-backend.ts,
  // "Determinism") but do on the CPU's kernels; the replay cache makes them the same on any CPU.
  const results = await runCheckedGrid(config, streams, { limit, resume: false, plugins, reporter });
  const control = profile.control;
  if (control !== undefined) {
    // the equal-budget control: its own grid at its own K, in the same folder (the report pairs it under --conditions max_repair_steps)
    const k = controlSteps(control, config);
    registerArm(control.arm, { method: control.method, max_repair_steps: k }, "merit demo --peers", { max_repair_steps: k });
    const controlStreams = planStreams([control.arm], [0, 1, 2], root);
    for (const s of controlStreams) rmSync(s.outDir, { recursive: true, force: true });
    results.push(...(await runCheckedGrid({ ...config, max_repair_steps: k }, controlStreams, { limit, resume: false, plugins, reporter })));
  }
  const longRun = profile.longRun;
  if (longRun !== undefined) {
    // the long Iterative run: its own grid at its own K, in the same folder; the report finds the arm by name and reads it at every K′
    registerArm(longRun.arm, { method: longRun.method, max_repair_steps: longRun.k }, "merit demo --peers", { max_repair_steps: longRun.k });
    const longStreams = planStreams([longRun.arm], [0, 1, 2], root);
    for (const s of longStreams) rmSync(s.outDir, { recursive: true, force: true });
    results.push(...(await runCheckedGrid({ ...config, max_repair_steps: longRun.k }, longStreams, { limit, resume: false, plugins, reporter })));
  }
  const runs: DemoRun[] = results.map(({ stream, result }) => {
    const m = result.metrics;
    const audit = auditRun(stream.outDir, dataset);
    return { method: stream.method, seed: stream.seed, outDir: stream.outDir, total: m.total, successAt1: m.success_at_1, finalAccuracy: m.final_accuracy, repaired: m.repaired_count, steps: m.steps, llmCalls: m.accounting.llm_calls, auditViolations: audit.violations.length };
  });
  const rows = runs.map((r) => [r.method, String(r.seed), String(r.total), (100 * r.successAt1).toFixed(2), (100 * r.finalAccuracy).toFixed(2), String(r.repaired), r.steps.toFixed(2), String(r.llmCalls), String(r.auditViolations)]);
  printTable(print, ["method", "seed", "n", "initial EX", "EX", "repaired", "steps", "LLM calls", "audit violations"], rows);
  let computed = 0;
  if (replayRows !== null && profile.replayCache !== null) {
    computed = cacheRows(profile.workingCache) - replayRows;
    if (computed > 0) {
      const flag = options.peers ? " --peers" : "";
      log(`warning: ${computed} model calls were not in ${profile.replayCache} and were computed on this CPU, so ${profile.reportDir} may differ from the committed files; refresh the replay with \`merit demo${flag} --fresh\`, \`make notebooks\`, \`merit demo${flag} --save-cache\``);
    }
  }

  print("");
  const reportDir = full ? FULL_REPORT_DIR : profile.reportDir;
  print(`== 4. Report: tables and figures in ${reportDir}${full ? " (notebooks on it: make notebooks-full)" : simulated ? " (from the simulated-engine runs: SIMULATED ENGINE — effects are planted, not measured)" : " (from the tiny-model smoke runs)"}`);
  // the paper's Figure 2 for the first MERIT episode (stream order 0) that retrieved a precedent
  const merit0 = streams.find((s) => s.method === "merit" && s.seed === 0);
  const example = merit0 === undefined ? null : defaultExampleQuery(readRun(merit0.outDir, merit0.outDir));
  const report = await buildReport([root], { out: reportDir, reference: "merit", ...profile.report, ...(example === null ? {} : { example }), reporter });
  for (const line of reportLines(report)) print(line);
  if (simulated) {
    // the closing note: what every memory wrote and retrieved and how the engine answered its calls
    print("");
    print(`== 5. The simulated engine's calls (${SIMULATED_HEADLINE}): per method over its ${3} stream orders`);
    const engine = simulatedBackendOf(config, dataset);
    const method = new Map(runs.map((r) => [r.outDir, r.method]));
    const { header, rows: countRows } = simulatedCountRows(simulatedCounts(runs.map((r) => r.outDir), (d) => method.get(d)!, engine, config.decoding.max_output_tokens));
    printTable(print, header, countRows);
  }
  return { predictions, initial: initialSummary, runs, computedBeyondReplay: computed, report };
}
