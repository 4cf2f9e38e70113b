/**
 * Model response → SQL (METHOD.md §2.7, with §11.3): answer tags, then a fenced block, then the first
 * whole word WITH/SELECT, then a cut at stray tags or chat-role lines, then single-statement
 * canonicalisation. Returns "" for empty or multi-statement output; the oracle scores "" as
 * EXECUTION_ERROR `no single SQL statement in model output` (never an exception).
 * @module
 */

const ANSWER = /<answer>([\s\S]*?)<\/answer>/i;
const FENCE = /```(?:sql)?[^\S\n]*\n?([\s\S]*?)```/i;
const FIRST_QUERY_WORD = /\b(?:WITH|SELECT)\b/i;
const CUT = /<\/?answer>|<\/?reflection>|^(?:Human|Assistant):/im;

/** The SQL a model response proposes, or "" when there is no single statement. */
export function extractSql(response: string): string {
  let text = ANSWER.exec(response)?.[1] ?? response;
  const fenced = FENCE.exec(text);
  if (fenced) text = fenced[1];
  const start = FIRST_QUERY_WORD.exec(text);
  if (start) text = text.slice(start.index);
  const cut = CUT.exec(text);
  if (cut) text = text.slice(0, cut.index);
  return singleStatement(text);
}

/**
 * Strips, then finds top-level semicolons (outside '…', "…", `…`, […] and -- / /* *\/ comments, with
 * doubled-quote escapes): more than one ⇒ ""; one followed by anything but whitespace or comments ⇒
 * ""; otherwise the text before it, right-stripped.
 */
export function singleStatement(sql: string): string {
  const text = sql.trim();
  if (text === "") return "";
  const semicolons: number[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === "'" || c === '"' || c === "`") i = skipQuoted(text, i, c);
    else if (c === "[") i = skipTo(text, i + 1, "]");
    else if (c === "-" && text[i + 1] === "-") i = skipTo(text, i + 2, "\n");
    else if (c === "/" && text[i + 1] === "*") i = skipTo(text, i + 2, "*/");
    else {
      if (c === ";") semicolons.push(i);
      i += 1;
    }
  }
  if (semicolons.length === 0) return text;
  if (semicolons.length > 1) return "";
  const after = text.slice(semicolons[0] + 1);
  if (!onlyWhitespaceAndComments(after)) return "";
  return text.slice(0, semicolons[0]).trimEnd();
}

/** Index just past a quoted region starting at `start` (doubled quote = escaped quote). */
function skipQuoted(text: string, start: number, quote: string): number {
  let i = start + 1;
  while (i < text.length) {
    if (text[i] === quote) {
      if (text[i + 1] === quote) i += 2;
      else return i + 1;
    } else i += 1;
  }
  return text.length;
}

function skipTo(text: string, from: number, end: string): number {
  const j = text.indexOf(end, from);
  return j < 0 ? text.length : j + end.length;
}

function onlyWhitespaceAndComments(text: string): boolean {
  return /^(?:\s|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*$/.test(text);
}
