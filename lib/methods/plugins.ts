/**
 * Methods, user plugin files (DESIGN.md §1): `merit run|grid --plugin FILE.ts` imports a TypeScript
 * file (the CLI runs under tsx) that registers parts and methods (lib/methods/index.ts) before any
 * method name is resolved. The manifest records each file by its path relative to the working folder
 * and the sha256 of its content, so a run says which plugin code made it (and a resume with changed
 * plugin code is refused). Errors are one line naming the file: missing, throwing, or a name clash.
 * @module
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { relative, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { MeritError } from "../errors.ts";
import { sha256Hex } from "../hash.ts";

/** A loaded plugin file as the manifest records it. */
export interface PluginRecord {
  /** Path relative to the working folder, with `/`. */
  path: string;
  sha256: string;
}

/** Imports each plugin file once, in order; returns their records. */
export async function loadPlugins(files: readonly string[], cwd: string = process.cwd()): Promise<PluginRecord[]> {
  const records: PluginRecord[] = [];
  for (const file of files) {
    const absolute = resolve(cwd, file);
    const path = relative(cwd, absolute).split(sep).join("/");
    if (records.some((r) => r.path === path)) continue;
    if (!existsSync(absolute) || !statSync(absolute).isFile()) throw new MeritError(`--plugin ${file}: no such file; pass the path of a .ts file that registers methods`);
    const sha256 = sha256Hex(readFileSync(absolute));
    try {
      await import(pathToFileURL(absolute).href);
    } catch (error) {
      const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
      throw new MeritError(`--plugin ${file}: ${error instanceof MeritError ? message : `failed to load (${message})`}`);
    }
    records.push({ path, sha256 });
  }
  return records;
}
