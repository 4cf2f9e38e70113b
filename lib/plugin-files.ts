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
import { relative, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
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
      const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
      throw new MeritError(`${label}: ${error instanceof MeritError ? message : `failed to load (${message})`}`);
    } finally {
      setRegistrationOrigin(null);
    }
    LOADED.add(path);
    records.push({ path, sha256 });
  }
  return records;
}
