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

/** `text`, the contents of `file`, parsed as JSON; else an InputFileError "`problem` (the parser's message)" carrying `fix`. */
export function parseJsonText(text: string, file: string, problem: string, fix: string): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new InputFileError(file, `${problem} (${(cause as Error).message})`, fix, cause);
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

/** How a stopped command continues: the flag differs between commands (`merit study run` takes none). */
const CONTINUES = "a killed or failed `merit run` or `merit grid` continues with --resume, `merit study run` by itself";

/** Fixes for operating-system errors a user can cause or fix (full disk, a path that is a file, …). */
const SYSTEM_FIXES: Record<string, [problem: string, fix: string]> = {
  ENOSPC: ["no space left on device", `free disk space (or write elsewhere) and run the command again; ${CONTINUES}`],
  EDQUOT: ["disk quota exceeded", `free space within your quota and run the command again; ${CONTINUES}`],
  ENOTDIR: ["a part of this path is a file, not a folder", "choose a path whose folders are folders"],
  EISDIR: ["is a folder where a file was expected", "pass a file path"],
  EEXIST: ["already exists", "choose another path or remove it"],
  EACCES: ["permission denied", "choose a writable location or fix the permissions"],
  EPERM: ["operation not permitted", "choose a writable location or fix the permissions"],
  EROFS: ["read-only file system", "choose a writable location"],
  ENOENT: ["no such file or folder", "check the path"],
};

/** npm packages with a native add-on (a built `.node` file that an interrupted `npm ci` can leave out). */
const NATIVE_PACKAGES = ["better-sqlite3", "hnswlib-node", "node-llama-cpp"];

/** How a native add-on that cannot be loaded shows itself (the `bindings` package, dlopen, an ABI mismatch). */
const ADDON_FAILURE = /Could not locate the bindings file|ERR_DLOPEN_FAILED|NODE_MODULE_VERSION|invalid ELF header|cannot open shared object file|NoBinaryFoundError/;

/**
 * The one-line MeritError for an npm package that cannot be loaded — a native add-on that is missing
 * or built for another Node (an interrupted `npm ci`), or a package that is not installed — naming the
 * package and `npm ci`; null for any other error. A missing file of the kit itself is not one.
 */
export function missingPackageError(error: unknown): MeritError | null {
  // The innermost cause first: a wrapper (`cannot open the LLM call cache (…)`) repeats its text.
  const chain: unknown[] = [];
  for (let e = error; e && typeof e === "object" && chain.length < 8; e = (e as { cause?: unknown }).cause) chain.push(e);
  for (const e of chain.reverse()) {
    const found = packageProblem(e, error);
    if (found) return found;
  }
  return null;
}

function packageProblem(error: unknown, outer: unknown): MeritError | null {
  const e = error as { message?: unknown; stack?: unknown; code?: unknown; constructor?: { name?: unknown } } | null;
  if (!e || typeof e !== "object") return null;
  const message = typeof e.message === "string" ? e.message : "";
  const text = `${e.constructor?.name ?? ""}\n${message}\n${typeof e.stack === "string" ? e.stack : ""}`;
  const first = message.split("\n")[0].trim().replace(/\.? Tried:$/, "");
  if (ADDON_FAILURE.test(text) || e.code === "ERR_DLOPEN_FAILED") {
    const pkg = NATIVE_PACKAGES.find((p) => text.includes(`node_modules/${p}/`) || text.includes(`node_modules\\${p}\\`) || (p === "node-llama-cpp" && text.includes("NoBinaryFoundError")));
    return new MeritError(`the native add-on of the npm package ${pkg ?? "(see the cause)"} cannot be loaded (${first}); run \`npm ci\` in the merit-kit folder (an interrupted install leaves it incomplete)`, { cause: outer });
  }
  if (e.code === "ERR_MODULE_NOT_FOUND" || e.code === "MODULE_NOT_FOUND") {
    const name = /Cannot find (?:package|module) '([^']+)'/.exec(message)?.[1];
    if (name === undefined || name.startsWith(".") || name.startsWith("/") || /^[A-Za-z]:[\\/]|^file:/.test(name)) return null;
    const pkg = name.startsWith("@") ? name.split("/").slice(0, 2).join("/") : name.split("/")[0];
    return new MeritError(`the npm package ${pkg} is not installed (${first}); run \`npm ci\` in the merit-kit folder`, { cause: outer });
  }
  return null;
}

/**
 * The one-line MeritError for an error the user can fix that arrived untyped from node:fs or
 * better-sqlite3 (a full disk above all), or from loading an npm package (missingPackageError), or
 * null for a real internal error (STYLE.md §2.10).
 */
export function userFixableError(error: unknown): MeritError | null {
  // A MeritError is one line already, unless it wraps (and repeats) a package that failed to load.
  if (error instanceof MeritError && !error.message.includes("\n")) return error;
  const missing = missingPackageError(error);
  if (missing) return missing;
  if (error instanceof MeritError) return error;
  const e = error as { code?: unknown; path?: unknown; dest?: unknown; message?: unknown } | null;
  if (!e || typeof e.code !== "string") return null;
  const system = SYSTEM_FIXES[e.code];
  // a copy or rename that ran out of space names its target (e.dest), the file on the full disk, not its source
  const full = e.code === "ENOSPC" || e.code === "EDQUOT";
  if (system && full && typeof e.dest === "string") return new InputFileError(e.dest, system[0], system[1], error);
  if (system && typeof e.path === "string") return new InputFileError(e.path, system[0], system[1], error);
  if (e.code === "SQLITE_FULL") return new MeritError(`a SQLite database or the disk is full (${String(e.message)}); free disk space and run the command again (${CONTINUES})`, { cause: error });
  if (e.code === "SQLITE_NOTADB" || e.code === "SQLITE_CORRUPT") return new MeritError(`a SQLite file is damaged or not a database (${String(e.message)}); restore or re-download the file named in the config`, { cause: error });
  return null;
}
