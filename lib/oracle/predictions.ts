/**
 * Predictions files (DESIGN.md §2 `merit eval`): one SQL per line, in dataset order, decoded strictly
 * (a Latin-1 file read as UTF-8 is an error that names the fix, never silent mojibake).
 *
 * The official format `SQL<TAB>db_id` (the gold files' layout, and how many public runs are shared)
 * is accepted under every protocol: a line holding a tab keeps only its first tab field, as the
 * test-suite evaluator reads predictions (`line.strip().split('\t')[0]`). Model output in a repair
 * run never passes through this reader, so a tab inside generated SQL is left alone there.
 * @module
 */
import { readFileSync } from "node:fs";
import { InputFileError } from "../errors.ts";
import { sha256Hex } from "../hash.ts";

export type PredictionEncoding = "utf8" | "latin1";

export interface PredictionsFile {
  path: string;
  encoding: PredictionEncoding;
  sha256: string;
  /** One SQL per line (line terminators removed, first tab field only; a final newline adds no line). */
  lines: string[];
  /** Lines that carried a tab (`SQL<TAB>db_id`) and were cut to their first field. */
  tabbedLines: number;
}

/** Reads and checks a predictions file against the expected number of examples. */
export function readPredictions(path: string, encoding: PredictionEncoding, expectedLines: number): PredictionsFile {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new InputFileError(path, code === "ENOENT" ? "predictions file not found" : `cannot read predictions file (${code})`, "check the --pred path", error);
  }
  let text: string;
  if (encoding === "utf8") {
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch (error) {
      const line = firstInvalidUtf8Line(bytes);
      throw new InputFileError(path, `not valid UTF-8 (first bad byte on line ${line})`, "pass --encoding latin1 if the file is Latin-1", error);
    }
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  } else {
    text = bytes.toString("latin1");
  }
  const lines = text.split("\n").map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  if (lines.length !== expectedLines) {
    throw new InputFileError(
      path,
      `has ${lines.length} lines but the dataset has ${expectedLines} examples`,
      "write exactly one SQL per line in dataset order (an empty line for a missing prediction)",
    );
  }
  let tabbedLines = 0;
  const sqls = lines.map((line) => {
    if (!line.includes("\t")) return line;
    tabbedLines += 1;
    return firstTabField(line);
  });
  return { path, encoding, sha256: sha256Hex(bytes), lines: sqls, tabbedLines };
}

/** The SQL of an official-format line: stripped, then everything before the first tab. */
export function firstTabField(line: string): string {
  return line.trim().split("\t")[0];
}

function firstInvalidUtf8Line(bytes: Buffer): number {
  let line = 1;
  let start = 0;
  for (let i = 0; i <= bytes.length; i++) {
    if (i === bytes.length || bytes[i] === 0x0a) {
      try {
        new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(start, i));
      } catch {
        return line;
      }
      line += 1;
      start = i + 1;
    }
  }
  return line;
}
