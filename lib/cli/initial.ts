/**
 * `merit initial`: builds the shared initial cache (METHOD.md §6.6) with one greedy call per query, or
 * imports it from a real predictions file (lib/experiment/initial-build.ts `buildInitialCache`).
 * @module
 */
import { UsageError } from "../errors.ts";
import { loadConfig } from "../experiment/config.ts";
import { buildInitialCache, initialCacheLines } from "../experiment/initial-build.ts";
import type { PredictionEncoding } from "../oracle/predictions.ts";
import { ALLOW_SINGLE_DB, ALLOW_SINGLE_DB_USAGE, parseFlags, required, type Command, type CommandIO } from "./command.ts";
import { loadCommandPlugins, PLUGIN_FLAG, PLUGIN_USAGE } from "./plugin-flag.ts";
import { cliReporter } from "./progress.ts";

const USAGE = `usage: merit initial --config FILE [--from-pred FILE [--encoding utf8|latin1]] [--model GGUF] [--out FILE] [--plugin FILE.ts ...]
  Builds the shared initial cache of a config: one greedy call per query with the config's model
  (through the config's LLM call cache), or, with --from-pred, the SQL of a real predictions file
  (token counts recorded as unknown).
  --model  GGUF overriding the config's model.path
  --out    where to write (default: the config's initial_cache)
${PLUGIN_USAGE}
${ALLOW_SINGLE_DB_USAGE}`;

export const initialCommand: Command = {
  name: "initial",
  summary: "build the shared initial cache (from the model or a predictions file)",
  usage: USAGE,
  async run(argv: string[], io: CommandIO): Promise<number> {
    const { values } = parseFlags(argv, { config: { type: "string" }, "from-pred": { type: "string" }, encoding: { type: "string" }, model: { type: "string" }, out: { type: "string" }, ...PLUGIN_FLAG, ...ALLOW_SINGLE_DB }, USAGE);
    const configFile = required(values.config, "config", USAGE);
    await loadCommandPlugins(values.plugin, { configs: [configFile] }); // first: a plugin may register the config's dataset
    const base = loadConfig(configFile);
    const config = values.model ? { ...base, model: { ...base.model, path: values.model } } : base;
    if (values["from-pred"] === undefined && values.encoding !== undefined) throw new UsageError("--encoding applies to --from-pred only");
    const encoding = (values.encoding ?? "utf8") as PredictionEncoding;
    if (encoding !== "utf8" && encoding !== "latin1") throw new UsageError(`--encoding must be utf8 or latin1, got "${encoding}"`);
    const built = await buildInitialCache(config, { fromPredictions: values["from-pred"], encoding, out: values.out, data: { allowSingleDb: values["allow-single-db"], configFile }, reporter: cliReporter(io) });
    for (const line of initialCacheLines(built)) io.out(line);
    return 0;
  },
};
