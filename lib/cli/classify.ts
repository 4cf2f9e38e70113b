/**
 * `merit classify` (DESIGN.md §2; METHOD.md §3): adds `error_type` and `error_subtype` to every line
 * of a JSONL file of outcomes (`status`, `db_error`, optional `predicted_exec_ok`), other keys kept
 * byte-for-byte and in order. CORRECT lines get null for both. With `--method NAME` (a plugin's
 * method, loaded by `--plugin`), the method's classify hook labels the failed lines instead, reading
 * each line's `sql` (issue 39 §13).
 * @module
 */
import { readFileSync, writeFileSync } from "node:fs";
import { classifyFailure } from "../classify.ts";
import { InputFileError, UsageError } from "../errors.ts";
import type { ClassifyHook } from "../methods/hooks.ts";
import { getMethod } from "../methods/index.ts";
import { STATUSES, type Status } from "../oracle/types.ts";
import { parseFlags, required, seeHelp, type Command } from "./command.ts";
import { assertWritableFile } from "../experiment/output-paths.ts";
import { loadCommandPlugins, PLUGIN_FLAG, PLUGIN_USAGE } from "./plugin-flag.ts";


const USAGE = `usage: merit classify --in FILE.jsonl [--out FILE] [--method NAME [--plugin FILE.ts ...]]

Each input line is a JSON object with "status" and "db_error" (string or null), e.g. a line of
eval's verdicts.jsonl. Writes the same lines with "error_type" and "error_subtype" appended
(to --out, or stdout).
  --method NAME  label the failed lines with this method's classify hook (e.g. merit_fine_types of
                 examples/error-taxonomy.ts) instead of METHOD.md §3's classifier; each line then
                 needs "sql" (the attempt) and may give "query_id", "db_id", "question" and
                 "evidence" (the hook sees "" for those absent and for the schema); error_subtype
                 is null
${PLUGIN_USAGE}`;

/** How a line gets its label: METHOD.md §3's classifier, or a method's classify hook. */
type Labeler = { method: string; hook: ClassifyHook } | null;

export const classifyCommand: Command = {
  name: "classify",
  summary: "add the deterministic failure type (METHOD.md §3) to each line of a JSONL file",
  usage: USAGE,
  async run(argv, io) {
    const { values } = parseFlags(argv, { in: { type: "string" }, out: { type: "string" }, method: { type: "string" }, ...PLUGIN_FLAG }, USAGE);
    const input = required(values.in, "in", USAGE);
    if (values.out !== undefined) assertWritableFile(values.out, "--out");
    await loadCommandPlugins(values.plugin, {}, io);
    const labeler = methodLabeler(values.method);
    let text: string;
    try {
      text = readFileSync(input, "utf8");
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      throw new InputFileError(input, `cannot read (${code})`, "pass --in an existing JSONL file", error);
    }
    const lines = text.split("\n");
    if (lines.at(-1) === "") lines.pop(); // the newline that ends the last line
    const output = lines.map((line, i) => classifyLine(line.replace(/\r$/, ""), input, i + 1, labeler));
    if (values.out === undefined) {
      for (const line of output) io.out(line);
    } else {
      writeFileSync(values.out, output.map((line) => line + "\n").join(""));
      io.err(`classify: ${output.length} lines written to ${values.out}`);
    }
    return 0;
  },
};

/** `--method NAME`: the method's classify hook; a method without one is refused in one line. */
function methodLabeler(name: string | undefined): Labeler {
  if (name === undefined) return null;
  const hook = getMethod(name).hooks.classify;
  if (hook === undefined) throw new UsageError(`--method ${name} has no classify hook; leave --method out for METHOD.md §3's classifier, or name a method that declares one (merit methods lists them)${seeHelp(USAGE)}`);
  return { method: name, hook };
}

/** One output line: the input with error_type and error_subtype added (or replaced in place). */
function classifyLine(line: string, file: string, lineNumber: number, labeler: Labeler): string {
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
  const added = labeler === null ? coarseLabel(status as Status, dbError, predictedExecOk) : hookLabel(labeler, fields, lineNumber, bad);
  if ("error_type" in fields || "error_subtype" in fields) {
    // Re-classifying a classified file: replace the values in their positions (re-serialised).
    return JSON.stringify(Object.assign(fields, added));
  }
  // Append before the closing brace so every other byte of the line is kept as written.
  const body = line.trimEnd();
  const suffix = JSON.stringify(added).slice(1, -1);
  return body.slice(0, -1).trimEnd() + (Object.keys(fields).length > 0 ? "," : "") + suffix + "}";
}

/** METHOD.md §3's type and subtype (null for a correct attempt). */
function coarseLabel(status: Status, dbError: string | null, predictedExecOk: boolean | undefined): { error_type: string | null; error_subtype: string | null } {
  const result = classifyFailure({ status, dbError, predictedExecOk });
  return { error_type: result?.errorType ?? null, error_subtype: result?.errorSubtype ?? null };
}

/** The method's hook label of a failed line (null for a correct one); the label must be one the hook declares. */
function hookLabel(labeler: NonNullable<Labeler>, fields: Record<string, unknown>, lineNumber: number, bad: (problem: string) => InputFileError): { error_type: string | null; error_subtype: null } {
  const status = fields.status as Status;
  if (status === "CORRECT") return { error_type: null, error_subtype: null };
  if (typeof fields.sql !== "string") throw bad(`--method ${labeler.method} reads the attempt's "sql" (a string), got ${JSON.stringify(fields.sql)}`);
  const text = (key: string) => {
    const v = fields[key];
    if (v !== undefined && typeof v !== "string") throw bad(`"${key}" must be a string when present, got ${JSON.stringify(v)}`);
    return v ?? "";
  };
  const executed = typeof fields.predicted_exec_ok === "boolean" ? fields.predicted_exec_ok : status !== "EXECUTION_ERROR" && status !== "TIMEOUT";
  const label = labeler.hook.classify({
    dataset: "", queryId: text("query_id"), dbId: text("db_id"), question: text("question"), evidence: text("evidence"), schema: "", streamPosition: lineNumber - 1,
    sql: fields.sql, status, dbError: fields.db_error as string | null, executed,
  });
  if (typeof label !== "string" || !labeler.hook.types.includes(label)) throw bad(`method "${labeler.method}": classifier "${labeler.hook.name}" returned ${JSON.stringify(label)}, which is not one of its declared types (${labeler.hook.types.join(", ")})`);
  return { error_type: label, error_subtype: null };
}
