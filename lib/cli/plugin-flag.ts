/**
 * The command line's `--plugin` flag (README "Plugins"; DESIGN.md §1): every command that reads a
 * config, a dataset, a method, an executor or an inference engine loads plugins the same way — each
 * `--plugin FILE.ts` (repeatable or a comma list), then lib/experiment/plugin-sources.ts adds each
 * config's `plugins` and, for commands that read run directories, each run's recorded plugins. Also
 * the one-line hint added to an unknown-name error when a plugin file is nearby or named in a config.
 * @module
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { configPluginFiles, loadPluginSources, type PluginOrigins } from "../experiment/plugin-sources.ts";
import { isPluginLoaded, pluginPath, type PluginRecord } from "../plugin-import.ts";
import { listFlag, type CommandIO } from "./command.ts";

/** The `--plugin` flag of every command that resolves registry names. */
export const PLUGIN_FLAG = { plugin: { type: "string", multiple: true } } as const;

/** The `--plugin` line of a usage text. */
export const PLUGIN_USAGE = `  --plugin FILE.ts  a TypeScript file outside lib/ that registers methods (hook sets), rankers, datasets,
                    SQL executors or inference engines (through lib/plugin.ts), imported before any
                    name is resolved; repeat it or give a comma list. A config's \`plugins\` list is
                    loaded the same way; a run's manifest records the plugins it uses (path, sha256)`;

/**
 * Loads the plugin files of one command invocation (lib/experiment/plugin-sources.ts): `--plugin`
 * values, then each config's `plugins`, then each run's recorded plugins; returns their records.
 */
export async function loadCommandPlugins(flag: readonly string[] | undefined, from: PluginOrigins = {}, io?: CommandIO): Promise<PluginRecord[]> {
  return loadPluginSources(pluginFlagFiles(flag), from, io ? (line) => io.err(line) : undefined);
}

/** The files of the repeatable, comma-separated `--plugin` flag. */
export function pluginFlagFiles(flag: readonly string[] | undefined): string[] {
  return (flag ?? []).flatMap((v) => listFlag(v, "plugin"));
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
