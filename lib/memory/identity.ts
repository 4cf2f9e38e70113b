/**
 * Memory stage (METHOD.md §4.2, §4.4): the "SQL delta" string, `normalizeTransformation` and the
 * deterministic `entryId`. Query and database are deliberately NOT part of the ID, so identical
 * (error type, normalised before => after) pairs from different queries merge (METHOD.md §10.14).
 * @module
 */
import { contentHash } from "../hash.ts";

/**
 * The "SQL delta" (METHOD.md §4.2): `<previous SQL, stripped> => <new SQL, stripped>`, or
 * `initial SQL => <sql>` when there is no previous attempt. Both full statements are stored.
 * @example sqlDelta("SELECT a FROM t ", "SELECT b FROM t") === "SELECT a FROM t => SELECT b FROM t"
 */
export function sqlDelta(previousSql: string | null, newSql: string): string {
  const before = previousSql === null ? "initial SQL" : pyStrip(previousSql);
  return `${before} => ${pyStrip(newSql)}`;
}

/** Python `str.strip()` without arguments (strips Unicode whitespace, like `String.prototype.trim`). */
export function pyStrip(text: string): string {
  return text.trim();
}

/** Characters next to which spaces are dropped (METHOD.md §4.4). */
const PUNCTUATION = new Set(["(", ")", ",", "=", "<", ">", "!", "+", "-", "*", "/"]);

/** Opening quote → closing quote for the quoted regions copied verbatim. */
const QUOTE_CLOSERS: Readonly<Record<string, string>> = { "'": "'", '"': '"', "`": "`", "[": "]" };

/**
 * Normalises a transformation string for identity (METHOD.md §4.4): trim; outside quoted regions
 * (' " ` and [ ]) lower-case, collapse whitespace runs to one space and drop spaces adjacent to
 * `( ) , = < > ! + - * /`; quoted regions (including their delimiters) are copied verbatim, with
 * doubled closing quotes and backslash escapes honoured. An unterminated quote runs to the end.
 * @example normalizeTransformation("SELECT  Name FROM t => SELECT name FROM t WHERE x = 'A B'")
 *   === "select name from t=>select name from t where x='A B'"
 */
export function normalizeTransformation(text: string): string {
  const s = text.trim();
  let out = "";
  /** The last emitted character was unquoted punctuation (so a following space is dropped). */
  let lastWasPunct = false;
  let pendingSpace = false;
  let i = 0;
  const emit = (chunk: string, isPunct: boolean): void => {
    if (pendingSpace && out.length > 0 && !lastWasPunct && !isPunct) out += " ";
    pendingSpace = false;
    out += chunk;
    lastWasPunct = isPunct;
  };
  while (i < s.length) {
    const ch = s[i];
    if (/\s/.test(ch)) {
      pendingSpace = true;
      i += 1;
      continue;
    }
    const closer = QUOTE_CLOSERS[ch];
    if (closer !== undefined) {
      const end = quotedRegionEnd(s, i, closer);
      emit(s.slice(i, end), false);
      i = end;
      continue;
    }
    const lower = ch.toLowerCase();
    emit(lower, PUNCTUATION.has(ch));
    i += 1;
  }
  return out;
}

/** Index just past the quoted region opened at `start` (its closing delimiter included). */
function quotedRegionEnd(s: string, start: number, closer: string): number {
  let i = start + 1;
  while (i < s.length) {
    const ch = s[i];
    if (ch === "\\") {
      i += 2; // backslash escape: the next character is part of the region whatever it is
      continue;
    }
    if (ch === closer) {
      if (s[i + 1] === closer) {
        i += 2; // doubled closing quote: an escaped quote, the region continues
        continue;
      }
      return i + 1;
    }
    i += 1;
  }
  return s.length;
}

/** The error type as it enters the ID: trimmed, whitespace runs collapsed to one space, lower-cased. */
export function normalizeErrorType(errorType: string): string {
  return errorType.trim().replace(/\s+/g, " ").toLowerCase();
}

/**
 * Deterministic entry ID (METHOD.md §4.4): SHA-256 hex of the canonical JSON
 * `{"error_type": <normalised type>, "transformation": normalizeTransformation(delta)}`.
 */
export function entryId(errorType: string, attemptedSqlDelta: string): string {
  return contentHash({ error_type: normalizeErrorType(errorType), transformation: normalizeTransformation(attemptedSqlDelta) });
}
