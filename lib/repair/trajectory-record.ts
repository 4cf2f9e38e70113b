/**
 * Repair stage: an episode result as the `trajectories.jsonl` record (METHOD.md §6.5 accounting),
 * and back to the finished episode that memory finalization reads (used when a run resumes).
 * @module
 */
import type { Example } from "../data/types.ts";
import type { EpisodeAttempt, FinishedEpisode } from "../memory/finalize.ts";
import { getFeedback } from "../methods/feedback.ts";
import type { EpisodeResult, EpisodeSpec } from "./episode.ts";
import { TrajectorySchema, type Accounting, type Trajectory } from "./trajectory.ts";

/** The token fields of the accounting (METHOD.md §6.5) from per-call prompt and output token counts, initial call first. */
export function tokenAccounting(prompt: readonly number[], output: readonly number[]) {
  const sum = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0);
  return {
    initial_prompt_tokens: prompt[0],
    initial_output_tokens: output[0],
    repair_prompt_tokens: sum(prompt.slice(1)),
    repair_output_tokens: sum(output.slice(1)),
    total_prompt_tokens: sum(prompt),
    total_output_tokens: sum(output),
    total_tokens: sum(prompt) + sum(output),
  } satisfies Partial<Accounting>;
}

/**
 * The trajectory of a finished episode. `plannedInsertions` is the number of texts memory insertion
 * will embed for this episode — 1 when finalization produced an entry (METHOD.md §6.5), a memory
 * hook's written notes when it embeds them — billed to it; the hooks' own embeddings are added.
 * `plannedInsertionTokens` are those texts' embedding tokens (null: not countable).
 */
export function toTrajectory(spec: EpisodeSpec, result: EpisodeResult, plannedInsertions: number, plannedInsertionTokens: number | null = 0): Trajectory {
  const { attempts, calls } = result;
  const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
  const prompt = calls.map((c) => c.promptTokens);
  const output = calls.map((c) => c.outputTokens);
  const accounting: Accounting = {
    ...tokenAccounting(prompt, output),
    llm_calls: calls.length,
    db_executions: sum(attempts.map((a) => a.dbExecutions)),
    embedding_calls: result.queryEmbeddings + result.hookEmbeddings + plannedInsertions,
    ...(result.embeddingTokens !== null && plannedInsertionTokens !== null ? { embedding_tokens: result.embeddingTokens + plannedInsertionTokens } : {}),
    retrieval_calls: result.retrievalLog.length,
    truncations: calls.filter((c) => c.truncatedPromptTokens > 0).length,
  };
  const last = attempts[attempts.length - 1];
  const trajectory: Trajectory = {
    query_id: spec.example.id,
    db_id: spec.example.dbId,
    source_index: spec.example.sourceIndex,
    stream_position: spec.streamPosition,
    dataset: spec.dataset,
    method: spec.method.name,
    stream_seed: spec.streamSeed,
    feedback_regime: spec.feedbackRegime,
    attempts: attempts.map((a) => a.sql),
    statuses: attempts.map((a) => a.status),
    db_errors: attempts.map((a) => a.dbError),
    error_types: attempts.map((a) => a.errorType),
    initial_correct: attempts[0].confirmedCorrect,
    final_correct: last.confirmedCorrect,
    repair_steps: attempts.length - 1,
    initial_tokens_known: spec.initial.prompt_tokens !== null && spec.initial.output_tokens !== null,
    prompt_tokens: prompt,
    output_tokens: output,
    call_kinds: calls.map((c) => c.kind),
    truncated_prompt_tokens: calls.map((c) => c.truncatedPromptTokens),
    reflections: result.reflections,
    accounting,
    retrieved_entry_ids: result.retrieved,
  };
  // Only written when a server refused a call, so trajectories without failures keep their bytes.
  const failures = calls.flatMap((c, i) => (c.failure === null ? [] : [{ call: i, message: c.failure }]));
  if (failures.length > 0) trajectory.failed_generations = failures;
  // Likewise only when a declared kind's call reached its output limit.
  const truncatedOutputs = calls.flatMap((c, i) => (c.outputTruncated ? [i] : []));
  if (truncatedOutputs.length > 0) trajectory.truncated_outputs = truncatedOutputs;
  // Only where the feedback accepted an initial failure, so every other trajectory keeps its bytes.
  if (result.initialFailureType !== null) trajectory.initial_failure_type = result.initialFailureType;
  if (getFeedback(spec.feedbackRegime).recordsFeedback) trajectory.feedback = { accepted: attempts.map((a) => a.accepted), oracle_correct: attempts.map((a) => a.confirmedCorrect) };
  // Only for a method with a memory hook, so the paper's methods keep their bytes.
  if (result.notes !== null) trajectory.memory_writes = result.notes;
  // Only when the write revised the memory (METHOD.md §12.4), so other trajectories keep their bytes.
  if (result.retired.length > 0) trajectory.memory_retires = result.retired;
  // Only for a method whose write judged the episode, so every other trajectory keeps its bytes.
  if (result.judgedSuccess !== null) trajectory.judged_success = result.judgedSuccess;
  return TrajectorySchema.parse(trajectory);
}

/** The finished episode of a committed trajectory (for replaying memory insertions on resume). */
export function finishedFromTrajectory(t: Trajectory, example: Example, schema: string): FinishedEpisode {
  const regime = getFeedback(t.feedback_regime);
  const attempts: EpisodeAttempt[] = t.attempts.map((sql, i) => {
    const executed = t.statuses[i] === "CORRECT" || t.statuses[i] === "DENOTATION_MISMATCH";
    // The feedback's acceptance as memory read it: recorded per attempt, or (a regime that records
    // none, its acceptance being the oracle's verdict) shown as CORRECT.
    const accepted = t.feedback ? t.feedback.accepted[i] : t.statuses[i] === "CORRECT";
    return {
      sql,
      status: t.statuses[i],
      predictedExecOk: executed,
      dbError: t.db_errors[i],
      acceptance: accepted ? regime.acceptance : "rejected",
      errorType: t.error_types[i],
    };
  });
  return {
    dataset: t.dataset,
    method: t.method,
    streamOrderSeed: t.stream_seed,
    streamPosition: t.stream_position,
    queryId: t.query_id,
    dbId: t.db_id,
    question: example.question,
    schema,
    feedbackRegime: t.feedback_regime,
    attempts,
    retrievedEntryIds: t.retrieved_entry_ids.length > 0 ? t.retrieved_entry_ids[t.retrieved_entry_ids.length - 1] : [],
  };
}
