/**
 * The shape of one `merit` sub-command: a name, a one-line summary, usage text and a `run` that
 * receives parsed-at-will argv and an IO sink. Only lib/cli* files touch the console (STYLE.md §3.6).
 * Every usage mistake is one line naming the flag and the fix, then a pointer to `merit X --help`
 * (STYLE.md §2.10); the full usage text is printed only on `--help`.
 * @module
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { nearestName, UsageError } from "../errors.ts";

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
  /** Full usage text printed on `--help` (and by `merit help <command>`). */
  usage: string;
  /** Runs the command; resolves to the process exit code. */
  run(argv: string[], io: CommandIO): Promise<number>;
}

type Options = NonNullable<ParseArgsConfig["options"]>;

/** `; see \`merit X --help\`` for the command whose usage text this is (its first line names it). */
export function seeHelp(usage: string): string {
  const command = /^usage: (merit(?: [a-z][a-z-]*)?)/.exec(usage)?.[1] ?? "merit";
  return `; see \`${command} --help\``;
}

/** A negative number after a string flag (`--seed -1`) is that flag's value, not an unknown option. */
function joinNegativeValues(argv: string[], options: Options): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const flag = /^--([^=]+)$/.exec(argv[i])?.[1];
    const next = argv[i + 1];
    if (flag !== undefined && options[flag]?.type === "string" && next !== undefined && /^-(\d|\.\d)/.test(next)) {
      out.push(`--${flag}=${next}`);
      i++;
    } else {
      out.push(argv[i]);
    }
  }
  return out;
}

/** Strict flag parsing: unknown flags and stray positionals become a one-line UsageError naming them. */
export function parseFlags<T extends Options>(argv: string[], options: T, usage: string, allowPositionals = false) {
  try {
    return parseArgs({ args: joinNegativeValues(argv, options), options, strict: true, allowPositionals });
  } catch (error) {
    const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
    throw new UsageError(`${message.replace(/[.\s]+$/, "")}${seeHelp(usage)}`);
  }
}

/** A required string flag, or a one-line UsageError that says which flag is missing. */
export function required(value: string | undefined, flag: string, usage: string): string {
  if (value === undefined || value === "") throw new UsageError(`missing required flag --${flag}${seeHelp(usage)}`);
  return value;
}

export interface NumberRule {
  /** Whole numbers only (written as digits: `1e3` and `2.0` are refused). */
  integer?: boolean;
  /** Smallest allowed value (default 0). */
  min?: number;
  /** Largest allowed value (default: none). */
  max?: number;
  /** Why `max` is the limit, shown in the message (e.g. "4 per CPU core"). */
  maxReason?: string;
  /** Refuse `min` itself (for a range like 0 < level < 1). */
  exclusiveMin?: boolean;
  /** Refuse `max` itself. */
  exclusiveMax?: boolean;
}

const INTEGER = /^[+-]?\d+$/;
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

/** What a flag accepts, in words: `an integer ≥ 1`, `a number in 0.001..2147483`, `a number in (0, 1)`. */
function describeRule(rule: NumberRule): string {
  const kind = rule.integer ? "an integer" : "a number";
  const min = rule.min ?? 0;
  if (rule.max === undefined) return `${kind} ${rule.exclusiveMin ? ">" : "≥"} ${min}`;
  const reason = rule.maxReason ? ` (${rule.maxReason})` : "";
  if (rule.exclusiveMin || rule.exclusiveMax) return `${kind} in ${rule.exclusiveMin ? "(" : "["}${min}, ${rule.max}${rule.exclusiveMax ? ")" : "]"}${reason}`;
  return `${kind} in ${min}..${rule.max}${reason}`;
}

/**
 * A numeric flag checked against its range, or a one-line UsageError naming the flag, the accepted
 * range and the value given. Decimal notation only, so `--seed 1e3` is refused rather than read as 1000.
 */
export function numberFlag(value: string | undefined, flag: string, fallback: number, rule: NumberRule = {}): number {
  if (value === undefined) return fallback;
  const text = value.trim();
  const n = Number(text);
  const min = rule.min ?? 0;
  const ok =
    (rule.integer ? INTEGER.test(text) && Number.isSafeInteger(n) : DECIMAL.test(text) && Number.isFinite(n)) &&
    (rule.exclusiveMin ? n > min : n >= min) &&
    (rule.max === undefined || (rule.exclusiveMax ? n < rule.max : n <= rule.max));
  if (!ok) throw new UsageError(`--${flag} must be ${describeRule(rule)}, got "${value}"`);
  return n;
}

/** `--allow-single-db` (merit run, grid, initial): score on the single databases when the config's test-suite set is absent. */
export const ALLOW_SINGLE_DB = { "allow-single-db": { type: "boolean" } } as const;
export const ALLOW_SINGLE_DB_USAGE = `  --allow-single-db  the config's Spider test-suite databases are absent: score on the single
                     databases instead (CI, smoke runs; recorded in the manifest, not the paper's protocol)`;

/** `value` of `--flag` when it is one of `known`, else a one-line UsageError listing them (and the nearest). */
export function oneOfFlag<T extends string>(value: string, flag: string, known: readonly T[]): T {
  if ((known as readonly string[]).includes(value)) return value as T;
  const near = nearestName(value, known);
  throw new UsageError(`--${flag} must be one of ${known.join(", ")}, got "${value}"${near ? ` (did you mean "${near}"?)` : ""}`);
}

/** A comma-separated list flag with no empty and no repeated entry (`--seeds 0,0` is refused up front). */
export function listFlag(value: string, flag: string): string[] {
  const items = value.split(",").map((s) => s.trim());
  if (items.some((s) => s === "")) throw new UsageError(`--${flag} has an empty entry in "${value}"; separate names with single commas`);
  const seen = new Set<string>();
  for (const item of items) {
    if (seen.has(item)) throw new UsageError(`--${flag} names "${item}" twice; give each once`);
    seen.add(item);
  }
  return items;
}
