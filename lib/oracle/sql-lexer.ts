/**
 * Oracle pre-processing (METHOD.md §2.3): a lexer that splits SQL into the same tokens as Python's
 * `sqlparse` does for the constructs the Spider evaluators depend on — whitespace (one token per
 * character, `\r\n` as one newline), comments (`--`, `# `, `/* *\/`), quoted strings and names,
 * multi-word keywords (`ORDER BY`, `LEFT JOIN`, …), words, punctuation — plus sqlparse's statement
 * splitter. The official evaluator's `remove_distinct` and MERIT's one-line rendering are defined in
 * terms of these tokens, so their quirks (a `DISTINCT` inside a string survives, `ORDER\nBY` is one
 * token containing a newline) are reproduced here rather than approximated with regexes on raw text.
 * @module
 */

export type TokenKind =
  | "whitespace"
  | "newline"
  | "comment"
  | "string" // '…' literal
  | "symbol" // "…" quoted (sqlparse String.Symbol)
  | "name" // `…`, [ … ], and word-like names
  | "keyword" // multi-word keywords and the few single ones sqlparse matches before names
  | "word" // any other \w[$#\w]* run
  | "number"
  | "punctuation"
  | "operator"
  | "other";

export interface SqlToken {
  kind: TokenKind;
  text: string;
}

// Python's `\w` under re.UNICODE: letters, numbers and underscore.
const W = "[\\p{L}\\p{N}_]";
const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const DIGITS = "0123456789";
/** `letters` in both cases (a case-insensitive rule's first letters). */
const cased = (letters: string) => letters + letters.toLowerCase();
const NAME_START = "[A-Za-zÀ-Üà-ü]";

/**
 * Ordered rules, mirroring the relevant prefix of sqlparse's SQL_REGEX (re.IGNORECASE | re.UNICODE).
 * Each rule's third field lists the ASCII characters its match can start with (FIRST_ASCII below).
 */
const RULE_TABLE: Array<[RegExp, TokenKind, string]> = [
  [/(?:--|# ).*?(?:\r\n|\r|\n|$)/suy, "comment", "-#"],
  // sqlparse's `/\*[\s\S]*?\*\/` comment rule comes here; `tokenizeSql` applies it by hand (below).
  [/\r\n|\r|\n/uy, "newline", "\r\n"],
  [/\s/uy, "whitespace", " \t\n\v\f\r"],
  [/:=|::/uy, "punctuation", ":"],
  [/\*/uy, "operator", "*"],
  [/`(?:``|[^`])*`/uy, "name", "`"],
  [/´(?:´´|[^´])*´/uy, "name", ""],
  [/\?/uy, "name", "?"],
  [new RegExp(`(?<!${W})[$:?]${W}+`, "uy"), "name", "$:?"],
  [new RegExp(`(?:CASE|IN|VALUES|USING|FROM|AS)(?!${W})`, "iuy"), "keyword", "CIVUFAcivufa"],
  [new RegExp(`(?:@|##|#)${NAME_START}${W}+`, "iuy"), "name", "@#"],
  [new RegExp(`${NAME_START}${W}*(?=\\s*\\.)`, "iuy"), "name", LETTERS],
  [new RegExp(`(?<=\\.)${NAME_START}${W}*`, "iuy"), "name", LETTERS],
  [new RegExp(`${NAME_START}${W}*(?=\\()`, "iuy"), "name", LETTERS],
  [/-?0x[\dA-F]+/iuy, "number", "-0"],
  [/-?\d+(?:\.\d+)?E-?\d+/iuy, "number", "-" + DIGITS],
  [/(?![_A-ZÀ-Ü])-?(?:\d+(?:\.\d*)|\.\d+)(?![_A-ZÀ-Ü])/iuy, "number", "-." + DIGITS],
  [/(?![_A-ZÀ-Ü])-?\d+(?![_A-ZÀ-Ü])/iuy, "number", "-" + DIGITS],
  // '…' and "…" (sqlparse's String.Single and String.Symbol) are scanned by `quotedEnd`.
  [/(?:""|".*?[^\\]")/uy, "symbol", '"'],
  [new RegExp(`(?<![\\p{L}\\p{N}_\\])])\\[[^\\]\\[]+\\]`, "uy"), "name", "["],
  [new RegExp(`(?:(?:LEFT\\s+|RIGHT\\s+|FULL\\s+)?(?:INNER\\s+|OUTER\\s+|STRAIGHT\\s+)?|(?:CROSS\\s+|NATURAL\\s+)?)?JOIN(?!${W})`, "iuy"), "keyword", cased("LRFIOSCNJ")],
  [new RegExp(`END(?:\\s+IF|\\s+LOOP|\\s+WHILE)?(?!${W})`, "iuy"), "keyword", cased("E")],
  [new RegExp(`NOT\\s+NULL(?!${W})`, "iuy"), "keyword", cased("N")],
  [new RegExp(`NULLS\\s+(?:FIRST|LAST)(?!${W})`, "iuy"), "keyword", cased("N")],
  [new RegExp(`UNION\\s+ALL(?!${W})`, "iuy"), "keyword", cased("U")],
  [new RegExp(`CREATE(?:\\s+OR\\s+REPLACE)?(?!${W})`, "iuy"), "keyword", cased("C")],
  [new RegExp(`DOUBLE\\s+PRECISION(?!${W})`, "iuy"), "keyword", cased("D")],
  [new RegExp(`GROUP\\s+BY(?!${W})`, "iuy"), "keyword", cased("G")],
  [new RegExp(`ORDER\\s+BY(?!${W})`, "iuy"), "keyword", cased("O")],
  [new RegExp(`HANDLER\\s+FOR(?!${W})`, "iuy"), "keyword", cased("H")],
  [new RegExp(`(?:NOT\\s+)?(?:LIKE|ILIKE|RLIKE)(?!${W})`, "iuy"), "keyword", cased("NLIR")],
  [new RegExp(`(?:NOT\\s+)?REGEXP(?!${W})`, "iuy"), "keyword", cased("NR")],
  [new RegExp(`${W}[$#\\p{L}\\p{N}_]*`, "uy"), "word", LETTERS + DIGITS + "_"],
  [/[;:()[\],.]/uy, "punctuation", ";:()[],."],
  [/[<>=~!]+/uy, "operator", "<>=~!"],
  [/[+/@#%^&|-]+/uy, "operator", "+/@#%^&|-"],
];

/**
 * For each ASCII character, the rules (in order) whose match can start with it: the only ones that
 * can match there, so trying just those gives the same first match as trying them all. A rule
 * matches no ASCII character but those its table entry names: case-insensitive matching folds an
 * ASCII letter only to letters (the foldings that reach a letter from elsewhere — K from U+212A, S
 * from U+017F — start at characters outside ASCII, which try every rule). `tokenizeSqlByRules` is
 * the definition; tests hold the two equal on Spider's queries and on random text.
 */
const FIRST_ASCII: Array<typeof RULE_TABLE> = Array.from({ length: 128 }, (_, code) => RULE_TABLE.filter(([, , first]) => first.includes(String.fromCharCode(code))));

/**
 * End (exclusive) of the match of sqlparse's `'(''|\\\\|\\'|[^'])*'` (or the `"` twin) at `start`, or -1.
 * Scanned by hand because V8's regex engine overflows its stack on multi-megabyte literals. When the
 * literal is unclosed, the regex backtracks and the last quote consumed inside (the first of a `''`
 * pair, or the quote of a `\'`) closes it — reproduced here.
 */
function quotedEnd(sql: string, start: number, quote: string): number {
  let lastInner = -1;
  let i = start + 1;
  while (i < sql.length) {
    const c = sql[i];
    if (c === quote) {
      if (sql[i + 1] === quote) {
        lastInner = i;
        i += 2;
      } else return i + 1;
    } else if (c === "\\" && sql[i + 1] === "\\") {
      i += 2; // sqlparse's `\\\\` alternative: an escaped backslash
    } else if (c === "\\" && sql[i + 1] === quote) {
      lastInner = i + 1;
      i += 2;
    } else i += 1;
  }
  return lastInner >= 0 ? lastInner + 1 : -1;
}

/**
 * Splits `sql` into sqlparse-compatible tokens; concatenating their texts gives back `sql`. Linear
 * time: the block-comment rule (a lazy regex that would rescan to the end of the text at every
 * unclosed `/*`, quadratic on `/* /* /* …`) is applied by hand, remembering the next `*\/`.
 */
export function tokenizeSql(sql: string): SqlToken[] {
  return tokenize(sql, true);
}

/** `tokenizeSql` trying every rule at every position (its definition; tests hold the two equal). */
export function tokenizeSqlByRules(sql: string): SqlToken[] {
  return tokenize(sql, false);
}

function tokenize(sql: string, dispatch: boolean): SqlToken[] {
  const tokens: SqlToken[] = [];
  let pos = 0;
  /** Index of the next `*\/` at or after the last search start; -1 = none left; -2 = not searched. */
  let close = -2;
  outer: while (pos < sql.length) {
    const ch = sql[pos];
    if (ch === " " || ch === "\t") {
      // A space or tab (43 % of Spider's tokens): no rule before `\s` can match at it (the `--`/`# `
      // comment, the newline, the block comment and the quotes all start with another character).
      tokens.push({ kind: "whitespace", text: ch });
      pos += 1;
      continue;
    }
    if (ch === "/" && sql[pos + 1] === "*") {
      // Only the `--`/`# ` rule precedes this one, and it cannot match at a `/`.
      if (close !== -1 && close < pos + 2) close = sql.indexOf("*/", pos + 2);
      if (close >= 0) {
        tokens.push({ kind: "comment", text: sql.slice(pos, close + 2) });
        pos = close + 2;
        continue;
      }
    }
    if (ch === "'" || ch === '"') {
      // No earlier rule can match at a quote, so the string/symbol rule is the first to try.
      const end = quotedEnd(sql, pos, ch);
      if (end > 0) {
        tokens.push({ kind: ch === "'" ? "string" : "symbol", text: sql.slice(pos, end) });
        pos = end;
        continue;
      }
    }
    const code = sql.charCodeAt(pos);
    for (const [re, kind] of dispatch && code < 128 ? FIRST_ASCII[code] : RULE_TABLE) {
      re.lastIndex = pos;
      const m = re.exec(sql);
      if (m && m[0].length > 0) {
        tokens.push({ kind, text: m[0] });
        pos += m[0].length;
        continue outer;
      }
    }
    // sqlparse emits an Error token for one unmatched character and carries on.
    const one = String.fromCodePoint(sql.codePointAt(pos)!);
    tokens.push({ kind: "other", text: one });
    pos += one.length;
  }
  return tokens;
}

// sqlparse lowers the split level on exactly these keyword spellings (`END LOOP` does not count).
const END_KEYWORDS = new Set(["END", "END IF", "END FOR", "END WHILE"]);

const isBlank = (t: SqlToken) => t.kind === "whitespace" || t.kind === "newline" || t.kind === "comment";

/**
 * sqlparse's StatementSplitter: a statement ends at a `;` at split level ≤ 0 (parentheses raise the
 * level, the keyword END lowers it), and absorbs the whitespace and single-line comments that follow
 * it on the same run. Statements made only of whitespace are dropped at the end, as sqlparse does.
 */
export function splitStatements(tokens: SqlToken[]): SqlToken[][] {
  const statements: SqlToken[][] = [];
  let current: SqlToken[] = [];
  let level = 0;
  let consumeWs = false;
  for (const token of tokens) {
    const endOfStatementTail = token.kind === "whitespace" || (token.kind === "comment" && !token.text.startsWith("/*"));
    if (consumeWs && !endOfStatementTail) {
      statements.push(current);
      current = [];
      level = 0;
      consumeWs = false;
    }
    if (token.kind === "punctuation" && token.text === "(") level += 1;
    else if (token.kind === "punctuation" && token.text === ")") level -= 1;
    else if (token.kind === "keyword" && END_KEYWORDS.has(token.text.toUpperCase())) level -= 1;
    current.push(token);
    if (level <= 0 && token.kind === "punctuation" && token.text === ";") consumeWs = true;
  }
  if (current.length > 0 && !current.every((t) => t.kind === "whitespace" || t.kind === "newline")) statements.push(current);
  return statements;
}

/** True when a statement has some token that is not whitespace, a comment or a `;`. */
export function isNonBlankStatement(statement: SqlToken[]): boolean {
  return statement.some((t) => !isBlank(t) && !(t.kind === "punctuation" && t.text === ";"));
}

/**
 * The official test-suite evaluator's `remove_distinct` (keep_distinct = false): keep only the FIRST
 * sqlparse statement and drop every token whose text is `distinct` in any case — including inside
 * `COUNT(DISTINCT x)` — while `'distinct'` inside a string literal survives.
 */
export function removeDistinct(sql: string): string {
  // Without a `;` the text is one statement (or none, when it is all whitespace), and without
  // "distinct" in any case no token is dropped: the tokens' texts join back into `sql`. Only ASCII
  // letters lower-case to those of "distinct", so lower-casing the whole text finds every such token.
  // This skips the lexer for most queries (≈ 80 µs each); `removeDistinctByTokens` is the definition.
  if (!sql.includes(";") && !sql.toLowerCase().includes("distinct")) return /^\s*$/u.test(sql) ? "" : sql;
  return removeDistinctByTokens(sql);
}

/** `removeDistinct` computed from the tokens, always (its definition; tests hold the shortcut to it). */
export function removeDistinctByTokens(sql: string): string {
  const statements = splitStatements(tokenizeSql(sql));
  if (statements.length === 0) return "";
  return statements[0]
    .filter((t) => t.text.toLowerCase() !== "distinct")
    .map((t) => t.text)
    .join("");
}
