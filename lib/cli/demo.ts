/**
 * `merit demo` (`make demo`): the main job on the bundled data, end to end —
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
 * run and roughly how long it takes. `--peers` (`make demo-peers`) is a second replayed demo: MERIT and
 * the nine peer memory methods on 8 of the queries with K = 2, from its own committed cache, its report in
 * results/demo-peers (PEERS_DEMO below; notebook 09 reads it).
 * @module
 */
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { loadDataset, missingDatabases } from "../data/index.ts";
import type { Dataset, DatasetName } from "../data/types.ts";
import { MeritError, UsageError } from "../errors.ts";
import { auditRun } from "../experiment/audit.ts";
import { loadConfig, type ExperimentConfig } from "../experiment/config.ts";
import { initialCacheFromPredictions, writeInitialCache, type InitialCache } from "../experiment/initial-cache.ts";
import { planStreams } from "../experiment/grid.ts";
import { quickConfig, TINY_CACHE } from "../experiment/quick-config.ts";
import { PEER_METHODS } from "../experiment/grid-plan.ts";
import { buildStream } from "../experiment/stream.ts";
import { episodeCallBound, getMethod, hookCallBound } from "../methods/index.ts";
import { evaluatePredictions, writeEvalOutputs } from "../oracle/evaluate.ts";
import { Oracle } from "../oracle/oracle.ts";
import { readPredictions } from "../oracle/predictions.ts";
import { numberFlag, parseFlags, type Command, type CommandIO } from "./command.ts";
import { loadCommandPlugins, PLUGIN_FLAG, PLUGIN_USAGE } from "./plugins.ts";
import { cacheRows, PEERS_REPLAY_CACHE, saveReplayCache, stageReplayCache } from "./demo-replay.ts";
import { defaultJobs } from "./eval.ts";
import { defaultExampleQuery } from "../report/example-episode.ts";
import { readRun } from "../report/run-reader.ts";

/** The committed call cache of the quick demo and the notebooks (tracked; never opened by SQLite). */
export { PEERS_REPLAY_CACHE, REPLAY_CACHE } from "./demo-replay.ts";
import { REPLAY_CACHE } from "./demo-replay.ts";
/** The quick demo's report (committed); --full writes its own, so the committed one stays as it is. */
const REPORT_DIR = "results/demo";
const FULL_REPORT_DIR = "results/demo-full";
const QUICK_LIMIT = 16;
const FULL_LIMIT = 100;
/**
 * Assumed seconds per model call of a 7B Q4 GGUF with ~1,000-token prompts: an order of magnitude
 * for the plan printed before `--full` starts, not a measurement (the progress line's ETA is).
 */
const ASSUMED_SECONDS_PER_CALL = { cpu: 20, gpu: 1 };
/** Minutes of the quick demo's fresh recompute on two CPU cores (2 min 20 s measured, README "Set up"). */
const FRESH_MINUTES = 6;

const USAGE = `usage: merit demo [--peers] [--full] [--fresh] [--limit N] [--config FILE] [--skip-runs] [--save-cache] [--plugin FILE.ts ...]
  The main job on the bundled data: EX of the bundled predictions, the shared initial cache from
  the DeepSeek-Coder-7B predictions, iterative / reflexion / dynamic_rag / merit over stream orders
  0-2 on N queries chosen by the config's subset rule (configs/demo.json: mostly initially failed
  ones), the causal audit, and the report. Runs go to runs/demo/, the report to results/demo/.
  Quick by default: the tiny random test models (meaningless numbers, real mechanics), N = ${QUICK_LIMIT},
  every model call replayed from ${REPLAY_CACHE}, so results/demo is rewritten byte for byte
  on any CPU.
  --full        the real GGUFs of models/ (make models), N = ${FULL_LIMIT}, runs in runs/demo/qwen and the
                report in ${FULL_REPORT_DIR}; prints the plan and an estimate first (hours on a CPU)
  --fresh       delete runs/demo/ first and recompute every model call into an empty call cache
  --save-cache  copy the quick demo's working cache (${TINY_CACHE}) to ${REPLAY_CACHE}
                and stop: after \`merit demo --fresh\` and \`make notebooks\`, to refresh the replay
  --skip-runs   only score the bundled predictions
  --peers       the peers demo instead (make demo-peers): merit and the nine peer memory methods
                (reasoning_bank ... error_fix_memory, METHOD.md §13) over stream orders 0-2 on 8 queries
                (6 initially failed) with K = 2 (configs/demo-peers.json), every model call replayed
                from results/demo-peers-call-cache.sqlite; runs in runs/demo-peers/, the report (peers
                table, Pareto figure, learning curves, memory diagnostics) in results/demo-peers/;
                no step 1 (the bundled predictions are the main demo's). With --fresh / --save-cache:
                recompute into, or save, the peers demo's own caches
${PLUGIN_USAGE}`;
const LATIN1 = new Set(["spider_dev__Llama3-8B.sql"]);
const DEMO_METHODS = ["iterative", "reflexion", "dynamic_rag", "merit"];

/** What one replayed demo runs and where it writes: the main demo, or the peers demo (`--peers`). */
export interface DemoProfile {
  methods: readonly string[];
  /** Default config file (its models are swapped for the tiny ones unless --full). */
  configFile: string;
  /** Folder of the runs (`<root>/tiny`), the initial cache and the working call cache; --fresh deletes it. */
  runsDir: string;
  /** The quick demo's working call cache (git-ignored) and its committed replay copy. */
  workingCache: string;
  replayCache: string;
  reportDir: string;
  quickLimit: number;
  /** Extra `merit report` flags. */
  reportFlags: readonly string[];
}

export const MAIN_DEMO: DemoProfile = {
  methods: DEMO_METHODS,
  configFile: "configs/demo.json",
  runsDir: "runs/demo",
  workingCache: TINY_CACHE,
  replayCache: REPLAY_CACHE,
  reportDir: REPORT_DIR,
  quickLimit: QUICK_LIMIT,
  reportFlags: ["--html"],
};

/**
 * `merit demo --peers` (`make demo-peers`; issue "The peers on the same stream" §3): MERIT and the
 * nine peer memory methods (METHOD.md §13) over stream orders 0-2 on 8 of the demo's queries (6
 * initially failed, 2 initially correct) with K = 2 (configs/demo-peers.json), the tiny models, every
 * model call replayed from its own committed cache, and the report with the peers table, the Pareto
 * figure, learning curves and memory diagnostics. Smaller than the main demo so its cache stays small.
 */
export const PEERS_DEMO: DemoProfile = {
  methods: ["merit", ...PEER_METHODS],
  configFile: "configs/demo-peers.json",
  runsDir: "runs/demo-peers",
  workingCache: "runs/demo-peers/llm-call-cache-tiny.sqlite",
  replayCache: PEERS_REPLAY_CACHE,
  reportDir: "results/demo-peers",
  quickLimit: 8,
  reportFlags: ["--all-methods", "--peers", PEER_METHODS.join(","), "--diagnostics"],
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

async function scoreBundledPredictions(io: CommandIO): Promise<void> {
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
  printTable(io, ["predictions", "dataset", "n", "correct", "EX %", "exec errors", "note"], rows);
}

function printTable(io: CommandIO, header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const fmt = (r: string[]) => "| " + r.map((c, i) => c.padEnd(widths[i])).join(" | ") + " |";
  io.out(fmt(header));
  io.out("|" + widths.map((w) => "-".repeat(w + 2)).join("|") + "|");
  for (const r of rows) io.out(fmt(r));
}

function tinyBanner(realModel: string, io: CommandIO): void {
  const banner = "!".repeat(100);
  io.err(banner);
  io.err(`!!  QUICK DEMO with the TINY RANDOM test models: their output is gibberish, so every repair fails and`);
  io.err(`!!  the numbers below are SMOKE-SCALE AND MEANINGLESS. They show the mechanics only.`);
  io.err(
    existsSync(realModel)
      ? `!!  ${realModel} is present: \`make demo-full\` (merit demo --full) runs the demo with it.`
      : `!!  For real numbers: \`make models\` (model-hub access), then \`make demo-full\` or \`make reproduce\`.`,
  );
  io.err(banner);
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
      return n + failed * (episodeCallBound(spec, k) + hookCallBound(spec)) + correct * hookCallBound(spec, { initiallyAccepted: true, finallyAccepted: true });
    }, 0);
  const rule = config.subset?.rule === "initially_failed" ? `up to ${failed} initially failed + ${limit - failed} initially correct queries (config subset rule initially_failed)` : `the first ${limit} queries of the seed-0 stream`;
  const lines = [
    `model ${config.model.path}, embedder ${config.embedder.path}`,
    `${methods.join(", ")} x stream orders 0,1,2 (${streams} runs) on ${rule}, K = ${k}: at most ${maxCalls.toLocaleString("en-US")} model calls`,
  ];
  if (full) {
    const hours = (s: number) => (maxCalls * s) / 3600;
    lines.push(
      `estimated time: up to ~${hours(ASSUMED_SECONDS_PER_CALL.cpu).toFixed(0)} h on a CPU, ~${hours(ASSUMED_SECONDS_PER_CALL.gpu).toFixed(1)} h on one GPU ` +
        `(assuming ${ASSUMED_SECONDS_PER_CALL.cpu} s / ${ASSUMED_SECONDS_PER_CALL.gpu} s per call, not measured; memoryless methods repeat across seeds, so the call cache answers many: the progress line gives the real ETA); ` +
        `interrupt with Ctrl-C, rerun to continue from the call cache`,
    );
  } else if (replayRows !== null) {
    lines.push(`replay: ${replayRows} stored model calls from ${profile.replayCache} (copied to ${profile.workingCache}); no model call should be computed (the oracle and the report take the time)`);
  } else {
    lines.push(`fresh: every model call computed into an empty ${profile.workingCache}${profile === MAIN_DEMO ? `, ~${FRESH_MINUTES} min on 2 CPU cores` : ""}`);
  }
  return lines;
}

export const demoCommand: Command = {
  name: "demo",
  summary: "the main job on the bundled data (EX table, initial cache, four methods x three seeds, audit, report)",
  usage: USAGE,
  async run(argv: string[], io: CommandIO): Promise<number> {
    const { values } = parseFlags(
      argv,
      { limit: { type: "string" }, config: { type: "string" }, fresh: { type: "boolean" }, peers: { type: "boolean" }, full: { type: "boolean" }, "skip-runs": { type: "boolean" }, "save-cache": { type: "boolean" }, ...PLUGIN_FLAG },
      USAGE,
    );
    const profile = values.peers ? PEERS_DEMO : MAIN_DEMO;
    if (values["save-cache"]) {
      const other = Object.keys(values).find((k) => k !== "save-cache" && k !== "peers");
      if (other) throw new UsageError(`--save-cache takes no other flag (got --${other}) but --peers (the peers demo's cache); see merit demo --help`);
      const rows = saveReplayCache(profile.workingCache, profile.replayCache);
      io.out(`wrote ${profile.replayCache}: ${rows} model calls from ${profile.workingCache}`);
      return 0;
    }
    if (values.peers && (values.full || values["skip-runs"])) throw new UsageError(`--peers runs the quick peers demo only (got --${values.full ? "full" : "skip-runs"}); see merit demo --help`);
    const full = values.full ?? false;
    const configFile = values.config ?? profile.configFile;
    const plugins = await loadCommandPlugins(values.plugin, { configs: [configFile] }); // first: a plugin may register the config's dataset
    const base = loadConfig(configFile);
    if (full && base.model.backend === "llama" && !existsSync(base.model.path)) {
      throw new MeritError(`${base.model.path} is not present: run \`make models\` (model-hub access) for \`merit demo --full\`, or drop --full for the quick demo`);
    }
    const config = full ? base : { ...quickConfig(base), call_cache: profile.workingCache };
    const limit = numberFlag(values.limit, "limit", full ? FULL_LIMIT : profile.quickLimit, { integer: true, min: 1 });
    if (values.fresh) rmSync(profile.runsDir, { recursive: true, force: true });
    const replay = !full && !values.fresh && !values["skip-runs"] && stageReplayCache(profile.replayCache, profile.workingCache);
    const replayRows = replay ? cacheRows(profile.workingCache) : null;
    if (!values["skip-runs"]) {
      if (!full) tinyBanner(base.model.path, io);
      io.out(`== 0. Plan (${full ? "merit demo --full" : values.peers ? "quick peers demo, merit demo --peers" : "quick demo; the real model: merit demo --full"})`);
      for (const line of demoPlan({ full, limit, config, replayRows, profile })) io.out(line);
      io.out("");
    }
    if (values.peers) {
      io.out("== 1. (the bundled predictions' EX is the main demo's step 1: make demo)");
    } else {
      io.out(bundledHeading(bundledPredictionFiles()));
      await scoreBundledPredictions(io);
    }
    if (values["skip-runs"]) return 0;

    const dataset = await loadDataset({ name: config.dataset, dir: config.data_dir });
    io.out("");
    io.out(`== 2. Shared initial cache from spider_dev__Deepseek-Coder-7B.sql (protocol ${config.protocol})`);
    let initial: InitialCache;
    const oracle = new Oracle({ dataset: config.dataset, databases: dataset.databases, protocol: config.protocol, jobs: defaultJobs() });
    try {
      const predictions = readPredictions("data/predictions/spider_dev__Deepseek-Coder-7B.sql", "utf8", dataset.examples.length);
      initial = await initialCacheFromPredictions(dataset, predictions, oracle);
      writeInitialCache(config.initial_cache, initial);
      const scored = initial.records.filter((r) => r.oracle_correct !== null);
      const correct = scored.filter((r) => r.oracle_correct).length;
      io.out(`${config.initial_cache}: initial EX ${((100 * correct) / scored.length).toFixed(2)} (${correct}/${scored.length}), cache_hash ${initial.cache_hash.slice(0, 16)}`);
    } finally {
      await oracle.close();
    }

    const selected = buildStream(dataset, initial, 0, limit, config.subset);
    const failed = selected.filter((s) => s.initial.oracle_correct === false).length;
    io.out("");
    io.out(
      `== 3. ${profile.methods.join(", ")} x stream orders 0,1,2 on the same ${selected.length} queries (${failed} initially failed, ${selected.length - failed} initially correct: ` +
        `${config.subset?.rule === "initially_failed" ? "the first of each in the seed-0 stream, config subset rule" : `the first ${limit} of the seed-0 stream`})${full ? "" : " (TINY RANDOM MODEL: smoke-scale, meaningless)"}`,
    );
    const root = full ? "runs/demo/qwen" : `${profile.runsDir}/tiny`;
    const streams = planStreams([...profile.methods], [0, 1, 2], root);
    for (const s of streams) rmSync(s.outDir, { recursive: true, force: true });
    // Fresh outputs do not depend on the thread count or the number of parallel slots (llama-backend.ts,
    // "Determinism") but do on the CPU's kernels; the replay cache makes them the same on any CPU.
    // The grid and report stacks load when they run, not when the command starts (issue 22 §2).
    const { runGridWithProgress } = await import("./run.ts");
    const results = await runGridWithProgress(config, streams, limit, false, io, {}, plugins);
    const rows = results.map(({ stream, result }) => {
      const m = result.metrics;
      const audit = auditRun(stream.outDir, dataset);
      return [stream.method, String(stream.seed), String(m.total), (100 * m.success_at_1).toFixed(2), (100 * m.final_accuracy).toFixed(2), String(m.repaired_count), m.steps.toFixed(2), String(m.accounting.llm_calls), String(audit.violations.length)];
    });
    printTable(io, ["method", "seed", "n", "initial EX", "EX", "repaired", "steps", "LLM calls", "audit violations"], rows);
    if (replayRows !== null) {
      const computed = cacheRows(profile.workingCache) - replayRows;
      if (computed > 0) {
        const flag = values.peers ? " --peers" : "";
        io.err(`warning: ${computed} model calls were not in ${profile.replayCache} and were computed on this CPU, so ${profile.reportDir} may differ from the committed files; refresh the replay with \`merit demo${flag} --fresh\`, \`make notebooks\`, \`merit demo${flag} --save-cache\``);
      }
    }

    io.out("");
    const reportDir = full ? FULL_REPORT_DIR : profile.reportDir;
    io.out(`== 4. Report: tables and figures in ${reportDir}${full ? " (notebooks on it: make notebooks-full)" : " (from the tiny-model smoke runs)"}`);
    // the paper's Figure 2 for the first MERIT episode (stream order 0) that retrieved a precedent
    const merit0 = streams.find((s) => s.method === "merit" && s.seed === 0);
    const example = merit0 === undefined ? null : defaultExampleQuery(readRun(merit0.outDir, merit0.outDir));
    const { reportCommand } = await import("./report.ts");
    return reportCommand.run([root, "--out", reportDir, "--reference", "merit", ...profile.reportFlags, ...(example === null ? [] : ["--example", example])], io);
  },
};
