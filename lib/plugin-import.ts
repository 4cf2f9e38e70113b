/**
 * Foundation: importing user plugin files (DESIGN.md §1 "Plugins"). A plugin is a TypeScript file
 * outside lib/ (imported as it is: Node strips its types, as it does lib/'s) that registers methods
 * and their parts, datasets, SQL executors or inference engines through lib/plugin.ts. Each file is
 * imported once, recorded by its path relative to the working folder and the sha256 of its content,
 * and every registry entry made while it is imported is attributed to it (lib/registry.ts
 * `registrationOrigin`), so a run's manifest can list only the plugins whose registrations it uses.
 * Import the kit's own registries before calling this (lib/methods/plugin-use.ts `loadPlugins` does),
 * or their entries would be attributed to the first plugin that imports them. Errors are one line
 * naming the file.
 * @module
 */
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { MeritError } from "./errors.ts";
import { sha256Hex } from "./hash.ts";
import { adoptRegistrations, setRegistrationOrigin } from "./registry.ts";

/** A loaded plugin file as the manifest records it. */
export interface PluginRecord {
  /** Path relative to the working folder, with `/`. */
  path: string;
  sha256: string;
}

/** A plugin file to load and the words that name it in an error (`--plugin FILE`, `configs/x.json: plugins entry "FILE"`). */
export interface PluginSource {
  file: string;
  label?: string;
}

/** Paths (relative to the working folder) of every plugin file imported by this process. */
const LOADED = new Set<string>();

/** The recorded path of a plugin file: relative to `cwd`, with `/`. */
export function pluginPath(file: string, cwd: string = process.cwd()): string {
  return relative(cwd, resolve(cwd, file)).split(sep).join("/");
}

/** true iff the plugin file at `path` (as pluginPath gives it) was imported by this process. */
export function isPluginLoaded(path: string): boolean {
  return LOADED.has(path);
}

/** The plugin files this process imported (recorded paths), in import order. */
export function loadedPluginPaths(): string[] {
  return [...LOADED];
}

/** The first line of Node's stack for an error at parse or link time: `FILE:LINE` (source lines and a `^^^` mark under the place follow). */
const ERROR_PLACE = /^(\/.*|[A-Za-z]:\\.*|file:\/\/.*):(\d+)$/;
/** The mark under the place of the error in Node's stack: spaces, then `^`s. */
const CARET = /^( *)\^+ *$/;

/** The first `^^^` mark among the source lines a stack shows before its `…Error: text` line. */
function caretBefore(lines: string[]): RegExpExecArray | null {
  for (const line of lines) {
    if (/^[A-Za-z]*Error\b/.test(line)) break;
    const mark = CARET.exec(line);
    if (mark !== null) return mark;
  }
  return null;
}

/**
 * Why a TypeScript file (a plugin, a study) could not be imported, as one line with the place of the
 * error: a syntax error, or syntax Node's type stripping cannot erase (`enum`, `namespace`, a
 * constructor parameter property: ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX), becomes `FILE:LINE:COLUMN: TEXT`
 * (the column counted from 1, as editors count it, from the `^` Node's stack puts under the place);
 * a link error (`does not provide an export named …`) gets its `FILE:LINE`; anything else is the
 * message's first line. FILE is relative to `cwd` when it lies under it.
 */
export function importErrorText(error: unknown, cwd: string = process.cwd()): string {
  const message = error instanceof Error ? error.message : String(error);
  const first = message.split("\n")[0];
  const place = (file: string) => {
    const path = file.startsWith("file://") ? fileURLToPath(file) : file;
    const rel = relative(cwd, path);
    return rel.startsWith("..") || isAbsolute(rel) ? path : rel.split(sep).join("/");
  };
  const stack = error instanceof SyntaxError && typeof error.stack === "string" ? error.stack.split("\n") : [];
  const at = stack.length > 0 ? ERROR_PLACE.exec(stack[0]) : null;
  if (at === null) return first;
  const code = (error as NodeJS.ErrnoException).code;
  const stripping = code === "ERR_INVALID_TYPESCRIPT_SYNTAX" || code === "ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX";
  const caret = stripping ? caretBefore(stack.slice(1)) : null;
  return `${place(at[1])}:${at[2]}${caret ? `:${caret[1].length + 1}` : ""}: ${first}`;
}

/** Imports each plugin file once, in order; returns their records (a file named twice is recorded once). */
export async function importPluginFiles(sources: readonly (string | PluginSource)[], cwd: string = process.cwd()): Promise<PluginRecord[]> {
  const records: PluginRecord[] = [];
  for (const source of sources) {
    const { file, label = `--plugin ${typeof source === "string" ? source : source.file}` } = typeof source === "string" ? { file: source } : source;
    const absolute = resolve(cwd, file);
    const path = pluginPath(file, cwd);
    if (records.some((r) => r.path === path)) continue;
    if (!existsSync(absolute) || !statSync(absolute).isFile()) throw new MeritError(`${label}: no such file; pass the path of a .ts file that registers methods`);
    const sha256 = sha256Hex(readFileSync(absolute));
    setRegistrationOrigin(path);
    try {
      await import(pathToFileURL(absolute).href);
    } catch (error) {
      throw new MeritError(`${label}: ${error instanceof MeritError ? error.message.split("\n")[0] : `failed to load (${importErrorText(error, cwd)})`}`);
    } finally {
      setRegistrationOrigin(null);
    }
    // a study file or a test that imported this file first ran its registrations outside the import: they are still its
    adoptRegistrations(realpathSync(absolute), path); // module URLs are real paths (a symlinked folder resolves)
    LOADED.add(path);
    records.push({ path, sha256 });
  }
  return records;
}
