/**
 * Repair stage, one scored attempt (METHOD.md §2.5, §3, §6.1): the oracle's verdict of an attempt as
 * the feedback regime turned it (accepted or not, the status the agent is shown, whether the loop
 * stops) with its failure type — the method's classify hook's label, else the deterministic
 * classifier's — and the initial failure's type whatever the feedback said (Table 5).
 * @module
 */
import { classifyFailure } from "../classify.ts";
import { MeritError } from "../errors.ts";
import { NULL_CLASSIFICATION_MEMORY_TYPE, type EpisodeAttempt } from "../memory/finalize.ts";
import type { Verdict } from "../oracle/oracle.ts";
import type { QuestionView } from "../methods/hooks.ts";
import { callHookSync, deepFreeze } from "../methods/hook-guard.ts";
import type { MethodSpec } from "../methods/method.ts";
import type { Judged } from "./feedback-step.ts";
import type { ErrorType } from "./trajectory.ts";

/** An attempt as a classifier reads it. */
export type Classifiable = { sql: string; status: string; dbError: string | null; predictedExecOk: boolean };

/** One scored attempt. */
export interface AttemptRecord extends EpisodeAttempt {
  /** The oracle's verdict (for the record and the tables; the agent and its hooks see what the regime shows). */
  confirmedCorrect: boolean;
  /** The classifier's type (METHOD.md §3), or the method's classify hook's label. */
  errorType: ErrorType | string | null;
  dbExecutions: number;
  /** Whether the feedback regime accepted it. */
  accepted: boolean;
  /** Whether the loop stops after it (the regime's `stops`; by default, it was accepted). */
  stops: boolean;
  /** The outcome a method's hooks read (the regime's `verdict`: what the agent observed). */
  verdict: string;
  /** The bounded preview of its result rows ("" when it did not execute). */
  rowsPreview: string;
}

/** The cached initial label disagrees with the online oracle: the cache is stale for this data. */
export class InitialLabelMismatchError extends MeritError {
  constructor(queryId: string, cached: string, online: string) {
    super(`initial cache label of query ${queryId} is ${cached} but the oracle now says ${online}; rebuild the cache with \`merit initial\` for this data and protocol`);
    this.name = "InitialLabelMismatchError";
  }
}

/**
 * The failure type of an initial attempt the oracle scores wrong but the feedback showed as CORRECT
 * (so it has no type of its own), classified from what the DBMS said of it — the initial failure
 * breakdown (Table 5) reads the initial attempt whatever the feedback said (issue 39 item 1); null
 * for every other initial attempt (its `errorType` is the type).
 */
export function initialTypeOf(first: AttemptRecord, classify?: (a: Classifiable) => string): string | null {
  if (first.confirmedCorrect || first.errorType !== null) return null;
  const status = first.predictedExecOk ? "DENOTATION_MISMATCH" : first.dbError === "TIMEOUT" ? "TIMEOUT" : "EXECUTION_ERROR";
  const input = { sql: first.sql, status, dbError: first.dbError, predictedExecOk: first.predictedExecOk } as const;
  return classify ? classify(input) : (classifyFailure(input)?.errorType ?? NULL_CLASSIFICATION_MEMORY_TYPE);
}

/** A classify hook as the episode calls it: the label must be one the hook declares. */
export function hookClassifier(method: string, hook: NonNullable<MethodSpec["hooks"]["classify"]>, view: QuestionView): (a: Classifiable) => string {
  const types = new Set(hook.types);
  return (a) => {
    const label = callHookSync({ method, hook: "classify.classify", name: hook.name, queryId: view.queryId }, () => hook.classify(deepFreeze({ ...view, sql: a.sql, status: a.status, dbError: a.dbError, executed: a.predictedExecOk })));
    if (typeof label !== "string" || !types.has(label)) throw new MeritError(`method "${method}": classifier "${hook.name}" returned ${JSON.stringify(label)} for query ${view.queryId}, which is not one of its declared types (${hook.types.join(", ")})`);
    return label;
  };
}

/**
 * A verdict as an attempt, with the status the regime shows the agent (under dbms_only the model
 * never learns correctness, METHOD.md §2.5). The failure type is the method's classify hook's label
 * when it has one, else the classifier's (§3).
 */
export function toAttempt(sql: string, verdict: Verdict, judged: Judged, classify?: (a: Classifiable) => string): AttemptRecord {
  const confirmedCorrect = verdict.status === "CORRECT";
  const status = judged.status;
  const classification =
    status === "CORRECT" ? null : classify ? { errorType: classify({ sql, status, dbError: verdict.dbError, predictedExecOk: verdict.predictedExecOk }) } : classifyFailure({ status, dbError: verdict.dbError, predictedExecOk: verdict.predictedExecOk });
  return {
    sql,
    status,
    predictedExecOk: verdict.predictedExecOk,
    dbError: verdict.dbError,
    acceptance: judged.acceptance,
    confirmedCorrect,
    errorType: classification ? classification.errorType : null,
    dbExecutions: verdict.dbExecutions,
    accepted: judged.accepted,
    stops: judged.stops,
    verdict: judged.verdict,
    rowsPreview: judged.rowsPreview,
  };
}
