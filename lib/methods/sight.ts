/**
 * Methods, what a method may see (METHOD.md §12.3; issue 36 §3): a method declares its sight —
 * `agent` (the default: what the agent observed under the run's feedback regime) or `oracle` (that,
 * and the oracle's verdict of every attempt: ground truth). The attempt views its hooks receive are
 * built here from that declaration, so a method that declares `agent` has no field through which the
 * oracle's verdict could reach it, whatever the regime. `merit methods` and the peers table print the
 * declaration itself.
 * @module
 */
import { MeritError } from "../errors.ts";
import type { AttemptView } from "./hooks.ts";

/** What a method's hooks may read. */
export type Sight = "agent" | "oracle";

/** One attempt as the episode holds it: what the agent observed, and the oracle's verdict beside it. */
export interface ObservedAttempt {
  sql: string;
  /** The outcome the regime lets hooks read (FeedbackRegime.verdict). */
  verdict: string;
  dbError: string | null;
  executed: boolean;
  errorType: string | null;
  /** Bounded preview of the result rows ("" when the SQL did not execute). */
  rowsPreview: string;
  /** The oracle's verdict. */
  confirmedCorrect: boolean;
}

/** A method's declared sight (default `agent`); one line for anything else. */
export function checkSight(method: string, sight: unknown): Sight {
  if (sight === undefined) return "agent";
  if (sight !== "agent" && sight !== "oracle") throw new MeritError(`method "${method}": sight must be "agent" (what the agent observed; the default) or "oracle" (the oracle's verdict too), not ${JSON.stringify(sight)}`);
  return sight;
}

/** The attempt view a hook of a method with `sight` receives (frozen); `oracleCorrect` exists only for `oracle`. */
export function attemptViewFor(sight: Sight, a: ObservedAttempt): AttemptView {
  const seen: AttemptView = { sql: a.sql, status: a.verdict, dbError: a.dbError, executed: a.executed, errorType: a.errorType, rowsPreview: a.rowsPreview };
  return Object.freeze(sight === "oracle" ? { ...seen, oracleCorrect: a.confirmedCorrect } : seen);
}

/** One line for `merit methods` and the peers table. */
export function sightLabel(sight: Sight): string {
  return sight === "oracle" ? "oracle verdict (ground truth)" : "agent's view only";
}
