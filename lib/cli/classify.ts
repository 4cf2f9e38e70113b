/**
 * `merit classify` (DESIGN.md §2; METHOD.md §3): adds `error_type` and `error_subtype` to every line
 * of a JSONL file of outcomes (`status`, `db_error`, optional `predicted_exec_ok`), other keys kept
 * byte-for-byte and in order. CORRECT lines get null for both.
 * @module
 */
import { readFileSync, writeFileSync } from "node:fs";
import { classifyFailure } from "../classify.ts";
import { InputFileError } from "../errors.ts";
import { STATUSES, type Status } from "../oracle/types.ts";
import { parseFlags, required, type Command } from "./command.ts";
import { assertWritableFile } from "../experiment/output-paths.ts";


const USAGE = `usage: merit classify --in FILE.jsonl [--out FILE]

Each input line is a JSON object with "status" and "db_error" (string or null), e.g. a line of
eval's verdicts.jsonl. Writes the same lines with "error_type" and "error_subtype" appended
(to --out, or stdout).`;

export const classifyCommand: Command = {
  name: "classify",
  summary: "add the deterministic failure type (METHOD.md §3) to each line of a JSONL file",
  usage: USAGE,
  async run(argv, io) {
    const { values } = parseFlags(argv, { in: { type: "string" }, out: { type: "string" } }, USAGE);
    const input = required(values.in, "in", USAGE);
    if (values.out !== undefined) assertWritableFile(values.out, "--out");
    let text: string;
    try {
      text = readFileSync(input, "utf8");
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      throw new InputFileError(input, `cannot read (${code})`, "pass --in an existing JSONL file", error);
    }
    const lines = text.split("\n");
    if (lines.at(-1) === "") lines.pop(); // the newline that ends the last line
    const output = lines.map((line, i) => classifyLine(line.replace(/\r$/, ""), input, i + 1));
    if (values.out === undefined) {
      for (const line of output) io.out(line);
    } else {
      writeFileSync(values.out, output.map((line) => line + "\n").join(""));
      io.err(`classify: ${output.length} lines written to ${values.out}`);
    }
    return 0;
  },
};

/** One output line: the input with error_type and error_subtype added (or replaced in place). */
function classifyLine(line: string, file: string, lineNumber: number): string {
  const bad = (problem: string): InputFileError =>
    new InputFileError(file, `line ${lineNumber}: ${problem}`, 'each line must be one JSON object with "status" and "db_error" (string or null)');
  let record: unknown;
  try {
    record = JSON.parse(line);
  } catch (error) {
    throw bad(line.trim() === "" ? "blank line" : `malformed JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (record === null || typeof record !== "object" || Array.isArray(record)) throw bad("not a JSON object");
  const fields = record as Record<string, unknown>;
  const { status, db_error: dbError, predicted_exec_ok: predictedExecOk } = fields;
  if (typeof status !== "string" || !(STATUSES as readonly string[]).includes(status)) {
    throw bad(`"status" must be one of ${STATUSES.join(", ")}, got ${JSON.stringify(status)}`);
  }
  if (!("db_error" in fields) || (dbError !== null && typeof dbError !== "string")) {
    throw bad(`"db_error" must be a string or null, got ${JSON.stringify(dbError)}`);
  }
  if (predictedExecOk !== undefined && typeof predictedExecOk !== "boolean") {
    throw bad(`"predicted_exec_ok" must be a boolean when present, got ${JSON.stringify(predictedExecOk)}`);
  }
  const result = classifyFailure({ status: status as Status, dbError, predictedExecOk });
  const added = { error_type: result?.errorType ?? null, error_subtype: result?.errorSubtype ?? null };
  if ("error_type" in fields || "error_subtype" in fields) {
    // Re-classifying a classified file: replace the values in their positions (re-serialised).
    return JSON.stringify(Object.assign(fields, added));
  }
  // Append before the closing brace so every other byte of the line is kept as written.
  const body = line.trimEnd();
  const suffix = JSON.stringify(added).slice(1, -1);
  return body.slice(0, -1).trimEnd() + (Object.keys(fields).length > 0 ? "," : "") + suffix + "}";
}
