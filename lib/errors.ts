/**
 * Typed errors shared by every stage: each carries the facts (file, expected, actual) and the fix,
 * and the CLI prints its message as one line and exits with `exitCode` (STYLE.md §2.10).
 * @module
 */
import { levenshtein } from "./levenshtein.ts";

/** Base class: a problem the user can fix. The message is one line: what, where, and what to do. */
export class MeritError extends Error {
  /** Process exit code the CLI uses for this error (2 = bad input or usage). */
  readonly exitCode: number;
  constructor(message: string, opts: { exitCode?: number; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = "MeritError";
    this.exitCode = opts.exitCode ?? 2;
  }
}

/** A command-line usage mistake (unknown flag, missing value). */
export class UsageError extends MeritError {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** An input file that is missing, unreadable or malformed. */
export class InputFileError extends MeritError {
  readonly file: string;
  constructor(file: string, problem: string, fix: string, cause?: unknown) {
    super(`${file}: ${problem}; ${fix}`, { cause });
    this.name = "InputFileError";
    this.file = file;
  }
}

/** The nearest of `known` to `name` by edit distance, for "did you mean" messages. */
export function nearestName(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = levenshtein(name, candidate);
    if (d < bestDistance) {
      bestDistance = d;
      best = candidate;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined;
}

/** Fixes for operating-system errors a user can cause or fix (full disk, a path that is a file, …). */
const SYSTEM_FIXES: Record<string, [problem: string, fix: string]> = {
  ENOSPC: ["no space left on device", "free disk space (or write elsewhere) and run the command again; a killed or failed run continues with --resume"],
  EDQUOT: ["disk quota exceeded", "free space within your quota and run the command again; a run continues with --resume"],
  ENOTDIR: ["a part of this path is a file, not a folder", "choose a path whose folders are folders"],
  EISDIR: ["is a folder where a file was expected", "pass a file path"],
  EEXIST: ["already exists", "choose another path or remove it"],
  EACCES: ["permission denied", "choose a writable location or fix the permissions"],
  EPERM: ["operation not permitted", "choose a writable location or fix the permissions"],
  EROFS: ["read-only file system", "choose a writable location"],
  ENOENT: ["no such file or folder", "check the path"],
};

/**
 * The one-line MeritError for an error the user can fix that arrived untyped from node:fs or
 * better-sqlite3 (a full disk above all), or null for a real internal error (STYLE.md §2.10).
 */
export function userFixableError(error: unknown): MeritError | null {
  if (error instanceof MeritError) return error;
  const e = error as { code?: unknown; path?: unknown; dest?: unknown; message?: unknown } | null;
  if (!e || typeof e.code !== "string") return null;
  const system = SYSTEM_FIXES[e.code];
  if (system && typeof e.path === "string") return new InputFileError(e.path, system[0], system[1], error);
  if (e.code === "SQLITE_FULL") return new MeritError(`a SQLite database or the disk is full (${String(e.message)}); free disk space and run the command again (a run continues with --resume)`, { cause: error });
  if (e.code === "SQLITE_NOTADB" || e.code === "SQLITE_CORRUPT") return new MeritError(`a SQLite file is damaged or not a database (${String(e.message)}); restore or re-download the file named in the config`, { cause: error });
  return null;
}
