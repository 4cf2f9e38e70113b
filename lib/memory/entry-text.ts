/**
 * Memory stage (METHOD.md §4.6, §5.2): the two texts an entry is searched by — the dense
 * embedding text (with the full schema, second) and the BM25 document text (no schema).
 * @module
 */
import type { MemoryEntry } from "./entry.ts";
import { normalizeTransformation } from "./identity.ts";

/**
 * Dense embedding text (METHOD.md §4.6), space-joined:
 * `QUESTION: …` `SCHEMA: …` `FAILURE: …` `TRANSFORMATION: <normalised delta>` `ERROR: …`
 * `OUTCOME: …` `DB ERROR: <msg or (none)>`. With a 512-token embedder the tail is usually cut
 * (METHOD.md §10.10); this is kept for fidelity.
 */
export function denseText(entry: MemoryEntry): string {
  return [
    `QUESTION: ${entry.question}`,
    `SCHEMA: ${entry.schema}`,
    `FAILURE: ${entry.failure_context}`,
    `TRANSFORMATION: ${normalizeTransformation(entry.attempted_sql_delta)}`,
    `ERROR: ${entry.error_type}`,
    `OUTCOME: ${entry.observed_outcome}`,
    `DB ERROR: ${entry.observed_db_error ? entry.observed_db_error : "(none)"}`,
  ].join(" ");
}

/**
 * BM25 document text (METHOD.md §5.2), space-joined: question, failure_context,
 * attempted_sql_delta, error_type, observed_outcome, observed_db_error (or ""), successful_direction.
 */
export function bm25Document(entry: MemoryEntry): string {
  return [
    entry.question,
    entry.failure_context,
    entry.attempted_sql_delta,
    entry.error_type,
    entry.observed_outcome,
    entry.observed_db_error ?? "",
    entry.successful_direction,
  ].join(" ");
}
