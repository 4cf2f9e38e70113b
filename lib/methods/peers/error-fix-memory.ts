/**
 * Peer memory method `error_fix_memory` (METHOD.md §13.7): a Memo-SQL-style memory (error→fix memory
 * for Text-to-SQL; Yang et al., "Memo-SQL: Structured Decomposition and Experience-Driven
 * Self-Correction for Training-Free NL2SQL", arXiv 2601.10011), the closest Text-to-SQL peer. It
 * keeps two kinds of note, with no LLM call:
 *
 * - `solved`: a question the stream solved and its final (accepted) SQL, from every successful episode;
 * - `error_fix`: from a repaired episode, for each failure type it went through, its last failing
 *   attempt (SQL, status, DBMS message) and the SQL that fixed it (the accepted one).
 *
 * Before each repair: up to {@link FIXES_SHOWN} error→fix pairs whose failure type is the current
 * attempt's, nearest by the cosine of their questions to this one, then up to {@link SOLVED_SHOWN}
 * solved questions nearest the same way. A failed episode stores nothing.
 * @module
 */
import { topByCosine, type EpisodeView, type NoteDraft } from "../hooks.ts";
import { registerMethod } from "../registry.ts";
import { feedbackLine, notesOfKind } from "./common.ts";

/** Error→fix pairs of the current failure type shown before a repair. */
export const FIXES_SHOWN = 2;
/** Solved questions shown before a repair. */
export const SOLVED_SHOWN = 2;

/** The notes a finished episode stores: nothing for a failure; its solved question; one error→fix pair per failure type it repaired. */
export function errorFixNotes(episode: EpisodeView): NoteDraft[] {
  if (!episode.success) return [];
  const fixed = episode.attempts[episode.attempts.length - 1];
  const notes: NoteDraft[] = [
    {
      kind: "solved",
      text: `Question: ${episode.question}\nDatabase: ${episode.dbId}\nAccepted SQL: ${fixed.sql.trim()}`,
      key: episode.question,
      polarity: "positive",
      data: { question: episode.question, sql: fixed.sql },
    },
  ];
  // The last failing attempt of each failure type, in the order the types first appeared.
  const lastOfType = new Map<string, EpisodeView["attempts"][number]>();
  for (const a of episode.attempts.slice(0, -1)) {
    if (a.errorType !== null) lastOfType.set(a.errorType, a); // a Map keeps the first insertion's order
  }
  for (const [type, failed] of lastOfType) {
    notes.push({
      kind: "error_fix",
      text: [`Question: ${episode.question}`, `Database: ${episode.dbId}`, `Failing SQL: ${failed.sql.trim() || "(no SQL)"}`, `Feedback: ${feedbackLine(failed)}`, `Fixed SQL: ${fixed.sql.trim()}`].join("\n"),
      key: episode.question,
      polarity: "negative",
      data: { error_type: type, failed_sql: failed.sql, status: failed.status, db_error: failed.dbError, fixed_sql: fixed.sql },
    });
  }
  return notes;
}

registerMethod({
  name: "error_fix_memory",
  description: "Memo-SQL-style (error→fix memory for Text-to-SQL; arXiv 2601.10011): stores solved questions and error→fix pairs, no LLM call; before each repair 2 pairs of the current failure type and 2 solved questions, nearest by embedding",
  citation: "Memo-SQL-style (error→fix memory for Text-to-SQL): Yang et al., Memo-SQL: Structured Decomposition and Experience-Driven Self-Correction for Training-Free NL2SQL. arXiv:2601.10011",
  sight: "oracle",
  parts: {},
  hooks: {
    memory: {
      name: "error_fix_pairs",
      heading: "ERROR FIXES AND SOLVED QUESTIONS FROM EARLIER EPISODES",
      embedsNotes: true,
      write: errorFixNotes,
      async retrieve(request, memory, model) {
        const type = request.attempts[request.attempts.length - 1]?.errorType ?? null;
        const fixes = notesOfKind(memory, "error_fix").filter((n) => (n.data as { error_type?: unknown } | null)?.error_type === type);
        const solved = notesOfKind(memory, "solved");
        if (fixes.length === 0 && solved.length === 0) return [];
        const [query] = await model.embed([request.question]);
        return [...topByCosine(fixes, query, FIXES_SHOWN), ...topByCosine(solved, query, SOLVED_SHOWN)];
      },
    },
  },
});
