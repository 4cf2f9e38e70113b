/**
 * Report stage, pure core (METHOD.md §2.3, §2.7): the user-facing reason for an oracle message that
 * is the kit's own refusal to execute (Spider's one-statement line format), not a DBMS error. The
 * internal wording ("Spider prediction is not one statement at source index 634") names a protocol
 * step and an index; the episode view shows what happened to the SQL instead. DBMS errors pass through.
 * @module
 */

const REASONS: readonly [RegExp, string][] = [
  [/^Spider prediction is not one statement( at source index \d+)?$/, "Not executed: the SQL is not exactly one statement (several statements, or none), and Spider scores one statement per line."],
  [/^Spider line format cannot preserve a token newline( at source index \d+)?$/, "Not executed: a string literal or quoted name contains a line break, which Spider's one-line prediction format cannot keep."],
  [/^Spider prediction is empty after rendering( at source index \d+)?$/, "Not executed: no SQL remained after putting the prediction on one line (it held only comments or whitespace)."],
  [/^the query contains a null character$/, "Not executed: the SQL contains a NUL character."],
];

/** The text the episode view shows for an attempt's db_error (null stays null). */
export function userFacingDbError(message: string | null): string | null {
  if (message === null) return null;
  for (const [pattern, reason] of REASONS) if (pattern.test(message)) return reason;
  return message;
}
