/**
 * Memory stage (METHOD.md §4.1): the shape of one memory entry, the observation record kept in its
 * provenance history, and entry validation. Field names are snake_case exactly as written to
 * `memory_positive.jsonl` / `memory_negative.jsonl`, so the same object is used in memory and on disk.
 * @module
 */
import { MeritError } from "../errors.ts";
import type { AttemptStatus, FeedbackRegime } from "../oracle/types.ts";

/** Which evidence an entry carries: a confirmed repair (`positive`) or an observed failure (`negative`). */
export type Polarity = "positive" | "negative";

export const POLARITIES: readonly Polarity[] = ["positive", "negative"];

/**
 * Where an entry may be retrieved (METHOD.md §4.1, §4.7 rule 6). `global` is the default,
 * `cross_database` is written by `cross_database_only` runs; `same_database` exists in the enum
 * but no method creates it.
 */
export type ApplicabilityScope = "global" | "cross_database" | "same_database";

export const APPLICABILITY_SCOPES: readonly ApplicabilityScope[] = ["global", "cross_database", "same_database"];

/** How an entry came to be (METHOD.md §4.1 `provenance`). */
export interface EntryProvenance {
  /** Method (policy) name of the run that wrote the entry, e.g. `merit`. */
  method_name: string;
  feedback_regime: FeedbackRegime;
  /** Entry IDs retrieved at the LAST repair step of the source episode, or [] (no repair / no retrieval). */
  retrieved_entry_ids: string[];
}

/**
 * One observation (one finalized episode) as kept in `provenance_history`: the 14 fields of
 * METHOD.md §4.1. Merging two entries unions their histories (dedup by canonical JSON).
 */
export interface ObservationRecord {
  source_query_id: string;
  source_db_id: string;
  /** content_hash of [dataset, method, stream_order_seed, stream_position, query_id]. */
  source_episode_id: string;
  /** 0-based stream position of the source episode. */
  source_stream_position: number;
  /** Index of the final attempt (= number of repairs in the episode). */
  source_iteration: number;
  polarity: Polarity;
  provenance: EntryProvenance;
  question: string;
  /** Rendered schema text of the source database (METHOD.md §1.3). */
  schema: string;
  /** `attempted_sql=<sql>; status=<STATUS>; db_error=<msg or (none)>` */
  failure_context: string;
  /** `<before> => <after>` or `initial SQL => <sql>` (METHOD.md §4.2; not a diff). */
  attempted_sql_delta: string;
  /** Positive: `Observed successful transition: ` + delta; negative: "". */
  successful_direction: string;
  observed_outcome: AttemptStatus;
  observed_db_error: string | null;
}

/** One memory entry (METHOD.md §4.1): the representative observation plus identity and evidence counters. */
export interface MemoryEntry extends ObservationRecord {
  /** Deterministic ID (METHOD.md §4.4): sha256 of {error_type (normalised), transformation}. */
  entry_id: string;
  /** Coarse classifier type of the failure the entry is about (METHOD.md §3, §4.3). */
  error_type: string;
  applicability_scope: ApplicabilityScope;
  /** Number of observations merged into this entry (new entry: 1). */
  confirmation_count: number;
  /** Observations that ended CORRECT (new positive: 1). */
  success_count: number;
  /** Observations that ended not CORRECT (new negative: 1). */
  failure_count: number;
  provenance_history: ObservationRecord[];
}

/** The 14 observation fields, in the order METHOD.md §4.1 lists them. */
export const OBSERVATION_FIELDS = [
  "source_query_id",
  "source_db_id",
  "source_episode_id",
  "source_stream_position",
  "source_iteration",
  "polarity",
  "provenance",
  "question",
  "schema",
  "failure_context",
  "attempted_sql_delta",
  "successful_direction",
  "observed_outcome",
  "observed_db_error",
] as const satisfies readonly (keyof ObservationRecord)[];

/** The observation record of an entry (its representative fields), for `provenance_history`. */
export function observationOf(entry: ObservationRecord): ObservationRecord {
  return {
    source_query_id: entry.source_query_id,
    source_db_id: entry.source_db_id,
    source_episode_id: entry.source_episode_id,
    source_stream_position: entry.source_stream_position,
    source_iteration: entry.source_iteration,
    polarity: entry.polarity,
    provenance: { ...entry.provenance, retrieved_entry_ids: [...entry.provenance.retrieved_entry_ids] },
    question: entry.question,
    schema: entry.schema,
    failure_context: entry.failure_context,
    attempted_sql_delta: entry.attempted_sql_delta,
    successful_direction: entry.successful_direction,
    observed_outcome: entry.observed_outcome,
    observed_db_error: entry.observed_db_error,
  };
}

/** A memory entry that breaks the §4.1 validation rules; names the entry and the broken rule. */
export class InvalidEntryError extends MeritError {
  readonly entryId: string;
  constructor(entryId: string, problem: string) {
    super(
      `memory entry ${entryId || "(no entry_id)"} is invalid: ${problem}; ` +
        "build entries with finalizeEpisode() and insert them through a MemoryStore (METHOD.md §4.1, §4.3)",
    );
    this.name = "InvalidEntryError";
    this.entryId = entryId;
  }
}

const REQUIRED_TEXT: readonly (keyof MemoryEntry)[] = [
  "entry_id",
  "source_query_id",
  "source_db_id",
  "source_episode_id",
  "question",
  "schema",
  "failure_context",
  "error_type",
  "attempted_sql_delta",
  "observed_outcome",
];

/**
 * Problems with an entry under METHOD.md §4.1 (empty list = valid): required fields non-empty,
 * positive ⇒ observed_outcome CORRECT and a non-empty successful_direction, negative ⇒ outcome
 * not CORRECT, counters consistent (confirmation = success + failure ≥ 1), non-empty history.
 */
export function entryProblems(entry: MemoryEntry): string[] {
  const problems: string[] = [];
  for (const field of REQUIRED_TEXT) {
    const value = entry[field];
    if (typeof value !== "string" || value.trim() === "") problems.push(`${field} must be a non-empty string`);
  }
  if (!Number.isInteger(entry.source_stream_position) || entry.source_stream_position < 0)
    problems.push(`source_stream_position must be a non-negative integer, got ${entry.source_stream_position}`);
  if (!Number.isInteger(entry.source_iteration) || entry.source_iteration < 0)
    problems.push(`source_iteration must be a non-negative integer, got ${entry.source_iteration}`);
  if (entry.polarity !== "positive" && entry.polarity !== "negative")
    problems.push(`polarity must be positive or negative, got ${String(entry.polarity)}`);
  if (!APPLICABILITY_SCOPES.includes(entry.applicability_scope))
    problems.push(`applicability_scope must be one of ${APPLICABILITY_SCOPES.join(", ")}, got ${String(entry.applicability_scope)}`);
  if (entry.polarity === "positive") {
    if (entry.observed_outcome !== "CORRECT") problems.push(`a positive entry must have observed_outcome CORRECT, got ${entry.observed_outcome}`);
    if (!entry.successful_direction) problems.push("a positive entry must have a non-empty successful_direction");
  }
  if (entry.polarity === "negative" && entry.observed_outcome === "CORRECT")
    problems.push("a negative entry cannot have observed_outcome CORRECT");
  for (const counter of ["confirmation_count", "success_count", "failure_count"] as const) {
    if (!Number.isInteger(entry[counter]) || entry[counter] < 0) problems.push(`${counter} must be a non-negative integer, got ${entry[counter]}`);
  }
  if (entry.confirmation_count !== entry.success_count + entry.failure_count || entry.confirmation_count < 1)
    problems.push(
      `confirmation_count (${entry.confirmation_count}) must equal success_count + failure_count (${entry.success_count} + ${entry.failure_count}) and be ≥ 1`,
    );
  if (!Array.isArray(entry.provenance_history) || entry.provenance_history.length === 0)
    problems.push("provenance_history must hold at least one observation");
  return problems;
}

/** Throws `InvalidEntryError` listing every broken rule; returns the entry unchanged when valid. */
export function validateEntry(entry: MemoryEntry): MemoryEntry {
  const problems = entryProblems(entry);
  if (problems.length > 0) throw new InvalidEntryError(entry.entry_id, problems.join("; "));
  return entry;
}
