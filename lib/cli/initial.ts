/**
 * `merit initial`: builds the shared initial cache (METHOD.md §6.6) with one greedy call per query, or
 * imports it from a real predictions file.
 * @module
 */
import { UsageError } from "../errors.ts";
import { executorOf, loadConfig } from "../experiment/config.ts";
import { loadConfigDataset } from "../experiment/database-set.ts";
import { initialCacheFromModel, initialCacheFromPredictions, writeInitialCache, type InitialCache } from "../experiment/initial-cache.ts";
import { createServices } from "../experiment/services.ts";
import { Oracle } from "../oracle/oracle.ts";
import { readPredictions, type PredictionEncoding } from "../oracle/predictions.ts";
import { ALLOW_SINGLE_DB, ALLOW_SINGLE_DB_USAGE, parseFlags, required, type Command, type CommandIO } from "./command.ts";
import { loadCommandPlugins, PLUGIN_FLAG, PLUGIN_USAGE } from "./plugins.ts";
import { defaultJobs } from "./eval.ts";
import { assertWritableFile } from "./output-paths.ts";
import { progressReporter } from "./progress.ts";
import { templateSetHash } from "../prompts.ts";

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
    const out = values.out ?? config.initial_cache;
    assertWritableFile(out, values.out === undefined ? "the config's initial_cache" : "--out");
    if (values["from-pred"] === undefined) assertWritableFile(config.call_cache, "the config's call_cache");
    const { dataset, warnings } = await loadConfigDataset(config, { allowSingleDb: values["allow-single-db"], configFile });
    for (const line of warnings) io.err(line);
    let cache: InitialCache;
    if (values["from-pred"] === undefined) {
      if (values.encoding !== undefined) throw new UsageError("--encoding applies to --from-pred only");
      if (config.prompts_dir !== undefined) templateSetHash(config.prompts_dir); // a missing template fails before any model loads
      const services = await createServices(config, dataset, { jobs: defaultJobs() });
      try {
        io.err(`merit initial: one greedy call per query (${dataset.examples.length}) with ${services.inner.identity.model}`);
        cache = await initialCacheFromModel(dataset, services.backend, services.oracle, {
          maxOutputTokens: config.decoding.max_output_tokens,
          maxInputTokens: config.decoding.max_input_tokens,
          promptsDir: config.prompts_dir,
          onProgress: progressReporter(io, "initial"),
        });
        const stats = services.backend.stats();
        io.err(`LLM calls: ${stats.computed} computed, ${stats.hits} from the call cache (${config.call_cache})`);
      } finally {
        await services.close();
      }
    } else {
      const encoding = (values.encoding ?? "utf8") as PredictionEncoding;
      if (encoding !== "utf8" && encoding !== "latin1") throw new UsageError(`--encoding must be utf8 or latin1, got "${encoding}"`);
      const predictions = readPredictions(values["from-pred"], encoding, dataset.examples.length);
      const oracle = new Oracle({ dataset: config.dataset, databases: dataset.databases, protocol: config.protocol, timeoutMs: config.sql_timeout_s * 1000, jobs: defaultJobs(), engine: executorOf(config) });
      try {
        cache = await initialCacheFromPredictions(dataset, predictions, oracle);
      } finally {
        await oracle.close();
      }
      io.err("token counts are unknown for imported predictions (recorded as null)");
    }
    writeInitialCache(out, cache);
    const scored = cache.records.filter((r) => r.oracle_correct !== null);
    const correct = scored.filter((r) => r.oracle_correct).length;
    io.out(`wrote ${out}: ${cache.records.length} records, initial EX ${((100 * correct) / Math.max(1, scored.length)).toFixed(2)} (${correct}/${scored.length}), protocol ${cache.identity.evaluation_protocol}`);
    io.out(`cache_hash ${cache.cache_hash}`);
    return 0;
  },
};
