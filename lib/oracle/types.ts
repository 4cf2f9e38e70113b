/**
 * Oracle vocabulary (METHOD.md §2.2): the statuses an attempt can get and the outcome record the
 * classifier, memory and runner read. Spelled exactly as written to disk.
 * @module
 */

/** Status of one scored attempt. NO_DATABASE / GOLD_ERROR mark examples excluded from EX (METHOD.md §11.2). */
export type Status =
  | "CORRECT"
  | "DENOTATION_MISMATCH"
  | "EXECUTION_ERROR"
  | "TIMEOUT"
  | "NO_DATABASE"
  | "GOLD_ERROR";

/** The four statuses a prediction on an available database can get. */
export type AttemptStatus = "CORRECT" | "DENOTATION_MISMATCH" | "EXECUTION_ERROR" | "TIMEOUT";

export const ATTEMPT_STATUSES: readonly AttemptStatus[] = ["CORRECT", "DENOTATION_MISMATCH", "EXECUTION_ERROR", "TIMEOUT"];

/** Feedback regime (METHOD.md §2.5); every paper run uses `denotation_confirmed`. */
export type FeedbackRegime = "denotation_confirmed" | "dbms_only";

/**
 * One SQLite value as returned by the sandbox: integers are bigint (exact beyond 2^53), reals are
 * number, text is string, blobs are Uint8Array, NULL is null.
 */
export type SqlValue = bigint | number | string | Uint8Array | null;

/** A result table: rows of values, in the order SQLite returned them. */
export type Rows = SqlValue[][];

/** The outcome of scoring one attempt (METHOD.md §2.2 invariants hold; see `checkOutcome`). */
export interface Outcome {
  status: AttemptStatus;
  /** true iff the prediction executed (CORRECT or DENOTATION_MISMATCH). */
  predictedExecOk: boolean;
  /** Raw SQLite message, `TIMEOUT`, or the kit's own message; null when the prediction executed. */
  dbError: string | null;
  /** true/false under `denotation_confirmed`; null under `dbms_only`. */
  oracleCorrect: boolean | null;
  feedbackRegime: FeedbackRegime;
  /** Number of SQL executions this scoring performed (gold executions served from cache count 0). */
  dbExecutions: number;
}
