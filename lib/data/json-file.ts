/**
 * Data loading (METHOD.md §1): reads one JSON input file (examples or schemas) and turns a syntax error
 * into an InputFileError naming the file, the line and column, and the fix; and parses JSON Lines
 * text (a run's trajectories and logs, annotation files), naming the file and line of a bad one.
 * @module
 */
import { readFileSync } from "node:fs";
import type { z } from "zod";
import { sha256Hex } from "../hash.ts";
import { InputFileError } from "../errors.ts";

/** A parsed JSON file plus the SHA-256 of its exact bytes (the dataset checksum hashes bytes, METHOD.md §1.4). */
export interface JsonFile {
  value: unknown;
  sha256: string;
}

/** Reads and parses `file`; a missing file or malformed JSON throws an InputFileError carrying the fix. */
export function readJsonFile(file: string, fix: string): JsonFile {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw new InputFileError(file, `cannot read (${errorCode(error)})`, fix, error);
  }
  const text = bytes.toString("utf8");
  try {
    return { value: JSON.parse(text), sha256: sha256Hex(bytes) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new InputFileError(file, `malformed JSON${where(text, message)}: ${message}`, "re-download or repair the file (it must be one JSON document)", error);
  }
}

/**
 * The values of the non-blank lines of JSON Lines `text`, each checked by `schema` when one is given.
 * A line that is not JSON fails with `file`, its 1-based number and `fix.json`; a line the schema
 * refuses, with the path of its first issue ("(record)" for the line itself) and `fix.schema`.
 */
export function parseJsonLines<T>(text: string, file: string, fix: { json: string; schema?: string }, schema?: z.ZodType<T>): T[] {
  return text.split("\n").flatMap((line, i) => {
    if (line.trim() === "") return [];
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (cause) {
      throw new InputFileError(file, `line ${i + 1} is not JSON`, fix.json, cause);
    }
    if (schema === undefined) return [json as T];
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      throw new InputFileError(file, `line ${i + 1}: ${first.path.join(".") || "(record)"} ${first.message}`, fix.schema ?? fix.json);
    }
    return [parsed.data];
  });
}

/** " at line L, column C" when V8's message carries a character position, else "". */
function where(text: string, message: string): string {
  const match = /at position (\d+)/.exec(message);
  const position = match ? Number(match[1]) : message.includes("Unexpected end") ? text.length : undefined;
  if (position === undefined) return "";
  const before = text.slice(0, position);
  const line = before.split("\n").length;
  const column = position - before.lastIndexOf("\n");
  return ` at line ${line}, column ${column}`;
}

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException)?.code ?? (error instanceof Error ? error.message : String(error));
}
