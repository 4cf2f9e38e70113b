// Tests lib/analysis/table.ts and number-format.ts: exact CSV / Markdown / LaTeX renderings, escaping, best/second marks.
import { describe, expect, it } from "vitest";
import { fixed, grouped, interval, meanPm, pValue, signed } from "../../lib/analysis/number-format.ts";
import { latexEscape, markBest, renderCsv, renderLatex, renderMarkdown, type Cell, type Table } from "../../lib/analysis/table.ts";

const table: Table = {
  id: "demo",
  title: "EX (%) of A & B",
  columns: ["Method", "Spider"],
  align: ["l", "r"],
  rows: [
    [{ text: "merit_full" }, { text: "72.40 ± 0.31", bold: true }],
    [{ text: 'say "hi", x|y' }, { text: "70.00", underline: true }],
  ],
  notes: ["B = 10000, seed 0"],
  data: [],
};

describe("renderers", () => {
  it("CSV quotes commas and quotes, drops emphasis", () => {
    expect(renderCsv(table)).toBe('Method,Spider\nmerit_full,72.40 ± 0.31\n"say ""hi"", x|y",70.00\n');
  });
  it("Markdown: bold, underline, escaped pipes, alignment row, notes", () => {
    expect(renderMarkdown(table)).toBe(
      [
        "**EX (%) of A & B**",
        "",
        "| Method | Spider |",
        "|:---|---:|",
        "| merit_full | **72.40 ± 0.31** |",
        '| say "hi", x\\|y | <u>70.00</u> |',
        "",
        "_B = 10000, seed 0_",
        "",
      ].join("\n"),
    );
  });
  it("LaTeX booktabs with escapes", () => {
    expect(renderLatex(table)).toBe(
      [
        "\\begin{table}[t]",
        "\\centering",
        "\\caption{EX (\\%) of A \\& B}",
        "\\label{tab:demo}",
        "\\begin{tabular}{lr}",
        "\\toprule",
        "Method & Spider \\\\",
        "\\midrule",
        "merit\\_full & \\textbf{72.40 $\\pm$ 0.31} \\\\",
        'say "hi", x|y & \\underline{70.00} \\\\',
        "\\bottomrule",
        "\\end{tabular}",
        "\\par\\smallskip{\\footnotesize B = 10000, seed 0}",
        "\\end{table}",
        "",
      ].join("\n"),
    );
    expect(latexEscape("Δ ≥ 5% — a_b {c} ~^\\")).toBe("$\\Delta$ $\\geq$ 5\\% --- a\\_b \\{c\\} \\textasciitilde{}\\textasciicircum{}\\textbackslash{}");
  });
});

describe("CSV-only columns and rules", () => {
  const wide: Table = {
    ...table,
    columns: ["Method", "Spider", "B"],
    align: ["l", "r", "r"],
    rows: [[{ text: "a" }, { text: "1" }, { text: "100" }], [{ text: "b" }, { text: "2" }, { text: "100" }]],
    csvOnly: [2],
    rulesBefore: [1],
  };
  it("the CSV keeps every column and no rule", () => {
    expect(renderCsv(wide)).toBe("Method,Spider,B\na,1,100\nb,2,100\n");
  });
  it("Markdown and LaTeX leave the CSV-only columns out and draw the rule", () => {
    expect(renderMarkdown(wide).split("\n").slice(2, 7)).toEqual(["| Method | Spider |", "|:---|---:|", "| a | 1 |", "| — | — |", "| b | 2 |"]);
    expect(renderLatex(wide)).toContain("\\begin{tabular}{lr}\n\\toprule\nMethod & Spider \\\\\n\\midrule\na & 1 \\\\\n\\midrule\nb & 2 \\\\\n\\bottomrule");
  });
});

describe("markBest", () => {
  it("bolds every best (as displayed), underlines the second distinct value", () => {
    const rows: Cell[][] = [[{ text: "a" }], [{ text: "b" }], [{ text: "c" }], [{ text: "d" }], [{ text: "e" }]];
    // 70.004 and 70.001 both show as 70.00 → tie for best; 69.5 second; 60 and null unmarked
    markBest(rows, 0, [70.004, 69.5, 70.001, 60, null], 2);
    expect(rows.map((r) => [r[0].bold ?? false, r[0].underline ?? false])).toEqual([[true, false], [false, true], [true, false], [false, false], [false, false]]);
    const low: Cell[][] = [[{ text: "a" }], [{ text: "b" }]];
    markBest(low, 0, [3, 2], 1, true);
    expect(low[1][0].bold).toBe(true);
    expect(low[0][0].underline).toBe(true);
  });
});

describe("number formatting", () => {
  it("fixed decimals, signs, ± and grouping", () => {
    expect(fixed(58.8975, 2)).toBe("58.90");
    expect(fixed(-0.0001, 2)).toBe("0.00"); // no "-0.00"
    expect(signed(0, 2)).toBe("+0.00");
    expect(signed(-1.234, 2)).toBe("-1.23");
    expect(meanPm({ mean: 58.9, std: 0.123, n: 3 }, 2)).toBe("58.90 ± 0.12");
    expect(meanPm({ mean: 58.9, std: null, n: 1 }, 2)).toBe("58.90");
    expect(grouped(3619, 0)).toBe("3,619");
    expect(grouped(1234567.891, 1)).toBe("1,234,567.9");
    expect(grouped(999, 0)).toBe("999");
    expect(interval(-0.5, 2.1, 2)).toBe("[-0.50, +2.10]");
    expect(pValue(0.03857421875)).toBe("0.0386");
    expect(pValue(0.00001)).toBe("<0.0001");
  });
});
