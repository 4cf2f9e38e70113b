/**
 * Foundation: importing user plugin files (DESIGN.md §1 "Plugins"). A plugin is a TypeScript file
 * outside lib/ (imported through tsx; lib/compiled.mjs in the compiled CLI) that registers methods
 * and their parts, datasets, SQL executors or inference engines through lib/plugin.ts. Each file is
 * imported once, recorded by its path relative to the working folder and the sha256 of its content,
 * and every registry entry made while it is imported is attributed to it (lib/registry.ts
 * `registrationOrigin`), so a run's manifest can list only the plugins whose registrations it uses.
 * Import the kit's own registries before calling this (lib/methods/plugins.ts `loadPlugins` does),
 * or their entries would be attributed to the first plugin that imports them. Errors are one line
 * naming the file.
 * @module
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { allowTypeScriptImports } from "./compiled.mjs";
import { MeritError } from "./errors.ts";
import { sha256Hex } from "./hash.ts";
import { setRegistrationOrigin } from "./registry.ts";

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

/** esbuild's (tsx's) summary line of a file it could not compile: `Transform failed with 2 errors:`. */
const TRANSFORM_FAILED = /^Transform failed with (\d+) errors?:?$/;
/** One esbuild error line: `FILE:LINE:COLUMN: ERROR: TEXT` (esbuild counts columns from 0). */
const ESBUILD_ERROR = /^(.+?):(\d+):(\d+): ERROR: (.*)$/;
/** The first line of Node's stack for an error at link time (an import the module does not provide): `FILE:LINE`. */
const LINK_PLACE = /^(\/.*|[A-Za-z]:\\.*|file:\/\/.*):(\d+)$/;

/**
 * Why a TypeScript file (a plugin, a study) could not be imported, as one line with the place of the
 * first error: a syntax or type-stripping error that tsx's esbuild reports as `Transform failed with N
 * errors:` and one `FILE:LINE:COLUMN: ERROR: TEXT` line each becomes `FILE:LINE:COLUMN: TEXT (+N-1 more)`
 * (the column counted from 1, as editors and Node's stack traces count it);
 * a link error (`does not provide an export named …`) gets its `FILE:LINE`; anything else is the
 * message's first line. FILE is relative to `cwd` when it lies under it.
 */
export function importErrorText(error: unknown, cwd: string = process.cwd()): string {
  const message = error instanceof Error ? error.message : String(error);
  const lines = message.split("\n");
  const place = (file: string) => {
    const path = file.startsWith("file://") ? fileURLToPath(file) : file;
    const rel = relative(cwd, path);
    return rel.startsWith("..") || isAbsolute(rel) ? path : rel.split(sep).join("/");
  };
  const failed = TRANSFORM_FAILED.exec(lines[0].trim());
  if (failed) {
    const first = lines.slice(1).map((l) => ESBUILD_ERROR.exec(l.trim())).find((m) => m !== null);
    const more = Number(failed[1]) - 1;
    if (first) return `${place(first[1])}:${first[2]}:${Number(first[3]) + 1}: ${first[4]}${more > 0 ? ` (+${more} more)` : ""}`;
    const text = lines.slice(1).find((l) => l.trim() !== "");
    if (text !== undefined) return text.trim();
  }
  const link = error instanceof SyntaxError && typeof error.stack === "string" ? LINK_PLACE.exec(error.stack.split("\n")[0]) : null;
  if (link) return `${place(link[1])}:${link[2]}: ${lines[0]}`;
  return lines[0];
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
    await allowTypeScriptImports(); // the compiled CLI registers tsx only now, for the first plugin file
    setRegistrationOrigin(path);
    try {
      await import(pathToFileURL(absolute).href);
    } catch (error) {
      throw new MeritError(`${label}: ${error instanceof MeritError ? error.message.split("\n")[0] : `failed to load (${importErrorText(error, cwd)})`}`);
    } finally {
      setRegistrationOrigin(null);
    }
    LOADED.add(path);
    records.push({ path, sha256 });
  }
  return records;
}
