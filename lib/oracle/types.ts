/**
 * Oracle vocabulary (METHOD.md §2.2): the statuses an attempt can get, the feedback regime's name
 * and SQL values as the sandbox returns them. Spelled exactly as written to disk.
 * @module
 */

/**
 * The four statuses a prediction on an available database can get, in the order of their codes
 * (METHOD.md §2.6): the one definition every schema, reader and report uses.
 */
export const ATTEMPT_STATUSES = ["CORRECT", "DENOTATION_MISMATCH", "EXECUTION_ERROR", "TIMEOUT"] as const;
export type AttemptStatus = (typeof ATTEMPT_STATUSES)[number];

/** Every status of an example: NO_DATABASE / GOLD_ERROR mark examples excluded from EX (METHOD.md §11.2). */
export const STATUSES = [...ATTEMPT_STATUSES, "NO_DATABASE", "GOLD_ERROR"] as const;
export type Status = (typeof STATUSES)[number];

/**
 * Feedback regime (METHOD.md §2.5, §12.2): a name registered in lib/methods/feedback.ts —
 * `denotation_confirmed` (every paper run), `dbms_only`, `llm_judge`, `noisy_oracle` or a plugin's.
 */
export type FeedbackRegime = string;

/**
 * One SQLite value as returned by the sandbox: integers are bigint (exact beyond 2^53), reals are
 * number, text is string, blobs are Uint8Array, NULL is null.
 */
export type SqlValue = bigint | number | string | Uint8Array | null;

/** A result table: rows of values, in the order SQLite returned them. */
export type Rows = SqlValue[][];
