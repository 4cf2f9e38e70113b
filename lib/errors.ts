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
