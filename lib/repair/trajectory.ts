/**
 * Repair stage, trajectory record (METHOD.md §6.1, §6.5, §8): one line of `trajectories.jsonl` per
 * query episode, the only input the metrics, tables and figures read. Keys are snake_case on disk.
 * @module
 */
import { z } from "zod";
import { parseJsonLines } from "../data/json-file.ts";
import type { JsonValue } from "../hash.ts";
import { ATTEMPT_STATUSES } from "../oracle/types.ts";

// The classifier owns the failure-type vocabulary (METHOD.md §3); trajectories store it as is.
export { ERROR_TYPES, type ErrorType } from "../classify.ts";

/**
 * What produced an LLM call: the shared initial cache (always first), a reflection or a repair — the
 * kit's kinds — or a kind a method's hooks declare (`distill`, `judge`, …; lib/methods/hooks.ts). The
 * run checks every kind against its method's declaration; on disk any lower_snake_case kind parses.
 */
export const CALL_KINDS = ["initial_cache", "reflection", "repair"] as const;
export type CallKind = (typeof CALL_KINDS)[number];
const callKind = z.string().regex(/^[a-z][a-z0-9_]{0,39}$/, "is not a call kind (lower_snake_case)");

/** A note a method's memory hook wrote once its episode was final, as the trajectory records it. */
export const NoteSchema = z
  .object({
    note_id: z.string().min(1),
    kind: callKind,
    text: z.string().min(1),
    key: z.string(),
    polarity: z.enum(["positive", "negative", "neutral"]),
    data: z.custom<JsonValue>((v) => v !== undefined),
    source_query_id: z.string().min(1),
    source_db_id: z.string().min(1),
    source_stream_position: z.number().int().nonnegative(),
    source_episode_id: z.string().min(1),
    /** The notes this one replaces (absent when it revises none). */
    supersedes: z.array(z.string().min(1)).min(1).optional(),
  })
  .strict();

const count = z.number().int().nonnegative();

/**
 * Per-episode accounting (METHOD.md §6.5): the 11 integer fields of the reference plus the kit's
 * `truncations` (METHOD.md §11.5). Every field is a count for this one query. Call-cache hits are
 * deliberately NOT here: a warm or resumed re-run must reproduce trajectories byte for byte, so cache
 * statistics live in the run's stdout.log and the call cache itself.
 */
export const AccountingSchema = z
  .object({
    /** Prompt tokens of the initial (cached) call. */
    initial_prompt_tokens: count,
    /** Output tokens of the initial (cached) call, EOS included when emitted. */
    initial_output_tokens: count,
    /** Prompt tokens of every reflection and repair call. */
    repair_prompt_tokens: count,
    /** Output tokens of every reflection and repair call. */
    repair_output_tokens: count,
    /** initial_prompt_tokens + repair_prompt_tokens. */
    total_prompt_tokens: count,
    /** initial_output_tokens + repair_output_tokens. */
    total_output_tokens: count,
    /** total_prompt_tokens + total_output_tokens. */
    total_tokens: count,
    /** 1 (initial) + reflections + repairs; calls served by the call cache count too. */
    llm_calls: count,
    /** SQL executions by the oracle for this episode (gold and prediction). */
    db_executions: count,
    /** Query embeddings computed + 1 per planned memory insertion (+ transductive pre-pass). */
    embedding_calls: count,
    /**
     * Tokens of the texts behind embedding_calls (special tokens not counted), by the embedder's own
     * tokenizer whether the vector was cached or computed (METHOD.md §12.1, "Cost"); absent when the embedder
     * cannot count them (a remote one without a local GGUF of its model) and in runs of earlier kits.
     */
    embedding_tokens: count.optional(),
    /** 1 per repair step for memory methods, 0 for memoryless ones. */
    retrieval_calls: count,
    /** LLM calls whose prompt was left-truncated at max_input_tokens (kit addition, §11.5). */
    truncations: count,
  })
  .strict();
export type Accounting = z.infer<typeof AccountingSchema>;

/** The integer accounting fields, in the order above (used for sums over a run). */
export const ACCOUNTING_FIELDS = Object.keys(AccountingSchema.shape) as (keyof Accounting)[];

/**
 * One query episode. Per-attempt arrays (`attempts`, `statuses`, `db_errors`, `error_types`) have one
 * element per attempt, attempt 0 being the cached initial SQL; per-call arrays (`prompt_tokens`,
 * `output_tokens`, `call_kinds`, `truncated_prompt_tokens`) have one element per LLM call.
 * @example
 * {"query_id":"17","db_id":"concert_singer","source_index":17,"stream_position":402,"dataset":"spider",
 *  "method":"iterative","stream_seed":0,"feedback_regime":"denotation_confirmed",
 *  "attempts":["SELECT nme FROM singer","SELECT name FROM singer"],
 *  "statuses":["EXECUTION_ERROR","CORRECT"],"db_errors":["no such column: nme",null],
 *  "error_types":["Schema Linking",null],"initial_correct":false,"final_correct":true,"repair_steps":1,
 *  "prompt_tokens":[812,1033],"output_tokens":[21,25],"call_kinds":["initial_cache","repair"],
 *  "initial_tokens_known":true,"truncated_prompt_tokens":[0,0],"reflections":[],"accounting":{...},
 *  "retrieved_entry_ids":[[]]}
 */
export const TrajectorySchema = z
  .object({
    /** Query id: BIRD `question_id`, Spider the 0-based source index, as a string (METHOD.md §1.2). */
    query_id: z.string().min(1),
    /** Database the query runs on. */
    db_id: z.string().min(1),
    /** 0-based position of the example in the dataset file. */
    source_index: count,
    /** 0-based position of the episode in this run's stream (METHOD.md §11.4). */
    stream_position: count,
    /** Dataset name, e.g. `spider` or `bird`; lets tables group runs without the manifest. */
    dataset: z.string().min(1),
    /** Method name as registered in lib/repair (e.g. `merit`, `iterative`, `reflexion`). */
    method: z.string().min(1),
    /** Stream-order seed of the run (0, 1 or 2 in the paper). */
    stream_seed: count,
    /** Feedback regime of the run (METHOD.md §2.5). */
    feedback_regime: z.string().regex(/^[a-z][a-z0-9_]{0,39}$/),
    /** SQL of every attempt, attempt 0 = cached initial SQL; "" when the model output had no SQL. */
    attempts: z.array(z.string()).min(1),
    /** Oracle status of every attempt. */
    statuses: z.array(z.enum(ATTEMPT_STATUSES)),
    /** DBMS error text of every attempt, null when the attempt executed (METHOD.md §2.6). */
    db_errors: z.array(z.string().nullable()),
    /**
     * Error type of every attempt; null exactly for CORRECT attempts: the classifier's (METHOD.md §3,
     * ERROR_TYPES), or a label of the method's classify hook (its declared types, checked by the run).
     */
    error_types: z.array(z.string().min(1).max(60).nullable()),
    /** Cached oracle label of the initial SQL (Success@1). */
    initial_correct: z.boolean(),
    /**
     * The failure type of an initial attempt the oracle scores wrong but the feedback showed as CORRECT
     * (its `error_types[0]` is then null), classified from what the DBMS said of it: the initial
     * failure breakdown (Table 5) reads it (issue 39 item 1). Absent for every other trajectory.
     */
    initial_failure_type: z.string().min(1).max(60).optional(),
    /** The oracle's verdict of the last attempt (whatever the feedback regime showed the agent). */
    final_correct: z.boolean(),
    /** Number of repair generations = attempts.length − 1 (≤ K = 7). */
    repair_steps: count,
    /** false when the initial SQL was imported from a predictions file: its token counts are unknown and recorded as 0. */
    initial_tokens_known: z.boolean(),
    /** Prompt tokens per LLM call, after left truncation (METHOD.md §6.5). */
    prompt_tokens: z.array(count).min(1),
    /** Generated tokens per LLM call, EOS included when emitted. */
    output_tokens: z.array(count).min(1),
    /** Kind of each LLM call; the first is always `initial_cache`. */
    call_kinds: z.array(callKind).min(1),
    /** Prompt tokens dropped by left truncation per LLM call (0 = not truncated). */
    truncated_prompt_tokens: z.array(count).min(1),
    /** Reflexion reflections of this episode, in order ([] for other methods). */
    reflections: z.array(z.string()),
    /** Episode totals (METHOD.md §6.5 plus truncations). */
    accounting: AccountingSchema,
    /** Memory entry ids retrieved at each repair step (index 0 = repair 1); [] for memoryless methods. */
    retrieved_entry_ids: z.array(z.array(z.string())),
    /**
     * LLM calls a server refused deterministically (issue 16 §2): the call's index in `call_kinds` and
     * the server's message. Such a call has no text and 0 output tokens. Absent when there were none.
     */
    failed_generations: z.array(z.object({ call: count, message: z.string() }).strict()).min(1).optional(),
    /**
     * Calls of a declared kind (a method's hooks', a judging feedback regime's) that generated up to
     * their kind's output limit, so their text may be cut: indices in `call_kinds`, ascending. The
     * hook was told (`HookReply.truncated`); the cost table counts them per kind. Absent when none.
     */
    truncated_outputs: z.array(count).min(1).optional(),
    /**
     * The notes the method's memory hook wrote once this episode was final (lib/methods/hooks.ts),
     * stored after this line is committed; present ([] when none) exactly for methods with a memory hook.
     */
    memory_writes: z.array(NoteSchema).optional(),
    /**
     * Ids of earlier notes this episode's write took out of the memory (superseded by its notes, or
     * retired); they leave after this line is committed. Absent when it revised nothing.
     */
    memory_retires: z.array(z.string().min(1)).min(1).optional(),
    /**
     * A judging method's own verdict of this episode (its memory write's `verdict`: did its judge call
     * take the episode for a success?), for the report's judge-agreement table against `final_correct`.
     * Absent for every method that does not judge.
     */
    judged_success: z.boolean().optional(),
    /**
     * Under every regime that records it (all but the oracle's, `denotation_confirmed`, whose
     * acceptance is the oracle's verdict: its `recordsFeedback` is false): per attempt, whether the
     * feedback accepted it and whether the oracle scores it correct (for the report's confusion
     * table). Absent under the oracle, whose statuses already say both.
     */
    feedback: z.object({ accepted: z.array(z.boolean()), oracle_correct: z.array(z.boolean()) }).strict().optional(),
  })
  .strict()
  .superRefine((t, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: z.ZodIssueCode.custom, path: [path], message });
    const n = t.attempts.length;
    for (const key of ["statuses", "db_errors", "error_types"] as const) {
      if (t[key].length !== n) issue(key, `has ${t[key].length} elements but attempts has ${n}; write one per attempt`);
    }
    const calls = t.call_kinds.length;
    for (const key of ["prompt_tokens", "output_tokens", "truncated_prompt_tokens"] as const) {
      if (t[key].length !== calls) issue(key, `has ${t[key].length} elements but call_kinds has ${calls}; write one per LLM call`);
    }
    if (t.repair_steps !== n - 1) issue("repair_steps", `is ${t.repair_steps} but attempts.length − 1 is ${n - 1}`);
    if (t.retrieved_entry_ids.length !== t.repair_steps) {
      issue("retrieved_entry_ids", `has ${t.retrieved_entry_ids.length} steps but repair_steps is ${t.repair_steps}; write [] for steps without retrieval`);
    }
    if (t.call_kinds[0] !== "initial_cache" || t.call_kinds.lastIndexOf("initial_cache") !== 0) {
      issue("call_kinds", "must start with the single `initial_cache` call");
    }
    const repairs = t.call_kinds.filter((k) => k === "repair").length;
    if (repairs !== t.repair_steps) issue("call_kinds", `has ${repairs} repair calls but repair_steps is ${t.repair_steps}`);
    t.error_types.forEach((type, i) => {
      if ((type === null) !== (t.statuses[i] === "CORRECT")) issue("error_types", `attempt ${i}: error type must be null exactly when the status is CORRECT`);
    });
    // Without a feedback record the statuses are the oracle's verdict (a regime records one unless its acceptance is that verdict).
    if (!t.feedback) {
      if (t.initial_correct !== (t.statuses[0] === "CORRECT")) issue("initial_correct", "disagrees with statuses[0]");
      if (t.final_correct !== (t.statuses[n - 1] === "CORRECT")) issue("final_correct", "disagrees with the last status");
    }
    if (t.feedback && (t.feedback.accepted.length !== n || t.feedback.oracle_correct.length !== n)) issue("feedback", `has ${t.feedback.accepted.length} and ${t.feedback.oracle_correct.length} entries but attempts has ${n}; write one per attempt`);
    if (t.feedback && t.final_correct !== t.feedback.oracle_correct[n - 1]) issue("final_correct", "disagrees with feedback.oracle_correct of the last attempt");
    if (t.initial_failure_type !== undefined && (t.initial_correct || t.statuses[0] !== "CORRECT")) issue("initial_failure_type", "is written only for an initial failure the feedback showed as CORRECT");
    if (t.judged_success !== undefined && !t.memory_writes) issue("judged_success", "is present but memory_writes is not; only a method with a memory hook records a judge's verdict");
    if (t.memory_retires && !t.memory_writes) issue("memory_retires", "is present but memory_writes is not; only a method with a memory hook revises notes");
    for (const id of t.memory_retires ?? []) {
      if ((t.memory_writes ?? []).some((n) => n.note_id === id)) issue("memory_retires", `retires note ${id}, which this episode wrote`);
    }
    for (const n of t.memory_writes ?? []) {
      if (n.source_query_id !== t.query_id || n.source_stream_position !== t.stream_position) issue("memory_writes", `note ${n.note_id} names query ${n.source_query_id} at position ${n.source_stream_position}, not this episode`);
    }
    for (const [j, c] of (t.truncated_outputs ?? []).entries()) {
      if (c === 0 || c >= calls || ["initial_cache", "reflection", "repair"].includes(t.call_kinds[c])) issue("truncated_outputs", `call ${c} is not a call of a declared kind`);
      else if (j > 0 && c <= t.truncated_outputs![j - 1]) issue("truncated_outputs", "must list call indices in ascending order, once each");
    }
    for (const f of t.failed_generations ?? []) {
      if (f.call === 0 || f.call >= calls) issue("failed_generations", `call ${f.call} is not a reflection or repair call (1..${calls - 1})`);
      else if (t.output_tokens[f.call] !== 0) issue("failed_generations", `call ${f.call} failed but has ${t.output_tokens[f.call]} output tokens`);
    }
    checkAccounting(t, issue);
  });
export type Trajectory = z.infer<typeof TrajectorySchema>;

/** The accounting identities of METHOD.md §6.5 that the per-call arrays determine. */
function checkAccounting(t: z.infer<typeof TrajectorySchema>, issue: (path: string, message: string) => void): void {
  const a = t.accounting;
  const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
  const expected: Partial<Accounting> = {
    initial_prompt_tokens: t.prompt_tokens[0],
    initial_output_tokens: t.output_tokens[0],
    repair_prompt_tokens: sum(t.prompt_tokens.slice(1)),
    repair_output_tokens: sum(t.output_tokens.slice(1)),
    total_prompt_tokens: sum(t.prompt_tokens),
    total_output_tokens: sum(t.output_tokens),
    total_tokens: sum(t.prompt_tokens) + sum(t.output_tokens),
    llm_calls: t.call_kinds.length,
    truncations: t.truncated_prompt_tokens.filter((x) => x > 0).length,
  };
  for (const [key, value] of Object.entries(expected) as [keyof Accounting, number][]) {
    if (a[key] !== value) issue("accounting", `${key} is ${a[key]} but the per-call arrays give ${value}`);
  }
}

/**
 * Parse the text of a `trajectories.jsonl` file (one record per non-blank line). A malformed line
 * fails loudly with the file, the 1-based line number and the path to the bad field.
 */
export function parseTrajectoryLines(text: string, file: string): Trajectory[] {
  return parseJsonLines(text, file, { json: "rewrite the line or re-run the episode", schema: "the trajectory does not follow METHOD.md §6.5; re-run the episode" }, TrajectorySchema);
}
