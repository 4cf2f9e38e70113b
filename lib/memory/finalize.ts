/**
 * Memory stage (METHOD.md §4.3): turns a finished episode into at most ONE memory entry — a
 * positive for the last repaired transition, a negative for an unsuccessful episode, or nothing.
 * Pure: the caller inserts the result into a MemoryStore after the trajectory is committed.
 * @module
 */
import { MeritError } from "../errors.ts";
import { contentHash } from "../hash.ts";
import type { AttemptStatus, FeedbackRegime } from "../oracle/types.ts";
import { observationOf, validateEntry, type ApplicabilityScope, type MemoryEntry, type Polarity } from "./entry.ts";
import { entryId, sqlDelta } from "./identity.ts";

/** The error type stored when an attempt's classification is null (METHOD.md §3). */
export const NULL_CLASSIFICATION_MEMORY_TYPE = "Result Mismatch";

/** What a feedback regime's acceptance of an attempt tells memory (EpisodeAttempt.acceptance). */
export type Acceptance = "correct" | "rejected" | "unconfirmed";

/** One attempt of an episode as finalization reads it (attempt 0 = cached initial SQL). */
export interface EpisodeAttempt {
  /** The attempt's SQL as extracted (may be ""). */
  sql: string;
  status: AttemptStatus;
  /** true iff the attempt executed (CORRECT or DENOTATION_MISMATCH). */
  predictedExecOk: boolean;
  dbError: string | null;
  /**
   * What the feedback regime's acceptance tells memory (lib/methods/feedback.ts): `correct` (accepted
   * as correct: under the paper's regime, the oracle's verdict), `rejected`, or `unconfirmed` (accepted
   * without a correctness verdict: `dbms_only`'s executed attempts).
   */
  acceptance: Acceptance;
  /** Classifier `error_type` of this attempt's outcome; null when CORRECT or not classified. */
  errorType: string | null;
}

/** A finished episode (METHOD.md §6.1) with everything an entry records. */
export interface FinishedEpisode {
  dataset: string;
  /** Method name as configured (part of the episode id). */
  method: string;
  streamOrderSeed: number;
  /** 0-based stream position of this episode. */
  streamPosition: number;
  queryId: string;
  dbId: string;
  question: string;
  /** Rendered schema text (METHOD.md §1.3). */
  schema: string;
  feedbackRegime: FeedbackRegime;
  /** attempts[0] is the initial SQL; attempts.length − 1 = number of repairs. */
  attempts: readonly EpisodeAttempt[];
  /** Entry IDs retrieved at the LAST repair step, [] when none. */
  retrievedEntryIds: readonly string[];
}

/** What a method's memory writer stores (lib/memory/writer.ts, lib/methods/builtin-parts.ts). */
export interface MemoryWriteFlags {
  /** false for memoryless methods: nothing is ever written. */
  updatesGlobalMemory: boolean;
  /** Store positives (every memory method). */
  writesPositive: boolean;
  /** Store negatives (false for `positive_only` and `dynamic_rag`). */
  writesNegative: boolean;
  /** Scope given to written entries (`cross_database` for `cross_database_only`). */
  scope: ApplicabilityScope;
}

/** An episode that cannot be finalized (no attempts); names the episode and the fix. */
export class EpisodeShapeError extends MeritError {
  constructor(queryId: string, problem: string) {
    super(`episode for query ${queryId}: ${problem}; pass every attempt, starting with the initial SQL (attempt 0)`);
    this.name = "EpisodeShapeError";
  }
}

/** `source_episode_id` = content_hash of [dataset, method, stream_order_seed, stream_position, query_id]. */
export function episodeId(dataset: string, method: string, streamOrderSeed: number, streamPosition: number, queryId: string): string {
  return contentHash([dataset, method, streamOrderSeed, streamPosition, queryId]);
}

/** `attempted_sql=<sql>; status=<STATUS>; db_error=<msg or (none)>` (an empty message counts as none). */
export function failureContext(attempt: Pick<EpisodeAttempt, "sql" | "status" | "dbError">): string {
  return `attempted_sql=${attempt.sql}; status=${attempt.status}; db_error=${attempt.dbError ? attempt.dbError : "(none)"}`;
}

/** Prefix of a positive entry's successful_direction. */
export const SUCCESSFUL_DIRECTION_PREFIX = "Observed successful transition: ";

/**
 * The entry an episode leaves in memory, or null (METHOD.md §4.3):
 * - nothing for memoryless methods, or when the initial SQL was already correct;
 * - POSITIVE iff ≥ 1 repair and the feedback accepted the final attempt as correct (under the
 *   paper's regime: the oracle's verdict): type of attempt n−1, delta n−1 => n, failure context of
 *   attempt n−1, outcome CORRECT, iteration n (only the last transition);
 * - NEGATIVE iff the final attempt is not correct, unless the method stores no negatives or the
 *   feedback accepted it without a correctness verdict (`unconfirmed`: under `dbms_only`, it
 *   executed): type, context and outcome of attempt n, delta n−1 => n (or `initial SQL => …` when n = 0).
 */
export function finalizeEpisode(episode: FinishedEpisode, flags: MemoryWriteFlags): MemoryEntry | null {
  const attempts = episode.attempts;
  if (attempts.length === 0) throw new EpisodeShapeError(episode.queryId, "no attempts");
  if (!flags.updatesGlobalMemory) return null;
  const n = attempts.length - 1;
  const last = attempts[n];
  const previous = n > 0 ? attempts[n - 1] : null;

  if (n > 0 && last.acceptance === "correct") {
    if (!flags.writesPositive) return null;
    return buildEntry(episode, flags, "positive", previous as EpisodeAttempt, last, n);
  }
  if (last.status === "CORRECT") return null; // n = 0: initially correct, nothing to learn
  if (!flags.writesNegative) return null;
  if (last.acceptance === "unconfirmed") return null;
  return buildEntry(episode, flags, "negative", last, last, n);
}

/**
 * The transductive_batch pre-pass entry (METHOD.md §5.6): before the stream starts, a NEGATIVE
 * `initial SQL => <sql>` at iteration 0 for every initially failed query; null when attempt 0 is
 * correct. Kit decision: its episode id hashes [dataset, method, seed, position, query_id,
 * "transductive_prepass"], so the episode's own deferred entry is not skipped as a duplicate.
 */
export function transductivePrepassEntry(episode: FinishedEpisode, flags: MemoryWriteFlags): MemoryEntry | null {
  if (episode.attempts.length === 0) throw new EpisodeShapeError(episode.queryId, "no attempts");
  const initial = episode.attempts[0];
  if (!flags.updatesGlobalMemory || !flags.writesNegative || initial.status === "CORRECT") return null;
  const prepass = { ...episode, attempts: [initial], retrievedEntryIds: [] };
  const entry = buildEntry(prepass, flags, "negative", initial, initial, 0);
  const id = contentHash([episode.dataset, episode.method, episode.streamOrderSeed, episode.streamPosition, episode.queryId, "transductive_prepass"]);
  const withId = { ...entry, source_episode_id: id };
  return validateEntry({ ...withId, provenance_history: [observationOf(withId)] });
}

/** `failed` supplies type and failure context; `final` supplies outcome; delta is n−1 => n. */
function buildEntry(
  episode: FinishedEpisode,
  flags: MemoryWriteFlags,
  polarity: Polarity,
  failed: EpisodeAttempt,
  final: EpisodeAttempt,
  n: number,
): MemoryEntry {
  const errorType = failed.errorType ?? NULL_CLASSIFICATION_MEMORY_TYPE;
  const delta = sqlDelta(n > 0 ? episode.attempts[n - 1].sql : null, final.sql);
  const isPositive = polarity === "positive";
  const base = {
    source_query_id: episode.queryId,
    source_db_id: episode.dbId,
    source_episode_id: episodeId(episode.dataset, episode.method, episode.streamOrderSeed, episode.streamPosition, episode.queryId),
    source_stream_position: episode.streamPosition,
    source_iteration: n,
    polarity,
    provenance: {
      method_name: episode.method,
      feedback_regime: episode.feedbackRegime,
      retrieved_entry_ids: [...episode.retrievedEntryIds],
    },
    question: episode.question,
    schema: episode.schema,
    failure_context: failureContext(failed),
    attempted_sql_delta: delta,
    successful_direction: isPositive ? SUCCESSFUL_DIRECTION_PREFIX + delta : "",
    observed_outcome: isPositive ? ("CORRECT" as const) : final.status,
    observed_db_error: isPositive ? null : final.dbError,
  };
  return validateEntry({
    ...base,
    entry_id: entryId(errorType, delta),
    error_type: errorType,
    applicability_scope: flags.scope,
    confirmation_count: 1,
    success_count: isPositive ? 1 : 0,
    failure_count: isPositive ? 0 : 1,
    provenance_history: [observationOf(base)],
  });
}
