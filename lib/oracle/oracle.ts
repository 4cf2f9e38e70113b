/**
 * The execution oracle (METHOD.md §2.3 Spider test-suite semantics, §2.4 BIRD set semantics, §11):
 * scores one predicted SQL for one example and returns a verdict with the four attempt statuses, or
 * `NO_DATABASE` / `GOLD_ERROR` for examples that cannot be scored. The dataset's adapter says which
 * semantics and protocol id apply (lib/data/adapter.ts `ScoringSpec`); execution goes through an
 * executor (lib/oracle/executor.ts; the killable SQLite sandbox by default); gold denotations come
 * from the gold cache.
 * @module
 */
import type { ScoringSpec } from "../data/adapter.ts";
import { datasetAdapter } from "../data/datasets/index.ts";
import type { DatabaseFiles, DatasetName, Example } from "../data/types.ts";
import { MeritError } from "../errors.ts";
import { birdResultEq, spiderResultEq } from "./compare.ts";
import { GoldCache } from "./gold-cache.ts";
import {
  goldOrderMatters,
  prepareBirdPrediction,
  prepareSpiderGold,
  prepareSpiderPrediction,
  type Prepared,
  type SpiderProtocol,
} from "./protocol.ts";
import { resultRows, samePacked, type ExecResult, type ExecutorOptions, type SqlExecutor } from "./executor.ts";
import { createExecutor, DEFAULT_ENGINE } from "./executors.ts";
import { SqlSandbox } from "./sandbox.ts";
import type { AttemptStatus, Rows, Status } from "./types.ts";

/** Verdict for one (example, prediction): an attempt outcome, or an unscoreable example. */
export interface Verdict {
  status: Status;
  dbError: string | null;
  predictedExecOk: boolean;
  oracleCorrect: boolean | null;
  /** SQL executions performed for this verdict (cached gold denotations cost 0). */
  dbExecutions: number;
  /**
   * Rows of the last database the prediction ran on (Spider: possibly a test-suite variant); null when
   * it did not run, or when the caller of `score` asked for no rows (`rows: false`).
   */
  predictedRows: Rows | null;
  /**
   * Set on a GOLD_ERROR whose gold query ran past the SQL deadline: a property of the deadline, not of
   * the data, so callers stop instead of excluding the example (README "Reliability").
   */
  goldTimedOut?: true;
}

export interface OracleOptions extends ExecutorOptions {
  /** A registered dataset; its adapter's scoring spec decides the semantics. */
  dataset: DatasetName;
  /** Engine of the executor to create (default `sqlite`); ignored when `executor` is given. */
  engine?: string;
  /** An executor to use instead of creating one (the oracle closes it). */
  executor?: SqlExecutor;
  /** Databases by db_id (from the data loader); a missing db_id makes its examples NO_DATABASE. */
  databases: ReadonlyMap<string, DatabaseFiles>;
  /** Spider protocol (ignored for BIRD); default `official`. */
  protocol?: SpiderProtocol;
  /** SQLite file persisting gold denotations across processes, or null (default) for memory only. */
  goldCacheFile?: string | null;
}

/** Scores predictions against gold denotations. Create once, call `score` many times, then `close`. */
export class Oracle {
  readonly dataset: DatasetName;
  readonly protocol: SpiderProtocol;
  readonly executor: SqlExecutor;
  readonly gold: GoldCache;
  readonly #databases: ReadonlyMap<string, DatabaseFiles>;
  readonly #scoring: ScoringSpec;
  readonly #preparedGold = new Map<string, { sql: string; orderMatters: boolean }>();

  constructor(opts: OracleOptions) {
    this.dataset = opts.dataset;
    this.#scoring = datasetAdapter(opts.dataset).scoring;
    this.protocol = opts.protocol ?? "official";
    this.#databases = opts.databases;
    this.executor = opts.executor ?? createExecutor(opts.engine ?? DEFAULT_ENGINE, opts);
    // What besides the database and the gold text decides the rows (part of the persisted key).
    const context = `text_errors=${this.#textErrors()} max_rows=${opts.maxRows ?? "default"} max_bytes=${opts.maxBytes ?? "default"}`;
    this.gold = new GoldCache(opts.goldCacheFile ?? null, this.executor.engine, context, this.executor.timeoutMs);
  }

  /** The SQLite sandbox behind this oracle (its process pool, for tests and reports); throws for another engine. */
  get sandbox(): SqlSandbox {
    if (this.executor instanceof SqlSandbox) return this.executor;
    throw new MeritError(`this oracle runs on the "${this.executor.engine}" executor, not the SQLite sandbox`);
  }

  /** A stable name of the scoring protocol, recorded in summaries and manifests. */
  get protocolId(): string {
    return protocolIdOf(this.dataset, this.protocol);
  }

  /**
   * Scores `predicted` for `example`. Never throws for bad SQL; every failure becomes a status.
   * `rows: false` leaves the verdict's `predictedRows` null: a prediction whose packed rows equal the
   * gold's is then judged without deserializing either (`merit eval` keeps no rows).
   */
  async score(example: Example, predicted: string, opts: { rows?: boolean } = {}): Promise<Verdict> {
    const db = this.#databases.get(example.dbId);
    if (!db) return unscored("NO_DATABASE", `database not found: ${example.dbId}`);
    const wantRows = opts.rows ?? true;
    if (this.#scoring.semantics === "set") {
      return this.#scoreBird(db, example, prepareBirdPrediction(predicted), wantRows);
    }
    return this.#scoreSpider(db, example, prepareSpiderPrediction(predicted, this.protocol, example.sourceIndex), wantRows);
  }

  /**
   * Executes `sql` read-only on the example's canonical database as a prediction is run (the same
   * preparation, executor and deadline as `score`), with no gold and no verdict: what a method may see
   * of a candidate it has not submitted (a propose hook's `execute`, lib/repair/proposal.ts).
   */
  async execute(example: Example, sql: string): Promise<ExecResult> {
    const db = this.#databases.get(example.dbId);
    if (!db) return { ok: false, error: `database not found: ${example.dbId}`, timedOut: false };
    const prepared = this.#scoring.semantics === "set" ? prepareBirdPrediction(sql) : prepareSpiderPrediction(sql, this.protocol, example.sourceIndex);
    if (!prepared.ok) return { ok: false, error: prepared.error, timedOut: false };
    return this.executor.execute({ db: db.canonicalPath, sql: prepared.sql, textErrors: this.#textErrors() });
  }

  /** The gold rows of an example on its canonical database (as this protocol executes the gold), or null. */
  async goldRows(example: Example): Promise<Rows | null> {
    const db = this.#databases.get(example.dbId);
    if (!db) return null;
    const sql = this.#scoring.semantics === "set" ? example.goldSql.trim() : this.#spiderGold(example.goldSql).sql;
    const result = await this.#goldRows(db.canonicalPath, sql);
    return result.ok ? resultRows(result) : null;
  }

  async close(): Promise<void> {
    await this.executor.close();
    this.gold.close();
  }

  #goldRows(path: string, sql: string) {
    return this.gold.get(path, sql, () => this.executor.execute({ db: path, sql, textErrors: this.#textErrors(), pack: true }));
  }

  /** The gold text as this protocol runs it, and whether its row order matters; prepared once per gold text (a pure function of it). */
  #spiderGold(gold: string): { sql: string; orderMatters: boolean } {
    let prepared = this.#preparedGold.get(gold);
    if (prepared === undefined) {
      const sql = prepareSpiderGold(gold, this.protocol);
      prepared = { sql, orderMatters: goldOrderMatters(sql) };
      this.#preparedGold.set(gold, prepared);
    }
    return prepared;
  }

  #textErrors(): "ignore" | "replace" {
    // The test-suite executor decodes text with errors="ignore" (METHOD.md §2.3).
    return this.#scoring.semantics === "test-suite" ? "ignore" : "replace";
  }

  async #scoreSpider(db: DatabaseFiles, example: Example, prediction: Prepared, wantRows: boolean): Promise<Verdict> {
    if (!prediction.ok) return attempt("EXECUTION_ERROR", prediction.error, 0, null);
    const { sql: goldSql, orderMatters } = this.#spiderGold(example.goldSql);
    let executions = 0;
    let rows: () => Rows | null = () => null; // the prediction's rows on the last database, read only if wanted
    // Every .sqlite of the db folder (test-suite layout), in sorted order; the first failure decides.
    for (const path of db.allPaths) {
      const gold = await this.#goldRows(path, goldSql);
      if (!gold.ok) return unscored("GOLD_ERROR", `gold query failed on ${path}: ${gold.error}`, gold.timedOut);
      const pred = await this.executor.execute({ db: path, sql: prediction.sql, textErrors: "ignore", pack: true });
      executions += 1;
      // Over the row/byte cap: more rows or bytes than the gold has, so result_eq is false (METHOD.md §2.3).
      if (!pred.ok && pred.overCap) return attempt("DENOTATION_MISMATCH", null, executions, null);
      if (!pred.ok) return attempt(pred.timedOut ? "TIMEOUT" : "EXECUTION_ERROR", pred.error, executions, null);
      // The same packed bytes are the same rows, types included: result_eq is True without reading them.
      if (samePacked(gold, pred)) {
        rows = () => resultRows(pred);
        continue;
      }
      const predRows = resultRows(pred);
      if (!spiderResultEq(resultRows(gold), predRows, orderMatters)) return attempt("DENOTATION_MISMATCH", null, executions, wantRows ? predRows : null);
      rows = () => predRows;
    }
    return attempt("CORRECT", null, executions, wantRows ? rows() : null);
  }

  async #scoreBird(db: DatabaseFiles, example: Example, prediction: Prepared, wantRows: boolean): Promise<Verdict> {
    if (!prediction.ok) return attempt("EXECUTION_ERROR", prediction.error, 0, null);
    // Prediction first, then gold, as the reference does; the gold comes from the cache (§11.2), so a
    // slow gold can no longer turn a correct prediction into a mismatch.
    const pred = await this.executor.execute({ db: db.canonicalPath, sql: prediction.sql, distinct: true });
    if (!pred.ok && !pred.overCap) return attempt(pred.timedOut ? "TIMEOUT" : "EXECUTION_ERROR", pred.error, 1, null);
    const gold = await this.#goldRows(db.canonicalPath, example.goldSql.trim());
    if (!gold.ok) return unscored("GOLD_ERROR", `gold query failed on ${db.canonicalPath}: ${gold.error}`, gold.timedOut);
    // Over a cap even after de-duplication: more distinct rows (or bytes) than the gold has, so the
    // sets differ (METHOD.md §2.4). Under it, the distinct rows decide exactly as the full result would.
    if (!pred.ok) return attempt("DENOTATION_MISMATCH", null, 1, null);
    const predRows = resultRows(pred);
    const correct = birdResultEq(resultRows(gold), predRows);
    return attempt(correct ? "CORRECT" : "DENOTATION_MISMATCH", null, 1, wantRows ? predRows : null);
  }
}

/** The protocol id an oracle for (dataset, Spider protocol) reports, from the dataset's adapter; BIRD has one protocol. */
export function protocolIdOf(dataset: DatasetName, protocol: SpiderProtocol): string {
  return datasetAdapter(dataset).scoring.protocolId(protocol, dataset);
}

/** `rows`: the prediction's rows on the last database it ran on, kept on an executed verdict (null: not asked for). */
function attempt(status: AttemptStatus, dbError: string | null, dbExecutions: number, rows: Rows | null): Verdict {
  const executed = status === "CORRECT" || status === "DENOTATION_MISMATCH";
  return {
    status,
    dbError: executed ? null : dbError,
    predictedExecOk: executed,
    oracleCorrect: status === "CORRECT",
    dbExecutions,
    predictedRows: executed ? rows : null,
  };
}

function unscored(status: "NO_DATABASE" | "GOLD_ERROR", dbError: string, goldTimedOut = false): Verdict {
  return { status, dbError, predictedExecOk: false, oracleCorrect: null, dbExecutions: 0, predictedRows: null, ...(goldTimedOut ? { goldTimedOut: true as const } : {}) };
}
