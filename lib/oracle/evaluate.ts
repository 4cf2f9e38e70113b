/**
 * Batch scoring of a predictions file (DESIGN.md §2 `merit eval`): one verdict per dataset example in
 * order, a summary with EX over the scoreable examples, and deterministic output files.
 * @module
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Dataset } from "../data/types.ts";
import { InputFileError, MeritError } from "../errors.ts";
import { writeFileAtomic } from "../atomic-file.ts";
import { canonicalJson } from "../hash.ts";
import type { SqlExecutor } from "./executor.ts";
import { DEFAULT_ENGINE } from "./executors.ts";
import { Oracle, type Verdict } from "./oracle.ts";
import type { PredictionsFile } from "./predictions.ts";
import type { SpiderProtocol } from "./protocol.ts";
import { STATUSES, type Status } from "./types.ts";

export interface EvalOptions {
  protocol: SpiderProtocol;
  timeoutMs: number;
  jobs: number;
  goldCacheFile?: string | null;
  /**
   * Exclude examples whose gold query ran past `timeoutMs` (as GOLD_ERROR, counted in the summary's
   * `gold_timeouts_accepted`) instead of stopping (`merit eval --accept-gold-timeouts`).
   */
  acceptGoldTimeouts?: boolean;
  /** The SQL engine (a registered executor name; default `sqlite`). */
  executor?: string;
  /**
   * An executor already started for `executor` (e.g. while the dataset loaded, so its workers are up
   * by the first statement); the evaluation closes it. Default: one is created here.
   */
  sqlExecutor?: SqlExecutor;
  /** Called with (done, total) as verdicts arrive. */
  onProgress?: (done: number, total: number) => void;
}

export interface EvalSummary {
  dataset: string;
  protocol: string;
  /** The SQL executor that ran the predictions and the gold. */
  executor: string;
  predictions: { file: string; encoding: string; sha256: string };
  dataset_checksum: string;
  database_manifest_hash: string;
  timeout_s: number;
  /** Examples scored (NO_DATABASE and GOLD_ERROR excluded). */
  n: number;
  correct: number;
  /** Execution accuracy over n, in percent. */
  ex: number;
  counts: Record<Status, number>;
  /** db_id → examples without a database. */
  missing_databases: Record<string, number>;
  /** GOLD_ERROR examples whose gold ran past the deadline, excluded by `acceptGoldTimeouts`; absent when none. */
  gold_timeouts_accepted?: number;
}

export interface EvalResult {
  verdicts: Verdict[];
  summary: EvalSummary;
}

/**
 * The longest prediction line scored (characters). Real predictions are well under 10,000; a longer
 * line is not one SQL query, and tokenising it (one token per whitespace character) would exhaust
 * memory (a 50 MB line of spaces does).
 */
export const MAX_PREDICTION_CHARS = 100_000;

/** Refuses a predictions file with a line over MAX_PREDICTION_CHARS, naming the line. */
export function checkPredictionLines(predictions: PredictionsFile): void {
  const i = predictions.lines.findIndex((l) => l.length > MAX_PREDICTION_CHARS);
  if (i >= 0) {
    throw new InputFileError(predictions.path, `line ${i + 1} is ${predictions.lines[i].length.toLocaleString("en-US")} characters long, over the limit of ${MAX_PREDICTION_CHARS.toLocaleString("en-US")} for one SQL prediction`, "write one SQL query per line (this line is not a query)");
  }
}

/** Examples prepared (lexed, gold looked up) before the statements so far are sent to the SQL workers. */
const SCORE_CHUNK = 32;

/**
 * Scores every line of `predictions` against `dataset`. Memory stays bounded: each verdict drops its
 * result rows as soon as it is known (only status and error text are kept, all the summary and
 * verdicts.jsonl need), so a file of huge-result queries holds at most one result per SQL worker.
 */
export async function evaluatePredictions(dataset: Dataset, predictions: PredictionsFile, opts: EvalOptions): Promise<EvalResult> {
  checkPredictionLines(predictions);
  const oracle = new Oracle({
    dataset: dataset.name,
    databases: dataset.databases,
    protocol: opts.protocol,
    timeoutMs: opts.timeoutMs,
    jobs: opts.jobs,
    goldCacheFile: opts.goldCacheFile ?? null,
    engine: opts.executor ?? DEFAULT_ENGINE,
    ...(opts.sqlExecutor ? { executor: opts.sqlExecutor } : {}),
  });
  let done = 0;
  const total = dataset.examples.length;
  try {
    const verdicts: Verdict[] = new Array(total);
    const scored: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      scored.push(
        oracle.score(dataset.examples[i], predictions.lines[i], { rows: false }).then((verdict) => {
          verdicts[i] = verdict;
          opts.onProgress?.(++done, total);
        }),
      );
      // Every SCORE_CHUNK examples, let the event loop send the statements prepared so far: the SQL
      // workers run them while the next examples are lexed here.
      if ((i + 1) % SCORE_CHUNK === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(scored);
    // A gold query that times out fails because of the deadline, not the data: stop rather than
    // silently shrink the denominator, unless the caller accepts it (then the summary records it).
    const goldTimeouts = verdicts.filter((v) => v.goldTimedOut).length;
    if (goldTimeouts > 0 && !opts.acceptGoldTimeouts) {
      throw new MeritError(
        `${goldTimeouts} of ${total} gold queries ran past the SQL deadline of ${opts.timeoutMs / 1000} s (--timeout), so their examples cannot be scored; ` +
          "raise --timeout (default 30 s), or pass --accept-gold-timeouts to exclude them as GOLD_ERROR (summary.json then records how many)",
      );
    }
    const summary = summarize(dataset, predictions, verdicts, oracle.protocolId, oracle.executor.engine, opts.timeoutMs);
    return { verdicts, summary: goldTimeouts > 0 ? { ...summary, gold_timeouts_accepted: goldTimeouts } : summary };
  } finally {
    await oracle.close();
  }
}

function summarize(dataset: Dataset, predictions: PredictionsFile, verdicts: Verdict[], protocol: string, executor: string, timeoutMs: number): EvalSummary {
  const counts = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<Status, number>;
  const missing: Record<string, number> = {};
  verdicts.forEach((v, i) => {
    counts[v.status] += 1;
    if (v.status === "NO_DATABASE") {
      const db = dataset.examples[i].dbId;
      missing[db] = (missing[db] ?? 0) + 1;
    }
  });
  const n = verdicts.length - counts.NO_DATABASE - counts.GOLD_ERROR;
  return {
    dataset: dataset.name,
    protocol,
    executor,
    predictions: { file: predictions.path, encoding: predictions.encoding, sha256: predictions.sha256 },
    dataset_checksum: dataset.datasetChecksum,
    database_manifest_hash: dataset.databaseManifestHash,
    timeout_s: timeoutMs / 1000,
    n,
    correct: counts.CORRECT,
    ex: n === 0 ? 0 : Math.round((10000 * counts.CORRECT) / n) / 100,
    counts,
    missing_databases: Object.fromEntries(Object.entries(missing).sort(([a], [b]) => (a < b ? -1 : 1))),
  };
}

/** One `verdicts.jsonl` line, keys in the documented order (DESIGN.md §2). */
export function verdictLine(index: number, dbId: string, v: Verdict): string {
  return JSON.stringify({ index, db_id: dbId, status: v.status, db_error: v.dbError });
}

/** Writes `verdicts.jsonl` and `summary.json` into `outDir`, each atomically (temp file + rename). */
export function writeEvalOutputs(outDir: string, dataset: Dataset, result: EvalResult): void {
  mkdirSync(outDir, { recursive: true });
  const lines = result.verdicts.map((v, i) => verdictLine(i, dataset.examples[i].dbId, v)).join("\n") + "\n";
  writeFileAtomic(join(outDir, "verdicts.jsonl"), lines);
  writeFileAtomic(join(outDir, "summary.json"), JSON.stringify(JSON.parse(canonicalJson(result.summary as never)), null, 2) + "\n");
}

/** `EX <pct> (<correct>/<n>)`, the last stdout line of `merit eval`. */
export function exLine(summary: EvalSummary): string {
  return `EX ${summary.ex.toFixed(2)} (${summary.correct}/${summary.n})`;
}
