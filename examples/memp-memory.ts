/**
 * Example plugin, a memory that revises itself (issue 36 §6): `memp_memory`, a procedural memory in
 * the spirit of MemP (Fang et al., 2025) — after an episode that ends on an accepted query, ONE
 * procedure note: the question and the accepted SQL. Before each repair the 2 procedures whose
 * question shares most words with the current one go into the prompt under "PROCEDURES FROM EARLIER
 * EPISODES". MemP's adjust-on-failure: when an episode retrieved a procedure and still failed, its
 * write revises that procedure — a new note with a caution `supersedes` it — and retires it once it
 * has failed {@link MAX_FAILURES} times (`{ notes, retire }`). No model call and no embedder.
 *
 * The kit records each revision in the revising episode's trajectory (`memory_retires`), takes the
 * old notes out of the memory once that episode is committed (so a resumed run rebuilds the same
 * memory), counts only the notes in force in `merit report --diagnostics`' memory size, and
 * `merit audit` checks that each revised note was one the episode could see. Procedures of a source
 * memory (config memory_source: another run's, read-only) are shown but never revised or retired
 * (`isSourceNote`).
 *
 * Run: `merit methods --plugin examples/memp-memory.ts`. Test: `npx vitest run examples/memp-memory.test.ts`.
 * @module
 */
import { isSourceNote, registerMethod, type EpisodeView, type NoteDraft, type NoteView, type PickedNote, type WriteResult } from "../lib/plugin.ts";

/** Procedures shown before a repair. */
export const PROCEDURES_SHOWN = 2;
/** Failed episodes after which a procedure is retired. */
export const MAX_FAILURES = 2;

/** What a procedure note keeps in `data`. */
interface Procedure {
  question: string;
  sql: string;
  failures: number;
}

const words = (text: string) => new Set(text.toLowerCase().match(/[a-z0-9]+/g) ?? []);

/** Jaccard overlap of two questions' word sets. */
export function overlap(a: string, b: string): number {
  const x = words(a);
  const y = words(b);
  const shared = [...x].filter((w) => y.has(w)).length;
  return shared === 0 ? 0 : shared / (x.size + y.size - shared);
}

/** The text a procedure note shows. */
export function procedureText(p: Procedure): string {
  const caution = p.failures > 0 ? `\nCaution: an episode that followed it still failed (${p.failures} time${p.failures > 1 ? "s" : ""}); check it against this schema.` : "";
  return `For a question like "${p.question}", this query was accepted:\n${p.sql}${caution}`;
}

/** MemP's write: a procedure from a success; the procedures a failed episode followed revised or retired. */
export function writeProcedures(episode: EpisodeView, memory: readonly NoteView[]): WriteResult {
  const notes: NoteDraft[] = [];
  const retire: string[] = [];
  const last = episode.attempts[episode.attempts.length - 1];
  if (episode.success && last.sql.trim() !== "") {
    const p: Procedure = { question: episode.question, sql: last.sql, failures: 0 };
    notes.push({ kind: "procedure", text: procedureText(p), key: p.question, polarity: "positive", data: { ...p } });
  }
  if (!episode.success) {
    const followed = new Set(episode.retrieved.flat());
    for (const note of memory) {
      // A transferred procedure (config memory_source) is read-only: the run revises only its own.
      if (!followed.has(note.note_id) || isSourceNote(note)) continue;
      const p = note.data as unknown as Procedure;
      const failures = p.failures + 1;
      if (failures >= MAX_FAILURES) retire.push(note.note_id);
      else notes.push({ kind: "procedure", text: procedureText({ ...p, failures }), key: note.key, polarity: "positive", data: { ...p, failures }, supersedes: [note.note_id] });
    }
  }
  return { notes, retire };
}

/** MemP's retrieval: the procedures whose question overlaps the current one most (ties: older first). */
export function pickProcedures(question: string, memory: readonly NoteView[]): PickedNote[] {
  return memory
    .map((note, i) => ({ note, score: overlap(question, note.key), i }))
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, PROCEDURES_SHOWN)
    .map(({ note, score }) => ({ note, score }));
}

registerMethod({
  name: "memp_memory",
  description: "procedural memory (MemP-style): a procedure per accepted episode, revised with a caution or retired when an episode that followed it fails",
  hooks: {
    memory: {
      name: "memp_procedures",
      heading: "PROCEDURES FROM EARLIER EPISODES",
      write: (episode, _model, memory) => writeProcedures(episode, memory),
      retrieve: (request, memory) => pickProcedures(request.question, memory),
    },
  },
});
