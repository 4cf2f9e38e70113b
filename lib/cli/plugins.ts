/**
 * The command line, plugin files (README "Plugins"; DESIGN.md §1): every command that reads a config,
 * a dataset, a method, an executor or an inference engine loads plugins the same way — each
 * `--plugin FILE.ts` (repeatable or a comma list), the `plugins` list of each config it reads (taken
 * from the raw JSON before the config is parsed, so the config may name what they register), and,
 * for commands that read run directories, the plugins each run's manifest records. Also the one-line
 * hint added to an unknown-name error when a plugin file is nearby or named in a config.
 * @module
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../hash.ts";
import { isPluginLoaded, pluginPath, type PluginRecord, type PluginSource } from "../plugin-files.ts";
import { listFlag, type CommandIO } from "./command.ts";

/** The `--plugin` flag of every command that resolves registry names. */
export const PLUGIN_FLAG = { plugin: { type: "string", multiple: true } } as const;

/** The `--plugin` line of a usage text. */
export const PLUGIN_USAGE = `  --plugin FILE.ts  a TypeScript file outside lib/ that registers methods and their parts, datasets,
                    SQL executors or inference engines (through lib/plugin.ts), imported before any
                    name is resolved; repeat it or give a comma list. A config's \`plugins\` list is
                    loaded the same way; a run's manifest records the plugins it uses (path, sha256)`;

/** Where a command finds plugin files besides its `--plugin` flags. */
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
 * Loads the plugin files of one command invocation: `--plugin` values, then each config's `plugins`,
 * then each run's recorded plugins; returns their records (each file once). Nothing is imported
 * (not even the kit's registries) when there is no plugin.
 */
export async function loadCommandPlugins(flag: readonly string[] | undefined, from: PluginOrigins = {}, io?: CommandIO): Promise<PluginRecord[]> {
  const sources: PluginSource[] = (flag ?? []).flatMap((v) => listFlag(v, "plugin")).map((file) => ({ file }));
  for (const config of from.configs ?? []) {
    for (const file of configPluginFiles(config)) sources.push({ file, label: `${config}: plugins entry "${file}"` });
  }
  const seen = new Set(sources.map((s) => pluginPath(s.file)));
  for (const dir of from.runDirs ?? []) {
    for (const record of manifestPlugins(dir)) {
      if (seen.has(record.path)) continue;
      seen.add(record.path);
      if (!existsSync(record.path)) {
        io?.err(`warning: ${dir} was made with the plugin ${record.path}, which is not here; pass --plugin FILE.ts if its names are needed`);
        continue;
      }
      if (sha256Hex(readFileSync(record.path)) !== record.sha256) io?.err(`warning: the plugin ${record.path} has changed since ${dir} ran (sha256 ${record.sha256.slice(0, 12)}… recorded)`);
      sources.push({ file: record.path, label: `${join(dir, "manifest.json")}: plugin "${record.path}"` });
    }
  }
  if (sources.length === 0) return [];
  const { loadPlugins } = await import("../methods/index.ts");
  return loadPlugins(sources);
}

/** Folders searched for plugin files a user may have forgotten to load. */
const NEARBY = ["studies", "examples"];

/** `.ts` files (not tests or declarations) under `dir`, up to 3 levels deep, sorted. */
function tsFilesUnder(dir: string, depth = 3): string[] {
  if (depth === 0 || !existsSync(dir) || !statSync(dir).isDirectory()) return [];
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .flatMap((d) => {
      const path = `${dir}/${d.name}`;
      if (d.isDirectory()) return d.name === "node_modules" ? [] : tsFilesUnder(path, depth - 1);
      return d.name.endsWith(".ts") && !d.name.endsWith(".test.ts") && !d.name.endsWith(".d.ts") ? [path] : [];
    });
}

/** The value(s) of `--config` in argv (`--config F`, `--config=F`, comma lists). */
function configsOf(argv: readonly string[]): string[] {
  return argv.flatMap((arg, i) => (arg === "--config" && argv[i + 1] !== undefined ? [argv[i + 1]] : arg.startsWith("--config=") ? [arg.slice(9)] : [])).flatMap((v) => v.split(",")).filter((v) => v !== "");
}

const UNKNOWN_NAME = /unknown (?:method|dataset|executor|inference engine|pool planner|ranker|memory writer|episode step) "([^"]+)"|--(?:dataset|executor) must be one of [^"]*got "([^"]+)"/;

/**
 * `; load the plugin that registers it with --plugin FILE.ts (found: …)` for an unknown-name error,
 * when plugin files not loaded yet are nearby (studies/, examples/) or named in a `--config`'s
 * `plugins`; those mentioning the name come first (alone when any does). "" otherwise.
 */
export function pluginHint(message: string, argv: readonly string[], cwd: string = process.cwd()): string {
  const match = UNKNOWN_NAME.exec(message);
  if (!match) return "";
  const name = match[1] ?? match[2];
  const named = configsOf(argv).flatMap(configPluginFiles);
  const candidates = [...new Set([...named, ...NEARBY.flatMap((dir) => tsFilesUnder(join(cwd, dir)).map((f) => pluginPath(f, cwd)))])].filter((f) => !isPluginLoaded(pluginPath(f, cwd)));
  if (candidates.length === 0) return "";
  const mentions = candidates.filter((f) => {
    try {
      return new RegExp(`["'\`]${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}["'\`]`).test(readFileSync(join(cwd, f), "utf8"));
    } catch {
      return false;
    }
  });
  const shown = mentions.length > 0 ? mentions : candidates;
  return `; load the plugin that registers it with --plugin FILE.ts (found: ${shown.slice(0, 4).join(", ")}${shown.length > 4 ? `, +${shown.length - 4} more` : ""})`;
}
