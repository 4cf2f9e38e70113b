/**
 * Peer memory methods (METHOD.md §13), helpers they share: how an attempt is shown in a note or a
 * prompt, the eligible notes of one kind, and the nearest notes by cosine (`nearestNotes`: the
 * memory's stored vectors, exact at every size: an int8 prefilter cuts pools of 2,048 notes or more
 * first; lib/methods/note-index.ts).
 * @module
 */
import type { AttemptView, NoteView } from "../hooks.ts";
import { describedNotes } from "../note-columns.ts";

export { nearestNotes } from "../note-index.ts";

/** The feedback of one attempt in one line: its status, the DBMS message and the failure type when there are. */
export function feedbackLine(a: AttemptView): string {
  return [a.status, a.dbError ? `error: ${a.dbError}` : null, a.errorType ? `type: ${a.errorType}` : null].filter((p) => p !== null).join("; ");
}

/** One attempt as `SQL` then its feedback. */
export function attemptLines(a: AttemptView, label: string): string {
  return `${label} ${a.sql.trim() || "(no SQL)"}\nFeedback: ${feedbackLine(a)}`;
}

/** The notes of `kind`, in memory order. */
export function notesOfKind(memory: readonly NoteView[], kind: string): NoteView[] {
  const d = describedNotes(memory); // the notes the kit hands a hook: filtered by their columns (note-columns.ts)
  if (d !== null) return d.table.ofKind(memory, d.slots, kind);
  return memory.filter((n) => n.kind === kind);
}

/**
 * The notes of `kind` whose data field `field` is `value` (a string, or null), in memory order: the
 * notes a NoteMemory hands out are filtered by a column of that field (note-columns.ts), others
 * note by note, with the same answer.
 */
export function notesOfKindWith(memory: readonly NoteView[], kind: string, field: string, value: string | null): NoteView[] {
  const d = describedNotes(memory);
  if (d !== null) return d.table.ofKindWith(memory, d.slots, kind, field, value);
  return memory.filter((n) => n.kind === kind && (n.data as Record<string, unknown> | null)?.[field] === value);
}

/** The note written at the latest stream position (the last of them in memory order); null when none. */
export function latestNote(notes: readonly NoteView[]): NoteView | null {
  const d = describedNotes(notes);
  if (d !== null) return d.table.latest(notes, d.slots);
  let best: NoteView | null = null;
  for (const n of notes) if (best === null || n.source_stream_position >= best.source_stream_position) best = n;
  return best;
}
