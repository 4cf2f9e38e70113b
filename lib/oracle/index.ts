/**
 * The execution oracle (METHOD.md §2, §11): the public surface of lib/oracle.
 * @module
 */
export type { AttemptStatus, FeedbackRegime, Rows, SqlValue, Status } from "./types.ts";
export { ATTEMPT_STATUSES } from "./types.ts";
export { Oracle, type OracleOptions, type Verdict } from "./oracle.ts";
export { SqlSandbox, type SandboxOptions } from "./sandbox.ts";
export type { ExecRequest, ExecResult, ExecutorOptions, SqlExecutor } from "./executor.ts";
export { EXECUTORS, registerExecutor, createExecutor, DEFAULT_ENGINE } from "./executors.ts";
export { spiderResultEq, birdResultEq, valueKey, rowKey } from "./compare.ts";
export {
  SPIDER_PROTOCOLS,
  NO_SINGLE_STATEMENT,
  prepareSpiderPrediction,
  prepareSpiderGold,
  prepareBirdPrediction,
  renderOneLine,
  type SpiderProtocol,
} from "./protocol.ts";
export { extractSql, singleStatement } from "./extract-sql.ts";
export { firstTabField, readPredictions, type PredictionsFile, type PredictionEncoding } from "./predictions.ts";
export { evaluatePredictions, writeEvalOutputs, exLine, type EvalResult, type EvalSummary } from "./evaluate.ts";
