/**
 * Oracle pre-processing per protocol (METHOD.md §2.3, §2.4, §11.3, §11.6): what text is executed for a
 * prediction and for its gold. Every quirk below is deliberate — it is what the official evaluators do,
 * and verdict parity with them depends on it.
 *
 * Spider protocols:
 * - `official` — the test-suite evaluator's command-line defaults (etype exec, plug_value off,
 *   keep_distinct OFF): prediction = first tab-separated field of the stripped line, every `value`
 *   replaced by `1`, `> =`/`< =`/`! =` fixed, then `remove_distinct` (first sqlparse statement only,
 *   every `distinct` token dropped) on prediction and gold. The default of `merit eval`.
 * - `merit` — the MERIT reference oracle: render to one line (exactly one non-blank sqlparse statement;
 *   whitespace and comment tokens become one space each; a token containing a newline is a failure),
 *   `value`→`1`, the operator fixes, DISTINCT kept. The default oracle of repair runs.
 * - `strict` — for follow-up studies: the one-line rendering only; no `value` substitution, no operator
 *   fixes, DISTINCT kept.
 * All three decide `order_matters` by `order by` in the (processed) gold, lower-cased.
 * @module
 */
import { isNonBlankStatement, removeDistinct, splitStatements, tokenizeSql } from "./sql-lexer.ts";

export type SpiderProtocol = "official" | "merit" | "strict";
export const SPIDER_PROTOCOLS: readonly SpiderProtocol[] = ["official", "merit", "strict"];

/** db_error for empty or multi-statement model output on both datasets (METHOD.md §11.3). */
export const NO_SINGLE_STATEMENT = "no single SQL statement in model output";
/** Python sqlite3's message when a second statement follows the first (BIRD, METHOD.md §2.4). */
export const PYTHON_MULTI_STATEMENT = "You can only execute one statement at a time.";

/** Python's sqlite3 refuses SQL text containing U+0000 (SQLite itself would silently stop reading there). */
export const NUL_IN_QUERY = "the query contains a null character";

/** Text to execute, or a failure that is reported without executing anything. */
export type Prepared = { ok: true; sql: string } | { ok: false; error: string };

/** The test-suite's `postprocess`: `> =` → `>=`, `< =` → `<=`, `! =` → `!=`. */
export function fixSpacedOperators(sql: string): string {
  return sql.replaceAll("> =", ">=").replaceAll("< =", "<=").replaceAll("! =", "!=");
}

/** The test-suite executor's `replace_cur_year`: `YEAR(CURDATE())` → `2020`. */
export function replaceCurrentYear(sql: string): string {
  return sql.replace(/YEAR\s*\(\s*CURDATE\s*\(\s*\)\s*\)\s*/gi, "2020");
}

/**
 * MERIT's Spider line rendering (METHOD.md §2.3 step 1): exactly one non-blank statement; whitespace
 * and comment tokens each become one space; a remaining token that contains a newline cannot be put on
 * one line and is a failure.
 */
export function renderOneLine(sql: string, sourceIndex?: number): Prepared {
  const where = sourceIndex === undefined ? "" : ` at source index ${sourceIndex}`;
  const tokens = tokenizeSql(sql);
  const statements = splitStatements(tokens).filter((s) => s.map((t) => t.text).join("").trim() !== "");
  if (statements.length !== 1 || !isNonBlankStatement(statements[0])) {
    return { ok: false, error: `Spider prediction is not one statement${where}` };
  }
  let out = "";
  for (const t of tokens) {
    if (t.kind === "whitespace" || t.kind === "newline" || t.kind === "comment") out += " ";
    else if (t.text.includes("\n") || t.text.includes("\r")) {
      return { ok: false, error: `Spider line format cannot preserve a token newline${where}` };
    } else out += t.text;
  }
  const rendered = out.trim();
  return rendered === "" ? { ok: false, error: `Spider prediction is empty after rendering${where}` } : { ok: true, sql: rendered };
}

/** The prediction text a Spider protocol executes. */
export function prepareSpiderPrediction(raw: string, protocol: SpiderProtocol, sourceIndex?: number): Prepared {
  if (raw.includes("\u0000")) return { ok: false, error: NUL_IN_QUERY };
  if (protocol === "official") {
    const field = raw.trim().split("\t")[0];
    if (field.trim() === "") return { ok: false, error: NO_SINGLE_STATEMENT };
    const sql = replaceCurrentYear(removeDistinct(fixSpacedOperators(field.replaceAll("value", "1"))));
    return sql.trim() === "" ? { ok: false, error: NO_SINGLE_STATEMENT } : { ok: true, sql };
  }
  if (raw.trim() === "") return { ok: false, error: NO_SINGLE_STATEMENT };
  const rendered = renderOneLine(raw, sourceIndex);
  if (!rendered.ok || protocol === "strict") return rendered;
  return { ok: true, sql: replaceCurrentYear(fixSpacedOperators(rendered.sql.replaceAll("value", "1"))) };
}

/** The gold text a Spider protocol executes (gold never gets the `value` substitution). */
export function prepareSpiderGold(gold: string, protocol: SpiderProtocol): string {
  const g = gold.trim();
  if (protocol === "official") return replaceCurrentYear(removeDistinct(fixSpacedOperators(g)));
  if (protocol === "merit") return replaceCurrentYear(fixSpacedOperators(g));
  return g;
}

/** The test-suite rule: row order matters iff the gold contains `order by` (lower-cased substring). */
export function goldOrderMatters(preparedGold: string): boolean {
  return preparedGold.toLowerCase().includes("order by");
}

/**
 * BIRD (METHOD.md §2.4): the prediction is only stripped. Empty text and a second statement after the
 * first (Python's sqlite3 rule: anything but whitespace and comments after the first `;`) are failures.
 */
export function prepareBirdPrediction(raw: string): Prepared {
  const sql = raw.trim();
  if (sql === "") return { ok: false, error: NO_SINGLE_STATEMENT };
  if (sql.includes("\u0000")) return { ok: false, error: NUL_IN_QUERY };
  const statements = splitStatements(tokenizeSql(sql));
  if (statements.length === 0 || !isNonBlankStatement(statements[0])) return { ok: false, error: NO_SINGLE_STATEMENT };
  // After the first statement CPython's sqlite3 skips only whitespace, `--` and `/* */` comments
  // (not sqlparse's `# ` comments, which the splitter may have absorbed into the first statement).
  const skipped = (t: { kind: string; text: string }) => t.kind === "whitespace" || t.kind === "newline" || (t.kind === "comment" && !t.text.startsWith("#"));
  const first = statements[0];
  const semicolon = first.findIndex((t) => t.kind === "punctuation" && t.text === ";");
  const tail = [...(semicolon >= 0 ? first.slice(semicolon + 1) : []), ...statements.slice(1).flat()];
  const trailing = tail.some((t) => !skipped(t));
  if (trailing) return { ok: false, error: PYTHON_MULTI_STATEMENT };
  return { ok: true, sql };
}
