/**
 * `merit eval`: scores a predictions file with the execution oracle (DESIGN.md §2 contract).
 * @module
 */
import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { datasetAdapter, datasetNames } from "../data/datasets/index.ts";
import type { DatasetName } from "../data/types.ts";
import { InputFileError, UsageError } from "../errors.ts";
import { MAX_SQL_TIMEOUT_S, MIN_SQL_TIMEOUT_S } from "../oracle/executor.ts";
import type { PredictionEncoding } from "../oracle/predictions.ts";
import { SPIDER_PROTOCOLS, type SpiderProtocol } from "../oracle/protocol.ts";
import { numberFlag, oneOfFlag, parseFlags, required, type Command, type CommandIO } from "./command.ts";
import { loadCommandPlugins, PLUGIN_FLAG, PLUGIN_USAGE } from "./plugin-flag.ts";
import { createExecutor, DEFAULT_ENGINE, EXECUTORS } from "../oracle/executors.ts";
import { DEFAULT_GOLD_CACHE } from "../oracle/gold-cache.ts";
import { defaultJobs } from "../experiment/services.ts";
import { assertWritableDir, assertWritableFile } from "../experiment/output-paths.ts";

/**
 * Statements per SQL worker `merit eval` starts by default: a worker's start and warm-up cost about
 * what 1,000 Spider statements cost to execute (≈ 0.15 s of CPU on the 2-core machine of bench/README
 * "Oracle"), so a Spider dev file (972 scoreable examples, one file each) runs on one worker and a
 * test-suite layout (10 files each) on up to 10.
 */
export const STATEMENTS_PER_WORKER = 1000;

// Digits grouped by hand: the first toLocaleString loads ICU's number formats (≈ 30 ms), which every
// command importing this module would pay at start-up.
const USAGE = `usage: merit eval --dataset NAME --pred FILE [--data DIR] [--protocol official|merit|strict]
                  [--encoding utf8|latin1] [--out DIR] [--timeout S] [--accept-gold-timeouts] [--jobs N] [--gold-cache FILE|none]
                  [--executor NAME] [--plugin FILE.ts ...]
  Scores one SQL per line (dataset order). NAME: a registered dataset (${datasetNames().join(", ")}, or a plugin's).
  Spider protocols: official (default; the test-suite evaluator's defaults), merit (the MERIT
  reference oracle), strict (no evaluator quirks).
  --data      dataset directory (default data/<dataset>)
  --out       write OUT/verdicts.jsonl and OUT/summary.json
  --timeout   seconds per SQL statement (default 30; at most 2147483, the longest timer Node holds);
              a gold query that runs past it stops the command (the deadline is too short for the data)
  --accept-gold-timeouts  exclude examples whose gold timed out (GOLD_ERROR) instead of stopping;
              summary.json records how many (gold_timeouts_accepted)
  --jobs      SQL worker processes (default: one per ${String(STATEMENTS_PER_WORKER).replace(/\B(?=(\d{3})+(?!\d))/g, ",")} database files the examples reach, counted
              twice without a gold cache file to read, at most one per core and 16; one starts at once, the rest
              once the dataset is loaded); at most 4 per CPU core
  --gold-cache  gold results kept across runs, keyed by the database file's SHA-256, the gold text,
              the engine and its version (default ${DEFAULT_GOLD_CACHE}; none: this process only)
  --executor  the SQL engine that runs both the predictions and the gold (default ${DEFAULT_ENGINE}; registered:
              ${EXECUTORS.names().join(", ")}, or a plugin's); recorded in summary.json
${PLUGIN_USAGE}
  The last stdout line is \`EX <pct> (<correct>/<n>)\`; NO_DATABASE and GOLD_ERROR examples are excluded from n.`;

export function parseDataset(value: string | undefined, usage: string): DatasetName {
  return oneOfFlag(required(value, "dataset", usage), "dataset", datasetNames());
}

/** `--executor NAME`: a registered executor (default `sqlite`), or a one-line UsageError with the nearest name. */
export function parseExecutor(value: string | undefined): string {
  return oneOfFlag(value ?? DEFAULT_ENGINE, "executor", EXECUTORS.names());
}

/** lib/experiment/services.ts `defaultJobs`. */
export { defaultJobs };

/** The default worker count for work reaching `files` database files in all: one per STATEMENTS_PER_WORKER, within 1..defaultJobs(). */
export function jobsForWork(files: number): number {
  return Math.max(1, Math.min(defaultJobs(), Math.ceil(files / STATEMENTS_PER_WORKER)));
}

/** The most SQL worker processes worth starting: 4 per CPU core, never above 64 (each is a Node process). */
export function maxJobs(): number {
  return Math.min(64, 4 * availableParallelism());
}

/** `--jobs N`, within 1..maxJobs(). */
export function jobsFlag(value: string | undefined): number {
  const max = maxJobs();
  return numberFlag(value, "jobs", defaultJobs(), { integer: true, min: 1, max, maxReason: max === 64 ? "the kit's cap" : `4 per CPU core, ${availableParallelism()} here` });
}

/** `--timeout S` in milliseconds: positive seconds up to the longest timer Node holds (2^31 − 1 ms). */
export function timeoutFlagMs(value: string | undefined, fallbackSeconds: number): number {
  return numberFlag(value, "timeout", fallbackSeconds, { min: MIN_SQL_TIMEOUT_S, max: MAX_SQL_TIMEOUT_S, maxReason: "seconds; Node timers hold at most 2^31 − 1 ms" }) * 1000;
}

export const evalCommand: Command = {
  name: "eval",
  summary: "score a predictions file with the execution oracle (EX)",
  usage: USAGE,
  async run(argv: string[], io: CommandIO): Promise<number> {
    const { values } = parseFlags(
      argv,
      {
        dataset: { type: "string" },
        data: { type: "string" },
        pred: { type: "string" },
        protocol: { type: "string" },
        encoding: { type: "string" },
        out: { type: "string" },
        timeout: { type: "string" },
        jobs: { type: "string" },
        "gold-cache": { type: "string" },
        "accept-gold-timeouts": { type: "boolean" },
        executor: { type: "string" },
        ...PLUGIN_FLAG,
      },
      USAGE,
    );
    await loadCommandPlugins(values.plugin); // first: a plugin may register the dataset or the executor
    const dataset = parseDataset(values.dataset, USAGE);
    const executor = parseExecutor(values.executor);
    const predPath = required(values.pred, "pred", USAGE);
    const protocol = (values.protocol ?? "official") as SpiderProtocol;
    if (!SPIDER_PROTOCOLS.includes(protocol)) throw new UsageError(`--protocol must be one of ${SPIDER_PROTOCOLS.join(", ")}, got "${protocol}"`);
    const { scoring } = datasetAdapter(dataset);
    if (!scoring.protocolChoice && values.protocol !== undefined) throw new UsageError(scoring.noProtocolChoice ?? `--protocol does not apply to ${dataset}: it has one protocol`);
    const encoding = (values.encoding ?? "utf8") as PredictionEncoding;
    if (encoding !== "utf8" && encoding !== "latin1") throw new UsageError(`--encoding must be utf8 or latin1, got "${encoding}"`);
    const timeoutMs = timeoutFlagMs(values.timeout, 30);
    const jobsGiven = values.jobs === undefined ? null : jobsFlag(values.jobs);
    if (values.out !== undefined) assertWritableDir(values.out, "--out");
    if (values["gold-cache"] !== undefined && values["gold-cache"] !== "none") assertWritableFile(values["gold-cache"], "--gold-cache");

    const goldCacheFile = values["gold-cache"] === "none" ? null : (values["gold-cache"] ?? DEFAULT_GOLD_CACHE);
    // The SQL workers start now, while the dataset loads and its databases are hashed and checked;
    // by default one, and the others (jobsForWork) once the dataset says how many files the work reaches.
    const sqlExecutor = createExecutor(executor, { jobs: jobsGiven ?? 1, timeoutMs });
    try {
      // The dataset loader and the oracle are imported only now, while the worker starts (≈ 0.1 s of
      // module loading it would otherwise wait behind; bench/README.md "Fifth pass").
      const [{ loadDataset, missingDatabases }, { readPredictions }, { evaluatePredictions, exLine, writeEvalOutputs }, { progressReporter }] = await Promise.all([
        import("../data/index.ts"),
        import("../oracle/predictions.ts"),
        import("../oracle/evaluate.ts"),
        import("./progress.ts"),
      ]);
      const data = await loadDataset({ name: dataset, dir: values.data ?? `data/${dataset}`, schemas: false }); // eval prompts no model: no schema text
      const predictions = readPredictions(predPath, encoding, data.examples.length);
      let jobs = jobsGiven ?? 1;
      if (jobsGiven === null && sqlExecutor.grow) {
        const files = data.examples.reduce((n, e) => n + (data.databases.get(e.dbId)?.allPaths.length ?? 0), 0);
        // With no gold cache to read (none, or no file yet), every gold runs too: twice the statements.
        // (Measured on 2 cores: a cold Spider dev eval is faster on two workers, a warm one on one.)
        jobs = jobsForWork(goldCacheFile === null || !existsSync(goldCacheFile) ? 2 * files : files);
        sqlExecutor.grow(jobs);
      }
      const missing = missingDatabases(data);
      if (missing.length > 0) {
        const list = missing.map((m) => `${m.dbId} (${m.examples})`).join(", ");
        io.err(`warning: ${missing.reduce((s, m) => s + m.examples, 0)} examples have no database and are reported as NO_DATABASE: ${list}`);
      }
      io.err(`merit eval: ${dataset} ${data.examples.length} examples, protocol ${scoring.protocolChoice ? protocol : dataset}, executor ${executor}, ${jobs} SQL worker${jobs === 1 ? "" : "s"}, timeout ${timeoutMs / 1000}s`);

      const progress = progressReporter(io, "scoring");
      const result = await evaluatePredictions(data, predictions, {
        protocol,
        timeoutMs,
        jobs,
        goldCacheFile,
        acceptGoldTimeouts: values["accept-gold-timeouts"] ?? false,
        executor,
        sqlExecutor,
        onProgress: progress,
      });
      const { summary } = result;
      if (summary.counts.GOLD_ERROR > 0) io.err(`warning: ${summary.counts.GOLD_ERROR} gold queries failed; those examples are GOLD_ERROR and excluded`);
      if (summary.gold_timeouts_accepted !== undefined) io.err(`warning: ${summary.gold_timeouts_accepted} of them ran past the ${timeoutMs / 1000} s deadline (accepted by --accept-gold-timeouts; recorded in summary.json)`);
      if (summary.n === 0 && summary.counts.GOLD_ERROR > 0) {
        throw new InputFileError(data.dir, `no example could be scored (${summary.counts.NO_DATABASE} without a database, ${summary.counts.GOLD_ERROR} whose gold query failed)`, "check the databases and the gold queries of the dataset");
      }
      if (summary.n === 0) {
        throw new InputFileError(data.dir, "no example could be scored (no databases found)", `run \`make data-${dataset}\` or copy the databases into ${data.dir}`);
      }
      if (values.out) writeEvalOutputs(values.out, data, result);
      const c = summary.counts;
      io.out(`correct ${c.CORRECT}, mismatch ${c.DENOTATION_MISMATCH}, error ${c.EXECUTION_ERROR}, timeout ${c.TIMEOUT}, no database ${c.NO_DATABASE}, gold error ${c.GOLD_ERROR}`);
      io.out(exLine(summary));
      return 0;
    } finally {
      await sqlExecutor.close(); // idempotent: the evaluation has closed it unless something failed first
    }
  },
};
