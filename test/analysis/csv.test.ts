// Tests lib/analysis/csv.ts: RFC 4180 parsing of quoted commas, quotes and line breaks, the round trip, and syntax errors.
import { describe, expect, it } from "vitest";
import { CsvSyntaxError, csvObjects, formatCsv, parseCsv } from "../../lib/analysis/csv.ts";

describe("parseCsv", () => {
  it("reads plain, quoted and empty fields", () => {
    expect(parseCsv('a,b,c\n1,"x, y",\n"",2,"say ""hi"""\n')).toEqual([
      ["a", "b", "c"],
      ["1", "x, y", ""],
      ["", "2", 'say "hi"'],
    ]);
  });
  it("keeps line breaks inside quotes, accepts CRLF, a BOM, no final newline, and skips blank lines", () => {
    expect(parseCsv('\ufeffq,sql\r\n7,"SELECT a\r\nFROM t"\r\n\r\n8,x')).toEqual([
      ["q", "sql"],
      ["7", "SELECT a\r\nFROM t"],
      ["8", "x"],
    ]);
  });
  it("round-trips nasty SQL", () => {
    const rows = [
      ["id", "sql"],
      ["1", `SELECT "name", 'a,b' FROM t WHERE x = 'it''s'`],
      ["2", "SELECT *\nFROM t;\n"],
      ["3", ' leading space'],
      ["4", '""'],
      ["5", ""],
    ];
    const text = formatCsv(rows);
    expect(parseCsv(text)).toEqual(rows);
    // quoting only where needed: row 1 has quotes and a comma, row 5 is bare
    expect(text.split("\n")[1]).toBe(`1,"SELECT ""name"", 'a,b' FROM t WHERE x = 'it''s'"`);
    expect(text.endsWith("5,\n")).toBe(true);
  });
  it("reports malformed input with its line", () => {
    expect(() => parseCsv('a,b\n1,"open\n2')).toThrow(CsvSyntaxError);
    expect(() => parseCsv('a,b\n1,"open\n2')).toThrow(/line 2: a quoted field is never closed/);
    expect(() => parseCsv('a\n"x"y\n')).toThrow(/line 2: text after a closing quote/);
    expect(() => parseCsv('a\nx"y\n')).toThrow(/line 2: a double quote inside an unquoted field/);
  });
});

describe("csvObjects", () => {
  it("keys records by the header and checks field counts", () => {
    expect(csvObjects("a,b\n1,2\n", "f.csv").rows).toEqual([{ a: "1", b: "2" }]);
    expect(() => csvObjects("a,b\n1,2,3\n", "f.csv")).toThrow(/f\.csv: record 2 has 3 fields but the header has 2/);
    expect(() => csvObjects("", "f.csv")).toThrow(/empty/);
  });
});
