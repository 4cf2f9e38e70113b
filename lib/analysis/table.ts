/**
 * Analysis stage, result tables (METHOD.md §9): the table value every builder returns (formatted
 * cells plus the raw numbers) and its CSV, Markdown and LaTeX (booktabs) renderings. Rendering is
 * deterministic: no timestamps, fixed decimals chosen by the builder, rows in the builder's order.
 * @module
 */

/** One formatted cell; `bold` marks the best value of a column, `underline` the second best. */
export interface Cell {
  text: string;
  bold?: boolean;
  underline?: boolean;
}

/** Raw value of one data field (numbers unrounded). */
export type DataValue = number | string | boolean | null;

/**
 * A built table.
 * @example {id: "table1", title: "Execution accuracy (%)", columns: ["Method", "spider"], align: ["l", "r"],
 *   rows: [[{text: "merit"}, {text: "72.40 ± 0.31", bold: true}]], notes: ["mean ± sample std over seeds 0, 1, 2"], data: [...]}
 */
export interface Table {
  /** Stable id used for file names and LaTeX labels, e.g. `table2`. */
  id: string;
  title: string;
  columns: string[];
  /** Column alignment: `l` text, `r` numbers. */
  align: ("l" | "r")[];
  rows: Cell[][];
  /** Provenance lines (B, seed, interval type, n, …) shown under the table in Markdown and LaTeX. */
  notes: string[];
  /** The unformatted numbers, one record per logical row (long format), for DataFrames and CSV export of raw data. */
  data: Record<string, DataValue>[];
  /** Indices of columns written to the CSV only (Markdown, LaTeX and HTML leave them out). */
  csvOnly?: number[];
  /** Row indices drawn with a rule above them (LaTeX `\midrule`, a separator row in Markdown, a ruled row in HTML). */
  rulesBefore?: number[];
}

/** The indices of the columns Markdown, LaTeX and HTML show (every column not in `csvOnly`). */
export function shownColumns(table: Table): number[] {
  const hidden = new Set(table.csvOnly ?? []);
  return table.columns.map((_, i) => i).filter((i) => !hidden.has(i));
}

/** RFC 4180 CSV of the formatted cells (no emphasis markers), header first, "\n" line ends. */
export function renderCsv(table: Table): string {
  const quote = (s: string) => (/[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  const lines = [table.columns.map(quote).join(",")];
  for (const row of table.rows) lines.push(row.map((c) => quote(c.text)).join(","));
  return lines.join("\n") + "\n";
}

/** A GitHub-flavoured Markdown table; best in `**bold**`, second in `<u>underline</u>`, notes below. */
export function renderMarkdown(table: Table): string {
  const escape = (s: string) => s.replace(/\|/g, "\\|");
  const cell = (c: Cell) => {
    let t = escape(c.text);
    if (c.underline) t = `<u>${t}</u>`;
    if (c.bold) t = `**${t}**`;
    return t;
  };
  const shown = shownColumns(table);
  const rules = new Set(table.rulesBefore ?? []);
  const lines = [
    `**${escape(table.title)}**`,
    "",
    `| ${shown.map((i) => escape(table.columns[i])).join(" | ")} |`,
    `|${shown.map((i) => (table.align[i] === "r" ? "---:" : ":---")).join("|")}|`,
    ...table.rows.flatMap((row, r) => [
      ...(rules.has(r) ? [`| ${shown.map(() => "—").join(" | ")} |`] : []),
      `| ${shown.map((i) => cell(row[i])).join(" | ")} |`,
    ]),
  ];
  if (table.notes.length > 0) lines.push("", ...table.notes.map((n) => `_${escape(n)}_`));
  return lines.join("\n") + "\n";
}

const LATEX_SPECIAL: Record<string, string> = {
  "\\": "\\textbackslash{}",
  "&": "\\&",
  "%": "\\%",
  $: "\\$",
  "#": "\\#",
  _: "\\_",
  "{": "\\{",
  "}": "\\}",
  "~": "\\textasciitilde{}",
  "^": "\\textasciicircum{}",
  "±": "$\\pm$",
  "Δ": "$\\Delta$",
  "−": "$-$",
  "—": "---",
  "–": "--",
  "×": "$\\times$",
  "≤": "$\\leq$",
  "≥": "$\\geq$",
};

/** Escape text for LaTeX text mode; the few non-ASCII symbols the tables use become math-mode macros. */
export function latexEscape(s: string): string {
  return s.replace(/[\\&%$#_{}~^±Δ−—–×≤≥]/g, (ch) => LATEX_SPECIAL[ch]);
}

/** A booktabs `table` environment (needs `\usepackage{booktabs}`); notes become a footnotesize paragraph. */
export function renderLatex(table: Table): string {
  const cell = (c: Cell) => {
    let t = latexEscape(c.text);
    if (c.underline) t = `\\underline{${t}}`;
    if (c.bold) t = `\\textbf{${t}}`;
    return t;
  };
  const shown = shownColumns(table);
  const rules = new Set(table.rulesBefore ?? []);
  const lines = [
    "\\begin{table}[t]",
    "\\centering",
    `\\caption{${latexEscape(table.title)}}`,
    `\\label{tab:${table.id}}`,
    `\\begin{tabular}{${shown.map((i) => table.align[i]).join("")}}`,
    "\\toprule",
    `${shown.map((i) => latexEscape(table.columns[i])).join(" & ")} \\\\`,
    "\\midrule",
    ...table.rows.flatMap((row, r) => [...(rules.has(r) ? ["\\midrule"] : []), `${shown.map((i) => cell(row[i])).join(" & ")} \\\\`]),
    "\\bottomrule",
    "\\end{tabular}",
  ];
  if (table.notes.length > 0) lines.push(`\\par\\smallskip{\\footnotesize ${table.notes.map(latexEscape).join(" ")}}`);
  lines.push("\\end{table}");
  return lines.join("\n") + "\n";
}

/**
 * Mark the best (bold) and second-best (underline) cells of one column among `rows`, comparing the
 * values as displayed (so equal-looking numbers tie). Higher is better unless `lowerIsBetter`.
 */
export function markBest(rows: Cell[][], column: number, values: (number | null)[], decimals: number, lowerIsBetter = false): void {
  const shown = values.map((v) => (v === null ? null : Number(v.toFixed(decimals))));
  const distinct = [...new Set(shown.filter((v): v is number => v !== null))].sort((x, y) => (lowerIsBetter ? x - y : y - x));
  shown.forEach((v, i) => {
    if (v === null) return;
    if (v === distinct[0]) rows[i][column].bold = true;
    else if (distinct.length > 1 && v === distinct[1]) rows[i][column].underline = true;
  });
}
