/**
 * Peer memory methods (METHOD.md §13.7), the skeleton of a SQL query: its shape with the schema items
 * and values taken out, as Memo-SQL keys error→fix retrieval on the question plus the failing SQL's
 * skeleton. Built on the oracle's lexer (lib/oracle/sql-lexer.ts): SQL keywords and function names
 * are kept in upper case, punctuation and operators kept, every other name (a table, a column, an
 * alias) becomes `_`, every literal (string, number) `?`; comments are dropped and whitespace folded.
 * @module
 */
import { tokenizeSql } from "../../oracle/sql-lexer.ts";

/** Words kept in a skeleton (SQLite's clause keywords, operators and common functions). */
const KEPT = new Set(
  (
    "SELECT FROM WHERE GROUP BY ORDER HAVING LIMIT OFFSET JOIN INNER LEFT RIGHT OUTER CROSS NATURAL ON USING AS AND OR NOT IN IS NULL " +
    "LIKE GLOB BETWEEN EXISTS DISTINCT ALL UNION INTERSECT EXCEPT ASC DESC CASE WHEN THEN ELSE END CAST WITH " +
    "COUNT SUM AVG MIN MAX ABS ROUND LENGTH LOWER UPPER SUBSTR IFNULL COALESCE STRFTIME DATE JULIANDAY REPLACE INSTR TRIM IIF"
  ).split(" "),
);

/** The skeleton of `sql` (one line; "" for blank SQL). */
export function sqlSkeleton(sql: string): string {
  const out: string[] = [];
  for (const t of tokenizeSql(sql)) {
    if (t.kind === "whitespace" || t.kind === "newline" || t.kind === "comment") continue;
    if (t.kind === "string" || t.kind === "number") out.push("?");
    else if (t.kind === "punctuation" || t.kind === "operator") out.push(t.text);
    else {
      // Multi-word keywords (ORDER BY, LEFT JOIN) fold their inner whitespace.
      const word = t.text.replace(/\s+/g, " ").toUpperCase();
      out.push(word.split(" ").every((w) => KEPT.has(w)) ? word : "_");
    }
  }
  return out.join(" ").replace(/ ([,)]) ?/g, "$1 ").replace(/\( /g, "(").replace(/ \./g, ".").replace(/\. /g, ".").replace(/\s+/g, " ").trim();
}
