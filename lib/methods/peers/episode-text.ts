/**
 * Peer memory methods (METHOD.md §13), the text they share: an attempt and an episode as the frozen
 * model reads them in a judge, distill, curate, induce or synthesize prompt (what the agent saw —
 * SQL, status, DBMS message, failure type — never the gold), the latest note of a kind, a deterministic
 * length cap and the parsing of tagged fields.
 * @module
 */
import type { AttemptView, EpisodeView, NoteView } from "../hooks.ts";
import { describedNotes } from "../note-columns.ts";

/** The outcome of one attempt in one line, as the agent was shown it. */
export function outcomeLine(a: AttemptView): string {
  return [`status ${a.status}`, a.dbError ? `DBMS message: ${a.dbError}` : null, a.errorType ? `failure type: ${a.errorType}` : null].filter((p) => p !== null).join("; ");
}

/** Every attempt of an episode, numbered, the initial SQL first. */
export function attemptsBlock(attempts: readonly AttemptView[]): string {
  return attempts.map((a, i) => `(${i === 0 ? "initial" : `repair ${i}`}) ${a.sql.trim() || "(no SQL)"}\n  -> ${outcomeLine(a)}`).join("\n");
}

/** The final attempt of an episode. */
export function finalAttempt(episode: Pick<EpisodeView, "attempts">): AttemptView {
  return episode.attempts[episode.attempts.length - 1];
}

/** The question lines of a prompt: question, BIRD evidence when there is some, database. */
export function questionLines(q: { question: string; evidence: string; dbId: string }): string[] {
  return [`Question: ${q.question}`, ...(q.evidence.trim() ? [`Evidence: ${q.evidence.trim()}`] : []), `Database: ${q.dbId}`];
}

/** The note of `kind` written at the latest stream position (ties: the later in memory order); null when none. */
export function latestOfKind(memory: readonly NoteView[], kind: string): NoteView | null {
  const d = describedNotes(memory); // the notes the kit hands a hook: read by their columns (note-columns.ts)
  if (d !== null) return d.table.latest(memory, d.slots, kind);
  let best: NoteView | null = null;
  for (const n of memory) if (n.kind === kind && (best === null || n.source_stream_position >= best.source_stream_position)) best = n;
  return best;
}

/**
 * The note of `kind` whose data field `field` is a string, written at the latest stream position
 * (ties: the later in memory order); null when none. By the columns for the notes a NoteMemory hands
 * out (note-columns.ts), else note by note, with the same answer.
 */
export function latestOfKindWithString(memory: readonly NoteView[], kind: string, field: string): NoteView | null {
  const d = describedNotes(memory);
  if (d !== null) return d.table.latest(memory, d.slots, kind, field);
  let best: NoteView | null = null;
  for (const n of memory) if (n.kind === kind && typeof (n.data as Record<string, unknown> | null)?.[field] === "string" && (best === null || n.source_stream_position >= best.source_stream_position)) best = n;
  return best;
}

/**
 * `text` cut to at most `cap` characters, deterministically: whole lines while they fit; when even the
 * first line is longer, its first `cap` characters. Trailing blanks are dropped.
 */
export function capText(text: string, cap: number): string {
  const t = text.trim();
  if (t.length <= cap) return t;
  const lines = t.split("\n");
  let out = "";
  for (const line of lines) {
    const next = out === "" ? line : `${out}\n${line}`;
    if (next.length > cap) break;
    out = next;
  }
  return (out === "" ? t.slice(0, cap) : out).trimEnd();
}

/** The text between `<tag>` and `</tag>` (first occurrence, trimmed); null when absent. */
export function tagged(text: string, tag: string): string | null {
  const m = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, "i").exec(text);
  return m ? m[1].trim() : null;
}

/** The longest SQL and DBMS message a stored repair path keeps of one attempt (characters). */
export const PATH_SQL_CHARS = 600;
export const PATH_MESSAGE_CHARS = 300;

/** One attempt of a stored repair path: its SQL and the feedback it got, each cut to a bound. */
export interface PathStep {
  sql: string;
  status: string;
  db_error: string | null;
}

const cut = (text: string, most: number) => (text.length <= most ? text : `${text.slice(0, most)}…`);

/**
 * The repair path an episode stores (issue 37 §1: the originals keep the trajectory, not only its
 * end): its last `most` failed attempts, each with its SQL and the DBMS message it got, oldest first,
 * then the final attempt; each SQL cut to PATH_SQL_CHARS and each message to PATH_MESSAGE_CHARS
 * characters. `omitted` counts the earlier failed attempts left out; `most` = 0 keeps the final attempt alone.
 */
export function repairPath(episode: Pick<EpisodeView, "attempts">, most: number): { failed: PathStep[]; final: PathStep; omitted: number } {
  const step = (a: AttemptView): PathStep => ({ sql: cut(a.sql.trim(), PATH_SQL_CHARS), status: a.status, db_error: a.dbError === null ? null : cut(a.dbError, PATH_MESSAGE_CHARS) });
  const before = episode.attempts.slice(0, -1);
  const kept = most > 0 ? before.slice(-most) : [];
  return { failed: kept.map(step), final: step(finalAttempt(episode)), omitted: before.length - kept.length };
}

/** The failed attempts of a stored repair path as a prompt shows them, each with its feedback ([] when none). */
export function failedPathLines(path: { failed: readonly PathStep[]; omitted: number }): string[] {
  const feedback = (s: PathStep) => [`status ${s.status}`, s.db_error ? `DBMS message: ${s.db_error}` : null].filter((p) => p !== null).join("; ");
  return [
    ...(path.omitted > 0 ? [`(${path.omitted} earlier failed attempt${path.omitted === 1 ? "" : "s"} left out)`] : []),
    ...path.failed.map((s, i) => `Failed attempt ${i + 1}: ${s.sql || "(no SQL)"}\n  -> ${feedback(s)}`),
  ];
}

/** A stored repair path as a prompt shows it: each failed attempt with its feedback, then the final SQL (`finalLabel`). */
export function pathText(path: { failed: readonly PathStep[]; final: Pick<PathStep, "sql">; omitted: number }, finalLabel: string): string {
  return [...failedPathLines(path), `${finalLabel}: ${path.final.sql || "(no SQL)"}`].join("\n");
}
