/**
 * Experiment, where a run's plugin files come from (README "Plugins"; DESIGN.md §1): the files a
 * caller names (`--plugin FILE.ts`), the `plugins` list of each config it reads (taken from the raw
 * JSON before the config is parsed, so the config may name what they register), and, for work that
 * reads run directories, the plugins each run's manifest records. Every command and library entry
 * point (buildReport, runDemo, runStudy) loads plugins through `loadPluginSources`.
 * @module
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../hash.ts";
import { pluginPath, type PluginRecord, type PluginSource } from "../plugin-import.ts";

/** Where plugin files are found besides the files named. */
export interface PluginOrigins {
  /** Config files whose `plugins` lists are loaded (before the configs are parsed). */
  configs?: readonly string[];
  /** Run directories whose manifests' `plugins` are loaded (a missing file is a warning). */
  runDirs?: readonly string[];
}

/** The `plugins` entries of a config file's raw JSON; [] when it cannot be read (loading the config then says why). */
export function configPluginFiles(configFile: string): string[] {
  try {
    const value = JSON.parse(readFileSync(configFile, "utf8")) as { plugins?: unknown };
    return Array.isArray(value?.plugins) ? value.plugins.filter((p): p is string => typeof p === "string" && p !== "") : [];
  } catch {
    return [];
  }
}

/** The `plugins` a run directory's manifest records; [] when it records none or cannot be read. */
function manifestPlugins(runDir: string): PluginRecord[] {
  try {
    const value = JSON.parse(readFileSync(join(runDir, "manifest.json"), "utf8")) as { plugins?: unknown };
    return Array.isArray(value?.plugins) ? value.plugins.filter((p): p is PluginRecord => typeof p?.path === "string" && typeof p?.sha256 === "string") : [];
  } catch {
    return [];
  }
}

/**
 * Loads plugin files: `files`, then each config's `plugins`, then each run's recorded plugins
 * (warnings on `log`); returns their records (each file once). Nothing is imported (not even the
 * kit's registries) when there is no plugin.
 */
export async function loadPluginSources(files: readonly string[], from: PluginOrigins = {}, log?: (line: string) => void): Promise<PluginRecord[]> {
  const sources: PluginSource[] = files.map((file) => ({ file }));
  for (const config of from.configs ?? []) {
    for (const file of configPluginFiles(config)) sources.push({ file, label: `${config}: plugins entry "${file}"` });
  }
  const seen = new Set(sources.map((s) => pluginPath(s.file)));
  for (const dir of from.runDirs ?? []) {
    for (const record of manifestPlugins(dir)) {
      if (seen.has(record.path)) continue;
      seen.add(record.path);
      if (!existsSync(record.path)) {
        log?.(`warning: ${dir} was made with the plugin ${record.path}, which is not here; pass --plugin FILE.ts if its names are needed`);
        continue;
      }
      if (sha256Hex(readFileSync(record.path)) !== record.sha256) log?.(`warning: the plugin ${record.path} has changed since ${dir} ran (sha256 ${record.sha256.slice(0, 12)}… recorded)`);
      sources.push({ file: record.path, label: `${join(dir, "manifest.json")}: plugin "${record.path}"` });
    }
  }
  if (sources.length === 0) return [];
  const { loadPlugins } = await import("../methods/index.ts");
  return loadPlugins(sources);
}
