/**
 * Example plugin, a finer failure taxonomy (issue 29 §6): `merit_fine_types`, MERIT's memory
 * (`meritMemory()`) with a classify hook that splits the coarse `Result Mismatch` of METHOD.md §3 —
 * every executed wrong answer — into four kinds read off the attempt's own SQL by ordered rules, the
 * first match wins:
 *
 * 1. `Mismatch: aggregation` — GROUP BY, HAVING or an aggregate function call (count, sum, avg, min,
 *    max, total, group_concat);
 * 2. `Mismatch: join` — a JOIN, or several tables listed in a FROM clause;
 * 3. `Mismatch: filter` — a WHERE clause;
 * 4. `Mismatch: projection` — anything else (the SELECT list or ordering is what can be wrong).
 *
 * The rules read the SQL with comments removed and string literals and quoted identifiers blanked,
 * so `WHERE name = 'Inner Join'` is a filter, not a join. An attempt that did not execute keeps the
 * coarse DBMS-derived type of {@link classifyFailure} (Schema Linking, Syntax, Aggregation, …): the
 * DBMS message already says what went wrong. The hook reads only what a ClassifyInput gives — the
 * attempt's SQL, its shown status and DBMS message — never the gold.
 *
 * Why: MERIT's hard type filter (METHOD.md §5) pools precedents by failure type, and on Spider most
 * initial failures are Result Mismatch, so that one pool holds most of the memory. With this hook the
 * labels become the attempts' `error_types`, the memory entries' `error_type` and the
 * `current_error_type` the filter pools by, so a wrong aggregation is repaired with precedents of
 * wrong aggregations; Table 5 and the failure-composition figure report the fine labels. Nothing in
 * lib/ is changed.
 *
 * Run: `merit methods --plugin examples/error-taxonomy.ts`; `merit grid --config configs/spider.json
 * --plugin examples/error-taxonomy.ts --methods merit,merit_fine_types --seeds 0,1,2 --plan`.
 * Test: `npx vitest run examples/error-taxonomy.test.ts`.
 * @module
 */
import { classifyFailure, ERROR_TYPES, meritMemory, registerMethod, type ClassifyHook, type ClassifyInput } from "../lib/plugin.ts";

/** The fine labels of an executed wrong answer, in rule order. */
export const MISMATCH_TYPES = ["Mismatch: aggregation", "Mismatch: join", "Mismatch: filter", "Mismatch: projection"] as const;
export type MismatchType = (typeof MISMATCH_TYPES)[number];

/** Every label the hook returns: METHOD.md §3's types with the four fine labels in Result Mismatch's place. */
export const FINE_TYPES: readonly string[] = ERROR_TYPES.flatMap((t) => (t === "Result Mismatch" ? [...MISMATCH_TYPES] : [t]));

/**
 * The SQL as the rules read it: comments removed, the contents of string literals ('…') and quoted
 * identifiers ("…", `…`, […]) replaced by a placeholder, whitespace collapsed, upper case.
 */
export function sqlSkeleton(sql: string): string {
  let out = "";
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    if (c === "-" && sql[i + 1] === "-") {
      const end = sql.indexOf("\n", i);
      i = end === -1 ? sql.length : end;
      out += " ";
    } else if (c === "/" && sql[i + 1] === "*") {
      const end = sql.indexOf("*/", i + 2);
      i = end === -1 ? sql.length : end + 2;
      out += " ";
    } else if (c === "'" || c === '"' || c === "`" || c === "[") {
      const close = c === "[" ? "]" : c;
      let j = i + 1;
      // a doubled quote inside a literal is an escaped quote
      while (j < sql.length && !(sql[j] === close && sql[j + 1] !== close)) j += sql[j] === close ? 2 : 1;
      out += c === "'" ? " 'S' " : " Q ";
      i = j + 1;
    } else {
      out += c;
      i += 1;
    }
  }
  return out.replace(/\s+/g, " ").trim().toUpperCase();
}

const AGGREGATION = /\bGROUP\s+BY\b|\bHAVING\b|\b(?:COUNT|SUM|AVG|MIN|MAX|TOTAL|GROUP_CONCAT)\s*\(/;
const JOIN = /\bJOIN\b/;
const FILTER = /\bWHERE\b/;
/** Keywords that end a FROM clause at its own nesting depth. */
const FROM_END = /^(?:WHERE|GROUP|HAVING|ORDER|LIMIT|UNION|INTERSECT|EXCEPT|WINDOW)\b/;

/** Whether some FROM clause lists several tables (a comma at the clause's own depth). */
export function hasCommaJoin(skeleton: string): boolean {
  for (const m of skeleton.matchAll(/\bFROM\b/g)) {
    let depth = 0;
    for (let i = (m.index ?? 0) + 4; i < skeleton.length; i++) {
      const c = skeleton[i];
      if (c === "(") depth += 1;
      else if (c === ")") {
        if (depth === 0) break;
        depth -= 1;
      } else if (depth === 0) {
        if (c === ",") return true;
        if (c === ";") break;
        if (/\s/.test(c) && FROM_END.test(skeleton.slice(i + 1))) break;
      }
    }
  }
  return false;
}

/** The fine label of an executed wrong answer, by the ordered rules above. */
export function mismatchType(sql: string): MismatchType {
  const s = sqlSkeleton(sql);
  if (AGGREGATION.test(s)) return "Mismatch: aggregation";
  if (JOIN.test(s) || hasCommaJoin(s)) return "Mismatch: join";
  if (FILTER.test(s)) return "Mismatch: filter";
  return "Mismatch: projection";
}

/** The label of a failed attempt: the coarse DBMS-derived type, or a fine label for an executed wrong answer. */
export function classifyFine(attempt: Pick<ClassifyInput, "sql" | "status" | "dbError" | "executed">): string {
  const coarse = classifyFailure({ status: attempt.status as Parameters<typeof classifyFailure>[0]["status"], dbError: attempt.dbError, predictedExecOk: attempt.executed });
  if (coarse === null) return "Unknown"; // never called for an accepted attempt; kept total
  return coarse.errorType === "Result Mismatch" ? mismatchType(attempt.sql) : coarse.errorType;
}

/** The classify hook: `fine_mismatch`, with its vocabulary. */
export const FINE_CLASSIFIER: ClassifyHook = { name: "fine_mismatch", types: FINE_TYPES, classify: classifyFine };

registerMethod({
  name: "merit_fine_types",
  description: "MERIT with Result Mismatch split by the attempt's SQL into aggregation / join / filter / projection; the hard type filter pools by the fine labels",
  hooks: { memory: meritMemory(), classify: FINE_CLASSIFIER },
});
