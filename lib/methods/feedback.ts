/**
 * Methods, feedback regimes (METHOD.md §2.5, §12.2; issue 29 §3): what the episode loop is told
 * about each scored attempt — whether it is accepted (the loop stops, memory records a success) — by
 * a regime an experiment config (or a study arm) names in `feedback_regime`:
 *
 * - `denotation_confirmed` (also spelled `oracle`): the execution-accuracy oracle's verdict (the paper).
 * - `dbms_only`: the agent learns only whether its SQL executed (§2.5).
 * - `llm_judge`: the same frozen model judges its own attempt from the question, the schema, the SQL
 *   and a bounded preview of the result rows (one `judge` call per executed attempt; an attempt that
 *   did not execute is rejected without a call). It never reads the gold; the oracle's verdict is
 *   computed for the record only.
 * - `noisy_oracle`: the oracle's denotation verdict of SQL that executed flipped with probability
 *   `feedback_noise` (config; default 0.1), each attempt's draw a hash of (stream seed, query,
 *   attempt), so a resumed or repeated run flips the same attempts. SQL that did not execute is
 *   rejected whatever the draw: the agent sees the DBMS error, so there is no verdict to get wrong.
 *
 * Each is a registered object whose functions the loop calls (lib/repair/feedback-step.ts), never a
 * name it compares: `accept` (required), and with defaults `show` (the status the agent is shown),
 * `verdict` (what a method's hooks read), `stops` (when the loop ends), `acceptance` (what an
 * accepted attempt means to memory), `recordsFeedback`, `perStream` and `rejectsCorrect` (for the
 * plans). A plugin registers its own with `registerFeedback`. A regime receives the oracle's verdict
 * only when it declares `usesOracle`; it never receives the gold. Under every regime that records
 * feedback (all but the oracle's) the trajectory records, per attempt, what the agent was told and
 * what the oracle said (`feedback`), and the report tabulates their confusion.
 * @module
 */
import { MeritError } from "../errors.ts";
import { contentHash } from "../hash.ts";
import type { AttemptStatus } from "../oracle/types.ts";
import { jsonRows } from "./hook-guard.ts";
import { MAX_DECLARED_OUTPUT_TOKENS, type HookModel, type QuestionView } from "./hooks.ts";
import { Registry } from "../registry.ts";

/** What a regime reads about one scored attempt. */
export interface FeedbackInput extends QuestionView {
  /** 0 = the initial SQL, n = repair n. */
  attempt: number;
  streamSeed: number;
  sql: string;
  executed: boolean;
  dbError: string | null;
  /** Up to PREVIEW_ROWS result rows, one JSON array per line ("" when the SQL did not execute). */
  rowsPreview: string;
  /** The oracle's verdict: a boolean only for a regime that declares `usesOracle`, else null. */
  oracleCorrect: boolean | null;
  /** The config's `feedback_noise` (noisy regimes). */
  noise: number;
}

/** What a regime's `show` reads: its own acceptance and what the DBMS said, never the oracle's verdict. */
export interface ShowInput {
  accepted: boolean;
  executed: boolean;
  /** The DBMS's failure when the SQL did not execute, else null. */
  failure: "EXECUTION_ERROR" | "TIMEOUT" | null;
}

/**
 * What an accepted attempt means: `correct` (the regime vouches for it: memory may store it as a
 * success) or `unconfirmed` (it only ended the loop — `dbms_only`'s "it executed" — so memory stores
 * neither a success nor a failure for it).
 */
export type AcceptanceMeaning = "correct" | "unconfirmed";

/** A feedback regime as a plugin registers it: `accept` is required, every other decision has a default. */
export interface FeedbackRegimeDef {
  /** One line for `merit methods` and the docs. */
  summary: string;
  /** Reads the oracle's verdict (ground truth). */
  usesOracle: boolean;
  /** The call kind of its model calls, the most per scored attempt and their output limit (default: the run's max_output_tokens); absent = no model calls. */
  call?: { kind: string; perAttempt: number; maxOutputTokens?: number };
  /** Whether the attempt is accepted. */
  accept(input: FeedbackInput, model: HookModel): boolean | Promise<boolean>;
  /**
   * The status the agent is shown (the repair prompt's `status=`, the trajectory's `statuses`).
   * Default {@link defaultShow}: CORRECT for an accepted attempt, else what the DBMS said (an executed
   * attempt shows as DENOTATION_MISMATCH).
   */
  show?(input: ShowInput): AttemptStatus;
  /**
   * The outcome a method's hooks read for an attempt (AttemptView.status): what the agent observed,
   * never a verdict the regime did not give. Default: the status shown (`show`). `dbms_only` says
   * `EXECUTED` for SQL that ran (it never says whether it was right).
   */
  verdict?(input: ShowInput): string;
  /** Whether the loop stops after the attempt; default: it was accepted. */
  stops?(input: ShowInput): boolean;
  /** What an accepted attempt means to memory; default `correct`. */
  acceptance?: AcceptanceMeaning;
  /**
   * Whether the trajectory records, per attempt, what the agent was told beside the oracle's verdict
   * (`feedback`); default true. False only where acceptance is the oracle's verdict itself, so the
   * record would repeat `statuses`.
   */
  recordsFeedback?: boolean;
  /** Whether its verdict of an attempt may differ between stream orders (it reads `streamSeed`); default true. The plan then replays each order. */
  perStream?: boolean;
  /** Whether it may reject an attempt the oracle scores correct, so an initially correct query may be repaired; default true. Plans count such queries. */
  rejectsCorrect?: boolean;
}

/** A registered regime: every decision a function (or value) the loop calls. */
export interface FeedbackRegime {
  readonly name: string;
  readonly summary: string;
  readonly usesOracle: boolean;
  readonly call?: { kind: string; perAttempt: number; maxOutputTokens?: number };
  accept(input: FeedbackInput, model: HookModel): boolean | Promise<boolean>;
  show(input: ShowInput): AttemptStatus;
  verdict(input: ShowInput): string;
  stops(input: ShowInput): boolean;
  readonly acceptance: AcceptanceMeaning;
  readonly recordsFeedback: boolean;
  readonly perStream: boolean;
  readonly rejectsCorrect: boolean;
}

/** The status shown by default: CORRECT when accepted, else the DBMS's outcome (executed: DENOTATION_MISMATCH). */
export function defaultShow(input: ShowInput): AttemptStatus {
  return input.accepted ? "CORRECT" : (input.failure ?? "DENOTATION_MISMATCH");
}

function regimeOf(name: string, def: FeedbackRegimeDef): FeedbackRegime {
  return Object.freeze({
    name,
    summary: def.summary,
    usesOracle: def.usesOracle,
    ...(def.call ? { call: { ...def.call } } : {}),
    accept: def.accept,
    show: def.show ?? defaultShow,
    verdict: def.verdict ?? def.show ?? defaultShow,
    stops: def.stops ?? ((input: ShowInput) => input.accepted),
    acceptance: def.acceptance ?? "correct",
    recordsFeedback: def.recordsFeedback ?? true,
    perStream: def.perStream ?? true,
    rejectsCorrect: def.rejectsCorrect ?? true,
  });
}

/** The regimes; the kit's four are registered below. */
export const FEEDBACK = new Registry<FeedbackRegime>("feedback regime");

/** Adds a feedback regime (a plugin's), by a lower_snake_case name. */
export function registerFeedback(name: string, def: FeedbackRegimeDef): void {
  if (!/^[a-z][a-z0-9_]{0,39}$/.test(name)) throw new MeritError(`feedback regime "${name}": the name must be lower_snake_case (it is written in trajectories and manifests)`);
  if (typeof def.accept !== "function") throw new MeritError(`feedback regime "${name}": accept must be a function (input, model) => boolean`);
  if (def.call && (!/^[a-z][a-z0-9_]{0,39}$/.test(def.call.kind) || !Number.isInteger(def.call.perAttempt) || def.call.perAttempt < 1)) {
    throw new MeritError(`feedback regime "${name}": call must be { kind: lower_snake_case, perAttempt: a positive integer }`);
  }
  if (def.call?.maxOutputTokens !== undefined && (!Number.isInteger(def.call.maxOutputTokens) || def.call.maxOutputTokens < 1 || def.call.maxOutputTokens > MAX_DECLARED_OUTPUT_TOKENS)) {
    throw new MeritError(`feedback regime "${name}": call.maxOutputTokens must be an integer in 1..${MAX_DECLARED_OUTPUT_TOKENS}, or left out for the run's max_output_tokens`);
  }
  for (const f of ["show", "verdict", "stops"] as const) {
    if (def[f] !== undefined && typeof def[f] !== "function") throw new MeritError(`feedback regime "${name}": ${f} must be a function (input) => …, or left out for the default`);
  }
  if (def.acceptance !== undefined && def.acceptance !== "correct" && def.acceptance !== "unconfirmed") throw new MeritError(`feedback regime "${name}": acceptance must be "correct" or "unconfirmed"`);
  FEEDBACK.register(name, regimeOf(name, def));
}

/** The regime of a name (throws one line naming the known ones). */
export function getFeedback(name: string): FeedbackRegime {
  return FEEDBACK.get(name);
}

/** The regime whose verdict the paper uses (and the on-disk name of `oracle`). */
export const ORACLE_REGIME = "denotation_confirmed";

/** `noisy_oracle`'s flip probability when the config sets no `feedback_noise`. */
export const DEFAULT_FEEDBACK_NOISE = 0.1;

/** Rows a judge sees at most, and characters per row. */
export const PREVIEW_ROWS = 5;
const PREVIEW_ROW_CHARS = 200;

/** A bounded preview of result rows: the first PREVIEW_ROWS rows as JSON arrays (bigints as digits, blobs as hex), each cut to 200 characters. */
export function rowsPreview(rows: readonly (readonly unknown[])[] | null): string {
  if (rows === null) return "";
  // JSON-safe cells (64-bit integers, blobs; lib/methods/hook-guard.ts), as hooks get every row
  const lines = jsonRows(rows.slice(0, PREVIEW_ROWS)).map((r) => {
    const text = JSON.stringify(r);
    return text.length > PREVIEW_ROW_CHARS ? `${text.slice(0, PREVIEW_ROW_CHARS - 3)}...` : text;
  });
  const more = rows.length > PREVIEW_ROWS ? [`(${rows.length - PREVIEW_ROWS} more rows)`] : [];
  return [...lines, ...more].join("\n") || "(no rows)";
}

/** The judge prompt (format `merit-judge-v1`): question, schema, SQL and result preview; never the gold. */
export function judgePrompt(input: FeedbackInput): string {
  return [
    "PROMPT_VERSION: merit-judge-v1",
    "You check whether a SQLite query answers a question. Judge only from the question, the schema and the query's result.",
    "",
    "DATABASE SCHEMA:",
    input.schema,
    "",
    "QUESTION:",
    input.question,
    ...(input.evidence ? ["", "EVIDENCE:", input.evidence] : []),
    "",
    "QUERY:",
    input.sql,
    "",
    "RESULT (first rows):",
    input.rowsPreview,
    "",
    "Does the query answer the question? Reply with <verdict>correct</verdict> or <verdict>incorrect</verdict>.",
  ].join("\n");
}

/** The judge's verdict: the first `<verdict>` tag, else the first of the words correct / incorrect; anything else rejects. */
export function parseJudgeVerdict(response: string): boolean {
  const tagged = /<verdict>\s*(correct|incorrect)\s*<\/verdict>/i.exec(response);
  if (tagged) return tagged[1].toLowerCase() === "correct";
  const word = /\b(incorrect|correct)\b/i.exec(response);
  return word !== null && word[1].toLowerCase() === "correct";
}

/** A uniform draw in [0, 1) for one attempt of one query in one stream order (noisy_oracle). */
export function noiseDraw(streamSeed: number, queryId: string, attempt: number): number {
  const hex = contentHash(["noisy_oracle", streamSeed, queryId, attempt]);
  return parseInt(hex.slice(0, 13), 16) / 16 ** 13;
}

registerFeedback(ORACLE_REGIME, {
  summary: "the execution-accuracy oracle's verdict (the paper; also spelled `oracle`)",
  usesOracle: true,
  accept: (input) => input.oracleCorrect === true,
  // acceptance is the oracle's verdict: the default show is the oracle's status, and a per-attempt record would repeat it
  recordsFeedback: false,
  perStream: false,
  rejectsCorrect: false,
});

registerFeedback("dbms_only", {
  summary: "only whether the SQL executed; correctness is never shown (METHOD.md §2.5)",
  usesOracle: false,
  accept: (input) => input.executed,
  // The paper's prompt under dbms_only shows an executed attempt as DENOTATION_MISMATCH (never CORRECT);
  // hooks read the truth of what was observed: it executed.
  show: (input) => input.failure ?? "DENOTATION_MISMATCH",
  verdict: (input) => input.failure ?? "EXECUTED",
  acceptance: "unconfirmed",
  perStream: false,
  // an attempt the oracle scores correct executed, so it is accepted
  rejectsCorrect: false,
});

registerFeedback("llm_judge", {
  summary: "the frozen model judges its own attempt from question, schema, SQL and up to 5 result rows (1 judge call per executed attempt)",
  usesOracle: false,
  call: { kind: "judge", perAttempt: 1 },
  perStream: false,
  async accept(input, model) {
    if (!input.executed) return false;
    return parseJudgeVerdict(await model.generate("judge", judgePrompt(input)));
  },
});

registerFeedback("noisy_oracle", {
  summary: "the oracle's denotation verdict of executed SQL flipped with probability feedback_noise (default 0.1), seeded per attempt; SQL that did not run is always rejected",
  usesOracle: true,
  // The noise models a wrong judgement of a result, so it applies to the denotation verdict only: SQL
  // that did not execute has no result to misjudge (the agent sees the DBMS error) and is rejected.
  accept: (input) => input.executed && (input.oracleCorrect === true) !== noiseDraw(input.streamSeed, input.queryId, input.attempt) < input.noise,
});
