/**
 * `merit run` and `merit grid`: one method × one stream order, or many at once sharing one loaded
 * model (parallel slots, one llama.cpp context each) or one set of OpenAI-compatible endpoints.
 * @module
 */
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { UsageError } from "../errors.ts";
import { loadConfigFile, MAX_REPAIR_STEPS, MAX_REPAIR_STEPS_REASON, type ExperimentConfig } from "../experiment/config.ts";
import type { ConfigDatasetOptions } from "../experiment/database-set.ts";
import { checkStreams, planStreams, runCheckedGrid, withGridSequences, type Stream, type StreamResult } from "../experiment/grid.ts";
import { gridPlanLines, planGrid } from "../experiment/grid-plan.ts";
import { parseShard, selectShard } from "../experiment/shard.ts";
import { registerArm } from "../experiment/study.ts";
import { familyBudgetSteps } from "../methods/registry.ts";
import { ORDER_KINDS } from "../experiment/stream-order.ts";
import type { PluginRecord } from "../plugin-import.ts";
import { ALLOW_SINGLE_DB, ALLOW_SINGLE_DB_USAGE, listFlag, numberFlag, parseFlags, required, seeHelp, type Command, type CommandIO } from "./command.ts";
import { PLUGIN_FLAG, PLUGIN_USAGE, loadCommandPlugins } from "./plugin-flag.ts";
import { parseOrderFlag } from "./stream-order.ts";
import { cliReporter } from "./progress.ts";

/** The chat backends `--engine` names (config model.backend). */
const ENGINE_NAMES = ["llama", "openai", "simulated"] as const;

const ENGINE_USAGE = `  --engine NAME  the chat backend overriding the config's model.backend: ${ENGINE_NAMES.join(", ")}; \`simulated\` is
            the simulated engine (docs/METHOD.md "Simulated engine": planted effects, no model file, its
            reports bannered) and its hashed-bag embedder
  --simulation FILE  the simulated engine's parameters (default the config's model.simulation, else
            configs/simulated-engine.json); part of the run's identity`;

const RUN_USAGE = `usage: merit run --config FILE --method NAME --seed S [--limit N] [--order KIND] [--out DIR] [--resume]
                 [--model GGUF] [--engine NAME [--simulation FILE]] [--threads N] [--sequences N] [--plugin FILE.ts ...]
  Runs one method over one stream order; the run directory gets config.json, manifest.json,
  trajectories.jsonl, retrieval_log.jsonl, prompts.jsonl, memory/, metrics.json and stdout.log.
  --seed    stream order: any non-negative integer (the paper's runs use 0, 1, 2)
  --out     run directory (default runs/<dataset>/<method>-s<seed>)
  --resume  continue a killed run in --out (same config, method, seed and limit)
  --order KIND  the stream order's kind, overriding the config's \`order\` (${ORDER_KINDS.join(", ")});
            part of the run's identity (config.json), so a resume must pass the same
  --model   GGUF overriding the config's model.path
${ENGINE_USAGE}
${PLUGIN_USAGE}
${ALLOW_SINGLE_DB_USAGE}`;

const GRID_USAGE = `usage: merit grid --config FILE --methods a,b,... [--seeds 0,1,2] [--limit N] [--order KIND] [--out DIR] [--resume]
                  [--model GGUF] [--engine NAME [--simulation FILE]] [--threads N] [--sequences N] [--shard i/n]
                  [--plugin FILE.ts ...] [--plan [--json]]
                  [--max-repair-steps K|budget:M1,M2,... [--arm NAME]]
  Runs every (method, seed) stream at once, sharing one loaded model through parallel slots
  (methods and seeds each named once; seeds are non-negative integers, default 0,1,2)
  (--sequences; default: one per stream, at most 8; outputs do not depend on it). Run directories: OUT/<method>-s<seed>
  (default OUT = runs/<dataset>).
  --shard i/n  run only shard i (0-based) of n: streams i, i+n, ... of the methods x seeds list, so n
               machines (a Slurm array) together write exactly the run directories of one machine;
               unite their call caches afterwards with \`merit cache merge\`.
  --limit N    only the first N queries of each stream (the config's \`subset\` rule says which;
               default: the config's \`limit\`, as a study's saved config has, else every query)
  --order KIND the stream orders' kind, overriding the config's \`order\` (${ORDER_KINDS.join(", ")});
               part of each run's identity (config.json), so a resume must pass the same
  --resume     continue killed runs in their run directories (same config, methods, seeds, limit)
  --max-repair-steps K  K overriding the config's max_repair_steps (part of each run's identity, as
               --order). budget:M1,M2,... is the equal-budget control's K (METHOD.md §13): the config's
               K plus the most extra LLM calls any of M1,M2,... declares for one episode, so iterative
               repair may spend as many calls as those memory methods (\`make reproduce PEERS=1\`).
  --arm NAME   run the one method of --methods as the arm NAME (a method of its own name in every run,
               table and figure, recorded as an arm of that method) under --max-repair-steps; a report
               pairs it with runs at the config's K under \`--conditions max_repair_steps\`
  --model      GGUF overriding the config's model.path
${ENGINE_USAGE}
  --threads N  CPU threads of the llama backend (outputs do not depend on it)
  --sequences N  parallel slots sharing the loaded model
  --plan       print, without loading a model or writing anything, the grid's computed LLM calls —
               if no repair succeeds outside what the call cache replays, and at most whatever the
               repairs do —, the calls the call cache already holds, the repeats within the grid (a
               memoryless method's episodes are the same calls in every stream order, and so is a
               memory method's episode while its memory is necessarily empty), token upper bounds,
               and which methods are controls no paper table reads; --json prints it as JSON
               (lib/experiment/grid-plan.ts). The first count is exact when no repair succeeds and
               no two memory episodes send the same prompt: memory methods of one stream order that
               retrieve the same entries (the ablations, early in the stream) share calls, so the
               run computes fewer. Runs already in --out are not read: a --resume computes at most this
${PLUGIN_USAGE}
${ALLOW_SINGLE_DB_USAGE}`;

const FLAGS = {
  config: { type: "string" },
  method: { type: "string" },
  methods: { type: "string" },
  seed: { type: "string" },
  seeds: { type: "string" },
  limit: { type: "string" },
  order: { type: "string" },
  out: { type: "string" },
  resume: { type: "boolean" },
  model: { type: "string" },
  engine: { type: "string" },
  simulation: { type: "string" },
  threads: { type: "string" },
  sequences: { type: "string" },
  shard: { type: "string" },
  plan: { type: "boolean" },
  json: { type: "boolean" },
  "max-repair-steps": { type: "string" },
  arm: { type: "string" },
  ...PLUGIN_FLAG,
  ...ALLOW_SINGLE_DB,
} as const;

/**
 * The grid as the CLI runs it (`merit run|grid`): the library's runCheckedGrid (lib/experiment/grid.ts),
 * with progress on `io.err`.
 */
export async function runGridWithProgress(config: ExperimentConfig, streams: Stream[], limit: number | null, resume: boolean, io: CommandIO, data: ConfigDatasetOptions = {}, plugins: readonly PluginRecord[] = [], root?: string): Promise<StreamResult[]> {
  return runCheckedGrid(config, streams, { limit, resume, data, plugins, root, reporter: cliReporter(io) });
}

async function runStreams(config: ExperimentConfig, streams: Stream[], limit: number | null, resume: boolean, io: CommandIO, data: ConfigDatasetOptions, plugins: readonly PluginRecord[], root?: string): Promise<number> {
  for (const { stream: s, result } of await runGridWithProgress(config, streams, limit, resume, io, data, plugins, root)) {
    const m = result.metrics;
    io.out(`${s.method} seed ${s.seed}: EX ${(100 * m.final_accuracy).toFixed(2)} (initial ${(100 * m.success_at_1).toFixed(2)}), repaired ${m.repaired_count}, n ${m.total} -> ${s.outDir}`);
  }
  return 0;
}

/** Refuses a flag of the other command (`merit grid --method`, `merit run --seeds`): FLAGS is shared, the usage is not. */
function refuseOthers(values: Record<string, unknown>, flags: Record<string, string>, usage: string): void {
  for (const [flag, instead] of Object.entries(flags)) {
    if (values[flag] !== undefined) throw new UsageError(`--${flag} does not apply here; ${instead}${seeHelp(usage)}`);
  }
}

/** Most parallel slots one process opens (each is its own llama.cpp context with its own KV cache). */
const MAX_SEQUENCES = 64;

export function applyOverrides(config: ExperimentConfig, values: { model?: string; threads?: string; sequences?: string; engine?: string; simulation?: string }, streams: number): ExperimentConfig {
  const model = { ...config.model };
  if (values.model) model.path = values.model;
  if (values.engine !== undefined) {
    const engine = ENGINE_NAMES.find((e) => e === values.engine);
    if (engine === undefined) throw new UsageError(`--engine must be one of ${ENGINE_NAMES.join(", ")}, got "${values.engine}"`);
    model.backend = engine;
    // the simulated engine brings its own embedder, so a run on it needs no model file at all
    if (engine === "simulated") config = { ...config, embedder: { ...config.embedder, backend: "simulated" } };
  }
  if (values.simulation !== undefined) {
    if (model.backend !== "simulated") throw new UsageError(`--simulation is the simulated engine's parameters file; add --engine simulated (the config's model.backend is ${model.backend})`);
    model.simulation = values.simulation;
  }
  if (values.threads !== undefined) model.threads = numberFlag(values.threads, "threads", 1, { integer: true, min: 1, max: availableParallelism(), maxReason: "the CPU cores here" });
  if (values.sequences === undefined) return withGridSequences({ ...config, model }, streams);
  model.sequences = numberFlag(values.sequences, "sequences", 1, { integer: true, min: 1, max: MAX_SEQUENCES, maxReason: "one llama.cpp context each" });
  return { ...config, model };
}

/**
 * The config with `--order KIND` in place of its `order` (undefined: the config as it is). `random`
 * is left out of the config as parseConfig leaves it out, so its identity is a config without `order`.
 */
export function withOrder(config: ExperimentConfig, text: string | undefined): ExperimentConfig {
  const order = parseOrderFlag(text);
  if (order === undefined) return config;
  const next: ExperimentConfig = { ...config, order };
  if (order === "random") delete next.order;
  return next;
}

/**
 * The config with `--max-repair-steps` in place of its K (undefined: the config as it is): a
 * non-negative integer, or `budget:M1,M2,...`, the config's K plus the most extra calls one episode of
 * any listed method declares (budgetMatchedSteps, METHOD.md §13).
 */
export function withRepairSteps(config: ExperimentConfig, text: string | undefined): ExperimentConfig {
  if (text === undefined) return config;
  if (text.startsWith("budget:")) {
    const methods = listFlag(text.slice("budget:".length), "max-repair-steps budget:");
    return { ...config, max_repair_steps: familyBudgetSteps(methods, config.max_repair_steps) };
  }
  return { ...config, max_repair_steps: numberFlag(text, "max-repair-steps", 7, { integer: true, min: 0, max: MAX_REPAIR_STEPS, maxReason: MAX_REPAIR_STEPS_REASON }) };
}

/** `--arm NAME`: registers NAME as the arm of the one listed method at the overridden K; returns NAME. */
function registerGridArm(name: string, listed: readonly string[], config: ExperimentConfig, armed: ExperimentConfig): string {
  if (listed.length !== 1) throw new UsageError(`--arm ${name} names the arm of one method; give one --methods (got ${listed.join(",")})${seeHelp(GRID_USAGE)}`);
  if (armed.max_repair_steps === config.max_repair_steps) throw new UsageError(`--arm ${name} changes nothing of ${listed[0]}: give --max-repair-steps other than the config's K (${config.max_repair_steps})${seeHelp(GRID_USAGE)}`);
  registerArm(name, { method: listed[0], max_repair_steps: armed.max_repair_steps }, "merit grid --arm", { max_repair_steps: armed.max_repair_steps });
  return name;
}

function parseLimit(text: string | undefined): number | null {
  return text === undefined ? null : numberFlag(text, "limit", 0, { integer: true, min: 1 });
}

/** A stream seed: any non-negative integer in decimal digits (`1e3`, `-1`, `0.5` are refused). */
function parseSeed(text: string, flag: string): number {
  const seed = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(seed)) throw new UsageError(`--${flag}: seeds must be non-negative integers, got "${text}"`);
  return seed;
}

export const runCommand: Command = {
  name: "run",
  summary: "run one method over one stream order (crash-safe, resumable)",
  usage: RUN_USAGE,
  async run(argv, io) {
    const { values } = parseFlags(argv, FLAGS, RUN_USAGE);
    refuseOthers(values, { methods: "merit run takes one --method (merit grid takes --methods)", seeds: "merit run takes one --seed (merit grid takes --seeds)", shard: "--shard is for merit grid", plan: "--plan is for merit grid", json: "--json is for merit grid --plan", "max-repair-steps": "--max-repair-steps is for merit grid", arm: "--arm is for merit grid" }, RUN_USAGE);
    const configFile = required(values.config, "config", RUN_USAGE);
    const plugins = await loadCommandPlugins(values.plugin, { configs: [configFile] }); // first: a plugin may register the config's dataset
    const loaded = loadConfigFile(configFile);
    const base = withOrder(loaded.config, values.order);
    const method = required(values.method, "method", RUN_USAGE);
    const seed = parseSeed(required(values.seed, "seed", RUN_USAGE), "seed");
    const limit = parseLimit(values.limit) ?? loaded.limit;
    const config = applyOverrides(base, values, 1);
    const outDir = values.out ?? join("runs", config.dataset, `${method}-s${seed}`);
    return runStreams(config, [{ method, seed, outDir }], limit, values.resume ?? false, io, { allowSingleDb: values["allow-single-db"], configFile }, plugins);
  },
};

export const gridCommand: Command = {
  name: "grid",
  summary: "run many (method, seed) streams at once on one loaded model (--plan: count its LLM calls first)",
  usage: GRID_USAGE,
  async run(argv, io) {
    const { values } = parseFlags(argv, FLAGS, GRID_USAGE);
    refuseOthers(values, { method: "merit grid takes --methods a,b,...", seed: "merit grid takes --seeds 0,1,2" }, GRID_USAGE);
    const configFile = required(values.config, "config", GRID_USAGE);
    const plugins = await loadCommandPlugins(values.plugin, { configs: [configFile] }); // first: a plugin may register the config's dataset
    const loaded = loadConfigFile(configFile);
    const ordered = withOrder(loaded.config, values.order);
    const base = withRepairSteps(ordered, values["max-repair-steps"]);
    const listed = listFlag(required(values.methods, "methods", GRID_USAGE), "methods");
    const methods = values.arm === undefined ? listed : [registerGridArm(values.arm, listed, ordered, base)];
    const seeds = listFlag(values.seeds ?? "0,1,2", "seeds").map((text) => parseSeed(text, "seeds"));
    const limit = parseLimit(values.limit) ?? loaded.limit;
    const root = values.out ?? join("runs", base.dataset);
    const all = planStreams(methods, seeds, root);
    checkStreams(all); // the whole grid, so one method named twice (an alias too) is refused in every shard
    const shard = values.shard === undefined ? undefined : parseShard(values.shard);
    const streams = shard ? selectShard(all, shard) : all;
    if (shard) io.err(`shard ${shard.index}/${shard.count}: ${streams.length} of ${all.length} stream(s): ${streams.map((s) => `${s.method}-s${s.seed}`).join(", ") || "none"}`);
    if (streams.length === 0) return 0;
    const config = applyOverrides(base, values, streams.length);
    if (values.json && !values.plan) throw new UsageError(`--json goes with --plan${seeHelp(GRID_USAGE)}`);
    if (values.plan) {
      const plan = await planGrid(config, streams, { limit, data: { allowSingleDb: values["allow-single-db"], configFile }, log: (line) => io.err(line) });
      if (values.json) io.out(JSON.stringify(plan, null, 2));
      else for (const line of gridPlanLines(plan)) io.out(line);
      return 0;
    }
    return runStreams(config, streams, limit, values.resume ?? false, io, { allowSingleDb: values["allow-single-db"], configFile }, plugins, root);
  },
};
