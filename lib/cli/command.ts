/**
 * The shape of one `merit` sub-command: a name, a one-line summary, usage text and a `run` that
 * receives parsed-at-will argv and an IO sink. Only lib/cli* files touch the console (STYLE.md §3.6).
 * @module
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { UsageError } from "../errors.ts";

/** Where a command writes: results on `out` (stdout), progress and warnings on `err` (stderr). */
export interface CommandIO {
  out(line: string): void;
  err(line: string): void;
}

export interface Command {
  /** The sub-command word, e.g. `eval`. */
  name: string;
  /** One line for `merit help`. */
  summary: string;
  /** Full usage text printed on `--help` or a usage error. */
  usage: string;
  /** Runs the command; resolves to the process exit code. */
  run(argv: string[], io: CommandIO): Promise<number>;
}

type Options = NonNullable<ParseArgsConfig["options"]>;

/** Strict flag parsing: unknown flags and stray positionals become a UsageError naming them. */
export function parseFlags<T extends Options>(argv: string[], options: T, usage: string, allowPositionals = false) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals });
  } catch (error) {
    const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
    throw new UsageError(`${message}\n${usage}`);
  }
}

/** A required string flag, or a UsageError that says which flag is missing. */
export function required(value: string | undefined, flag: string, usage: string): string {
  if (value === undefined || value === "") throw new UsageError(`missing required flag --${flag}\n${usage}`);
  return value;
}

/** A positive number flag, or a UsageError naming the bad value. */
export function numberFlag(value: string | undefined, flag: string, fallback: number, opts: { integer?: boolean; min?: number } = {}): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || (opts.integer && !Number.isInteger(n)) || n < (opts.min ?? 0)) {
    throw new UsageError(`--${flag} must be ${opts.integer ? "an integer" : "a number"} ≥ ${opts.min ?? 0}, got "${value}"`);
  }
  return n;
}

/** `--allow-single-db` (merit run, grid, initial): score on the single databases when the config's test-suite set is absent. */
export const ALLOW_SINGLE_DB = { "allow-single-db": { type: "boolean" } } as const;
export const ALLOW_SINGLE_DB_USAGE = `  --allow-single-db  the config's Spider test-suite databases are absent: score on the single
                     databases instead (CI, smoke runs; recorded in the manifest, not the paper's protocol)`;
