/**
 * Memory stage (METHOD.md §4.4): merging an incoming entry into an existing one with the same ID,
 * and the insertion plan (insert / merge / skip) that every MemoryStore applies. Pure.
 * @module
 */
import { canonicalJson, type JsonValue } from "../hash.ts";
import { validateEntry, type MemoryEntry, type ObservationRecord, type Polarity } from "./entry.ts";

/** The representative fields copied from whichever side wins the polarity vote. */
const REPRESENTATIVE_FIELDS = [
  "source_query_id",
  "source_db_id",
  "source_episode_id",
  "source_stream_position",
  "source_iteration",
  "provenance",
  "question",
  "schema",
  "failure_context",
  "error_type",
  "attempted_sql_delta",
  "observed_outcome",
  "observed_db_error",
  "applicability_scope",
] as const satisfies readonly (keyof MemoryEntry)[];

/**
 * Merges `incoming` into `existing` (same entry_id, METHOD.md §4.4): counters summed; polarity =
 * majority of success vs failure counts, a tie keeps the existing polarity; representative fields
 * from `incoming` if it has the winning polarity, else from `existing`; successful_direction =
 * incoming if non-empty else existing; histories unioned in order (existing first), deduplicated by
 * canonical JSON. The caller keeps the existing row position and re-embeds the result.
 */
export function mergeEntries(existing: MemoryEntry, incoming: MemoryEntry): MemoryEntry {
  const success = existing.success_count + incoming.success_count;
  const failure = existing.failure_count + incoming.failure_count;
  const polarity: Polarity = success > failure ? "positive" : failure > success ? "negative" : existing.polarity;
  const representative = incoming.polarity === polarity ? incoming : existing;
  const merged: MemoryEntry = { ...existing };
  for (const field of REPRESENTATIVE_FIELDS) (merged as unknown as Record<string, unknown>)[field] = representative[field];
  merged.provenance = { ...representative.provenance, retrieved_entry_ids: [...representative.provenance.retrieved_entry_ids] };
  merged.polarity = polarity;
  merged.entry_id = existing.entry_id;
  merged.successful_direction = incoming.successful_direction !== "" ? incoming.successful_direction : existing.successful_direction;
  merged.success_count = success;
  merged.failure_count = failure;
  merged.confirmation_count = existing.confirmation_count + incoming.confirmation_count;
  merged.provenance_history = unionHistories(existing.provenance_history, incoming.provenance_history);
  return merged;
}

/** Union of two histories in order, keeping the first of any records with equal canonical JSON. */
export function unionHistories(a: readonly ObservationRecord[], b: readonly ObservationRecord[]): ObservationRecord[] {
  const seen = new Set<string>();
  const out: ObservationRecord[] = [];
  for (const record of [...a, ...b]) {
    const key = canonicalJson(record as unknown as JsonValue);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(record);
  }
  return out;
}

/** What inserting one entry does to a memory (METHOD.md §4.4). */
export type InsertionPlan =
  /** A new row is appended at `row`. */
  | { kind: "insert"; row: number; entry: MemoryEntry }
  /** The entry at `row` is replaced by the merged entry (same ID, same row, re-embedded). */
  | { kind: "merge"; row: number; entry: MemoryEntry; previous: MemoryEntry }
  /** An episode id of `incoming` is already in some history: idempotent resume, nothing changes. */
  | { kind: "skip"; row: number | null; episodeId: string };

/** Read-only view of a memory that planning needs: row order plus two lookups. */
export interface MemoryView {
  readonly size: number;
  rowOf(entryId: string): number | undefined;
  entryAt(row: number): MemoryEntry;
  /** Row of an entry whose provenance history holds this episode id. */
  rowOfEpisode(episodeId: string): number | undefined;
}

/** Decides how `incoming` (validated first) enters `memory`: skip, merge into an existing row, or append. */
export function planInsertion(memory: MemoryView, incoming: MemoryEntry): InsertionPlan {
  validateEntry(incoming);
  for (const record of incoming.provenance_history) {
    const row = memory.rowOfEpisode(record.source_episode_id);
    if (row !== undefined) return { kind: "skip", row, episodeId: record.source_episode_id };
  }
  const row = memory.rowOf(incoming.entry_id);
  if (row === undefined) return { kind: "insert", row: memory.size, entry: incoming };
  const previous = memory.entryAt(row);
  return { kind: "merge", row, entry: validateEntry(mergeEntries(previous, incoming)), previous };
}
