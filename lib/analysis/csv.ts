/**
 * Analysis stage, CSV codec (METHOD.md §8 classifier validation): RFC 4180 records for the
 * annotation round trip — quoted fields may hold commas, double quotes (doubled) and line breaks.
 * Hand-written because the kit pins no CSV package (papaparse is only a transitive dependency).
 * @module
 */
import { MeritError } from "../errors.ts";

/** A CSV text that is not RFC 4180; `line` is 1-based and counts physical lines. */
export class CsvSyntaxError extends MeritError {
  readonly line: number;
  constructor(line: number, detail: string) {
    super(`CSV line ${line}: ${detail}; quote fields that hold commas, quotes or line breaks ("a ""b"", c")`);
    this.line = line;
  }
}

/** One field, quoted when it holds a comma, a double quote, CR or LF (or starts/ends with a space). */
export function csvField(value: string): string {
  return /[",\r\n]|^\s|\s$/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** Records to CSV text: header first, "\r\n"-free "\n" line ends, one final "\n". */
export function formatCsv(rows: readonly (readonly string[])[]): string {
  return rows.map((row) => row.map(csvField).join(",")).join("\n") + "\n";
}

/**
 * Parse CSV text into records (arrays of fields). Accepts "\n" and "\r\n" record ends, a final
 * line end or none, a UTF-8 BOM; skips empty lines between records. Quotes are only special at the
 * start of a field; a quote inside an unquoted field, or text after a closing quote, is an error.
 */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = "";
  let atFieldStart = true;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let line = 1;
  const endRecord = () => {
    const empty = record.length === 0 && field === "" && atFieldStart;
    if (!empty) records.push([...record, field]);
    record = [];
    field = "";
    atFieldStart = true;
  };
  while (i < text.length) {
    const c = text[i];
    if (c === '"' && atFieldStart) {
      const startLine = line;
      i++;
      for (;;) {
        if (i >= text.length) throw new CsvSyntaxError(startLine, "a quoted field is never closed");
        if (text[i] === '"') {
          if (text[i + 1] !== '"') break;
          field += '"';
          i += 2;
          continue;
        }
        if (text[i] === "\n") line++;
        field += text[i++];
      }
      i++; // the closing quote
      atFieldStart = false;
      const next = text[i];
      if (next !== undefined && next !== "," && next !== "\n" && next !== "\r") throw new CsvSyntaxError(line, "text after a closing quote");
      continue;
    }
    if (c === ",") {
      record.push(field);
      field = "";
      atFieldStart = true;
      i++;
      continue;
    }
    if (c === "\n" || c === "\r") {
      endRecord();
      i += c === "\r" && text[i + 1] === "\n" ? 2 : 1;
      line++;
      continue;
    }
    if (c === '"') throw new CsvSyntaxError(line, "a double quote inside an unquoted field");
    field += c;
    atFieldStart = false;
    i++;
  }
  endRecord();
  return records;
}

/**
 * Records with a header row → objects keyed by the header. Every record must have the header's
 * number of fields; `file` names the source in errors.
 */
export function csvObjects(text: string, file: string): { header: string[]; rows: Record<string, string>[] } {
  const [header, ...records] = parseCsv(text);
  if (header === undefined) throw new MeritError(`${file}: the CSV is empty; write a header row first`);
  const rows = records.map((r, i) => {
    if (r.length !== header.length) {
      throw new MeritError(`${file}: record ${i + 2} has ${r.length} fields but the header has ${header.length}; quote fields that contain commas`);
    }
    return Object.fromEntries(header.map((h, j) => [h, r[j]]));
  });
  return { header, rows };
}
