/**
 * Methods, which plugin a run uses (DESIGN.md §1 "Plugins"): `--plugin FILE.ts` (every command) or a
 * config's `plugins` list imports a TypeScript file (natively, lib/plugin-import.ts) that registers
 * methods and rankers, datasets, SQL executors or inference engines (lib/plugin.ts) before any name is
 * resolved.
 * The kit's own registries are filled first, so every entry made while a plugin is imported is that
 * plugin's (lib/plugin-import.ts). A run's manifest records, by path and sha256, only the plugins that
 * registered something the run uses (`pluginsUsedBy`): its method and the ranker of its memory, its
 * dataset, its executor, its inference engine — so editing a plugin refuses resuming the runs that
 * use it and no other. Errors are one line naming the file: missing, throwing, or a name clash.
 * @module
 */
import { DATASETS } from "../data/datasets/index.ts";
import { ENGINES } from "../llm/engines/index.ts";
import { EXECUTORS } from "../oracle/executors.ts";
import { FEEDBACK } from "../methods/feedback.ts";
import "./paper.ts";
import { importPluginFiles, type PluginRecord, type PluginSource } from "../plugin-import.ts";
import { registrationOrigin } from "../registry.ts";
import { isEntryMemory, RANKERS } from "./merit-memory.ts";
import { getMethod, methodDefinition } from "./registry.ts";

export type { PluginRecord, PluginSource } from "../plugin-import.ts";

/** Imports each plugin file once, in order, after the kit's own registries; returns their records. */
export async function loadPlugins(files: readonly (string | PluginSource)[], cwd: string = process.cwd()): Promise<PluginRecord[]> {
  return importPluginFiles(files, cwd);
}

/** What a run uses from the registries: the names a plugin could have registered. */
export interface RegistryUse {
  method: string;
  dataset: string;
  executor: string;
  /** The inference engine (`model.engine`) when the run talks to a server; null for a local GGUF. */
  engine: string | null;
  /** The config's feedback regime (lib/methods/feedback.ts); absent = the oracle's. */
  feedback?: string;
}

/** The `kind`/`name` pairs of the registries a run uses (the method, its alias target and ranker, the dataset, executor, engine). */
export function registryUses(use: RegistryUse): [kind: string, name: string][] {
  const method = getMethod(use.method);
  const pairs: [string, string][] = [["method", use.method], ["method", method.canonicalName], [DATASETS.kind, use.dataset], [EXECUTORS.kind, use.executor]];
  const armOf = methodDefinition(use.method).armOf;
  if (armOf !== undefined) pairs.push(["method", armOf]); // a study arm: the plugin of the method it runs
  // MERIT's memory with a plugin's ranker (examples/mmr.ts): that plugin is used too
  if (isEntryMemory(method.hooks.memory)) pairs.push([RANKERS.kind, String(method.hooks.memory.args.ranker)]);
  if (use.engine !== null) pairs.push([ENGINES.kind, use.engine]);
  if (use.feedback !== undefined) pairs.push([FEEDBACK.kind, use.feedback]);
  return pairs;
}

/** The records of `plugins` that registered something `use` needs, in their order (a run's manifest `plugins`). */
export function pluginsUsedBy(plugins: readonly PluginRecord[], use: RegistryUse): PluginRecord[] {
  const origins = new Set(registryUses(use).map(([kind, name]) => registrationOrigin(kind, name)));
  return plugins.filter((p) => origins.has(p.path));
}
