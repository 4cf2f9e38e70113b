/**
 * Report stage, pure core (METHOD.md §8): the compact encoding of the index's integer columns. A
 * column whose values all lie in [−1, 55000) is written as a string with one UTF-16 code unit per
 * row (value + 48, so −1 is "/" and 0 is "0"); other columns stay JSON number arrays. A 60k-row
 * string parses an order of magnitude faster than a 60k-element array literal (bench/report.ts).
 * assets/filters.js `decodeRows` is the inverse.
 * @module
 */
import type { RowColumns } from "./report-data.ts";

/** Offset added to every value; 48 keeps small codes printable ASCII ("0" = 0). */
export const CODE_OFFSET = 48;
/** Exclusive upper bound: value + 48 must stay below the UTF-16 surrogate range (0xD800 = 55296). */
export const CODE_LIMIT = 55_000;

/** One encoded column: a string of code units, or the numbers themselves when some value is out of range. */
export type EncodedColumn = string | number[];
export type EncodedRows = Record<keyof RowColumns, EncodedColumn>;

export function encodeColumn(values: readonly number[]): EncodedColumn {
  if (!values.every((v) => Number.isInteger(v) && v >= -1 && v < CODE_LIMIT)) return [...values];
  let out = "";
  for (const v of values) out += String.fromCharCode(v + CODE_OFFSET);
  return out;
}

export function decodeColumn(column: EncodedColumn): number[] {
  if (typeof column !== "string") return [...column];
  const out: number[] = new Array(column.length);
  for (let i = 0; i < column.length; i++) out[i] = column.charCodeAt(i) - CODE_OFFSET;
  return out;
}

export function encodeRows(rows: RowColumns): EncodedRows {
  return Object.fromEntries(Object.entries(rows).map(([k, v]) => [k, encodeColumn(v)])) as EncodedRows;
}
