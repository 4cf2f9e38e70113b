/**
 * Repair stage, one scored attempt under the run's feedback regime (METHOD.md §2.5, §12.2): the
 * regime object (lib/methods/feedback.ts) decides whether the attempt is accepted, the status the
 * agent is shown, the verdict a method's hooks read, whether the loop stops, and what the acceptance
 * means to memory. The loop calls these functions and compares no regime by name.
 * @module
 */
import { MeritError } from "../errors.ts";
import type { Acceptance } from "../memory/finalize.ts";
import type { Verdict } from "../oracle/oracle.ts";
import type { AttemptStatus } from "../oracle/types.ts";
import { rowsPreview, type FeedbackInput, type FeedbackRegime, type ShowInput } from "../methods/feedback.ts";
import type { HookModel } from "../methods/hooks.ts";

/** What the regime made of one scored attempt. */
export interface Judged {
  accepted: boolean;
  /** The status the agent is shown. */
  status: AttemptStatus;
  /** The outcome a method's hooks read (the regime's `verdict`). */
  verdict: string;
  /** Whether the loop stops after it. */
  stops: boolean;
  /** What memory reads of it. */
  acceptance: Acceptance;
  /** The bounded preview of its result rows ("" when it did not execute). */
  rowsPreview: string;
}

/**
 * Judges one scored attempt. `input` is what the regime reads besides the oracle's verdict, which it
 * receives only when it declares `usesOracle`. Throws one line when a regime's function returns
 * something other than what it must.
 */
export async function judgeAttempt(regime: FeedbackRegime, verdict: Verdict, input: Omit<FeedbackInput, "oracleCorrect" | "executed" | "dbError" | "rowsPreview">, model: HookModel): Promise<Judged> {
  const executed = verdict.predictedExecOk;
  const preview = rowsPreview(executed ? verdict.predictedRows : null);
  const accepted = await regime.accept({ ...input, executed, dbError: verdict.dbError, rowsPreview: preview, oracleCorrect: regime.usesOracle ? verdict.status === "CORRECT" : null }, model);
  const bad = (what: string, value: unknown) => new MeritError(`feedback regime "${regime.name}" returned ${JSON.stringify(value)} from ${what} for query ${input.queryId}`);
  if (typeof accepted !== "boolean") throw bad("accept", accepted);
  const failure = executed ? null : verdict.status === "TIMEOUT" ? "TIMEOUT" : "EXECUTION_ERROR";
  const seen: ShowInput = Object.freeze({ accepted, executed, failure });
  const status = regime.show(seen);
  if (status !== "CORRECT" && status !== "DENOTATION_MISMATCH" && status !== "EXECUTION_ERROR" && status !== "TIMEOUT") throw bad("show", status);
  const shownVerdict = regime.verdict(seen);
  if (typeof shownVerdict !== "string" || !/^[A-Z][A-Z_]{0,39}$/.test(shownVerdict)) throw bad("verdict", shownVerdict);
  const stops = regime.stops(seen);
  if (typeof stops !== "boolean") throw bad("stops", stops);
  return { accepted, status, verdict: shownVerdict, stops, acceptance: !accepted ? "rejected" : regime.acceptance, rowsPreview: preview };
}
