/**
 * `merit demo` (`make demo`): the main job on the bundled data, end to end —
 *  1. EX of every bundled predictions file with the oracle (official Spider protocol);
 *  2. the shared initial cache from the real DeepSeek-Coder-7B predictions (merit protocol);
 *  3. iterative, reflexion, dynamic_rag and merit over stream orders 0–2 on the same N queries (the
 *     first N of the seed-0 stream, visited in each seed's order), with the Qwen2.5-7B GGUF from
 *     models/ when present — otherwise the tiny random test model, under a loud banner: those numbers
 *     are smoke-scale and mean nothing;
 *  4. the causal audit of every run, then the report (tables, figures, HTML explorer) in results/demo.
 * Re-running is cheap: the LLM call cache makes a warm re-run compute nothing.
 * @module
 */
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { loadDataset, missingDatabases } from "../data/index.ts";
import type { Dataset, DatasetName } from "../data/types.ts";
import { auditRun } from "../experiment/audit.ts";
import { loadConfig, type ExperimentConfig } from "../experiment/config.ts";
import { initialCacheFromPredictions, writeInitialCache } from "../experiment/initial-cache.ts";
import { evaluatePredictions, writeEvalOutputs } from "../oracle/evaluate.ts";
import { Oracle } from "../oracle/oracle.ts";
import { readPredictions } from "../oracle/predictions.ts";
import { numberFlag, parseFlags, type Command, type CommandIO } from "./command.ts";
import { defaultJobs } from "./eval.ts";
import { reportCommand } from "./report.ts";
import { runGrid } from "./run.ts";

const USAGE = `usage: merit demo [--limit N] [--config FILE] [--fresh] [--skip-runs]
  The main job on the bundled data: EX of the bundled predictions, the shared initial cache from
  the DeepSeek-Coder-7B predictions, iterative / reflexion / dynamic_rag / merit over stream orders
  0-2 on N queries (default 16 with the tiny test model, 100 with the real model), the
  causal audit, and the report. Runs go to runs/demo/, the report to results/demo/.
  --fresh      delete runs/demo/ first (the LLM call cache too)
  --skip-runs  only score the bundled predictions`;

/** Latin-1 files among the bundled predictions (see data/PROVENANCE.md). */
const LATIN1 = new Set(["spider_dev__Llama3-8B.sql"]);
const DEMO_METHODS = ["iterative", "reflexion", "dynamic_rag", "merit"];
const TINY_CHAT = "test/fixtures/models/tiny-random-qwen2.5-instruct.gguf";
const TINY_EMBEDDER = "test/fixtures/models/tiny-random-bert-bge.gguf";
const REPORT_DIR = "results/demo";

/** The bundled predictions files (data/predictions/*.sql), sorted. */
function bundledPredictionFiles(): string[] {
  return readdirSync("data/predictions").filter((f) => f.endsWith(".sql")).sort();
}

/** Dataset of a bundled predictions file: `bird_…` is BIRD, every other file Spider. */
function datasetOfFile(file: string): DatasetName {
  return file.startsWith("bird_") ? "bird" : "spider";
}

/** Heading of step 1, naming every dataset the bundled files cover with its official protocol. */
export function bundledHeading(files: readonly string[]): string {
  const names = { spider: "Spider dev, official test-suite protocol", bird: "BIRD dev, official BIRD protocol" } as const;
  const datasets = (["spider", "bird"] as const).filter((d) => files.some((f) => datasetOfFile(f) === d));
  return `== 1. Execution accuracy of the bundled real predictions (${datasets.map((d) => names[d]).join("; ")})`;
}

async function scoreBundledPredictions(io: CommandIO): Promise<void> {
  const files = bundledPredictionFiles();
  const datasets = new Map<DatasetName, Dataset>();
  const rows: string[][] = [];
  for (const file of files) {
    const name = datasetOfFile(file);
    if (!datasets.has(name)) datasets.set(name, await loadDataset({ name, dir: join("data", name) }));
    const data = datasets.get(name)!;
    if (data.databases.size === 0) {
      rows.push([file, name, "-", "-", "-", "-", `no ${name} databases (make data-${name})`]);
      continue;
    }
    const missing = missingDatabases(data).reduce((s, m) => s + m.examples, 0);
    const predictions = readPredictions(join("data/predictions", file), LATIN1.has(file) ? "latin1" : "utf8", data.examples.length);
    const result = await evaluatePredictions(data, predictions, { protocol: "official", timeoutMs: 30_000, jobs: defaultJobs() });
    writeEvalOutputs(join("runs/demo/eval", file.replace(/\.sql$/, "")), data, result);
    const s = result.summary;
    rows.push([file, name, String(s.n), String(s.correct), s.ex.toFixed(2), String(s.counts.EXECUTION_ERROR), missing ? `${missing} NO_DATABASE` : ""]);
  }
  printTable(io, ["predictions", "dataset", "n", "correct", "EX %", "exec errors", "note"], rows);
}

function printTable(io: CommandIO, header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const fmt = (r: string[]) => "| " + r.map((c, i) => c.padEnd(widths[i])).join(" | ") + " |";
  io.out(fmt(header));
  io.out("|" + widths.map((w) => "-".repeat(w + 2)).join("|") + "|");
  for (const r of rows) io.out(fmt(r));
}

/** The demo config with the tiny test models substituted when the real GGUFs are absent. */
function demoConfig(file: string, io: CommandIO): { config: ExperimentConfig; tiny: boolean } {
  const config = loadConfig(file);
  const tiny = !existsSync(config.model.path);
  if (!tiny) return { config, tiny };
  const banner = "!".repeat(100);
  io.err(banner);
  io.err(`!!  ${config.model.path} is not present (run \`make models\` on a machine with model-hub access).`);
  io.err(`!!  The demo repairs with the TINY RANDOM test model instead: its output is gibberish, so every`);
  io.err(`!!  repair fails and the numbers below are SMOKE-SCALE AND MEANINGLESS. They show the mechanics only.`);
  io.err(banner);
  return {
    tiny,
    config: {
      ...config,
      call_cache: "runs/demo/llm-call-cache-tiny.sqlite",
      model: { ...config.model, path: TINY_CHAT, gpu: false },
      embedder: { ...config.embedder, path: existsSync(config.embedder.path) ? config.embedder.path : TINY_EMBEDDER },
      // The random model never stops by itself; shorter outputs keep the smoke run inside minutes.
      decoding: { ...config.decoding, max_output_tokens: 64 },
    },
  };
}

export const demoCommand: Command = {
  name: "demo",
  summary: "the main job on the bundled data (EX table, initial cache, four methods x three seeds, audit, report)",
  usage: USAGE,
  async run(argv: string[], io: CommandIO): Promise<number> {
    const { values } = parseFlags(argv, { limit: { type: "string" }, config: { type: "string" }, fresh: { type: "boolean" }, "skip-runs": { type: "boolean" } }, USAGE);
    if (values.fresh) rmSync("runs/demo", { recursive: true, force: true });
    io.out(bundledHeading(bundledPredictionFiles()));
    await scoreBundledPredictions(io);
    if (values["skip-runs"]) return 0;

    const { config, tiny } = demoConfig(values.config ?? "configs/demo.json", io);
    const limit = numberFlag(values.limit, "limit", tiny ? 16 : 100, { integer: true, min: 1 });
    const dataset = await loadDataset({ name: config.dataset, dir: config.data_dir });
    io.out("");
    io.out(`== 2. Shared initial cache from spider_dev__Deepseek-Coder-7B.sql (protocol ${config.protocol})`);
    const oracle = new Oracle({ dataset: config.dataset, databases: dataset.databases, protocol: config.protocol, jobs: defaultJobs() });
    try {
      const predictions = readPredictions("data/predictions/spider_dev__Deepseek-Coder-7B.sql", "utf8", dataset.examples.length);
      const cache = await initialCacheFromPredictions(dataset, predictions, oracle);
      writeInitialCache(config.initial_cache, cache);
      const scored = cache.records.filter((r) => r.oracle_correct !== null);
      const correct = scored.filter((r) => r.oracle_correct).length;
      io.out(`${config.initial_cache}: initial EX ${((100 * correct) / scored.length).toFixed(2)} (${correct}/${scored.length}), cache_hash ${cache.cache_hash.slice(0, 16)}`);
    } finally {
      await oracle.close();
    }

    io.out("");
    io.out(`== 3. ${DEMO_METHODS.join(", ")} x stream orders 0,1,2 on the same ${limit} queries (the first ${limit} of the seed-0 stream)${tiny ? " (TINY RANDOM MODEL: smoke-scale, meaningless)" : ""}`);
    const root = tiny ? "runs/demo/tiny" : "runs/demo/qwen";
    const streams = DEMO_METHODS.flatMap((method) => [0, 1, 2].map((seed) => ({ method, seed, outDir: join(root, `${method}-s${seed}`) })));
    for (const s of streams) rmSync(s.outDir, { recursive: true, force: true });
    // Outputs do not depend on the thread count or the number of parallel slots (llama-backend.ts,
    // "Determinism"), so the demo reproduces byte for byte on any machine with the config's settings.
    const results = await runGrid(config, streams, limit, false, io);
    const rows = results.map(({ stream, result }) => {
      const m = result.metrics;
      const audit = auditRun(stream.outDir, dataset);
      return [stream.method, String(stream.seed), String(m.total), (100 * m.success_at_1).toFixed(2), (100 * m.final_accuracy).toFixed(2), String(m.repaired_count), m.steps.toFixed(2), String(m.accounting.llm_calls), String(audit.violations.length)];
    });
    printTable(io, ["method", "seed", "n", "initial EX", "EX", "repaired", "steps", "LLM calls", "audit violations"], rows);

    io.out("");
    io.out(`== 4. Report: tables and figures in ${REPORT_DIR}${tiny ? " (from the tiny-model smoke runs)" : ""}`);
    const code = await reportCommand.run([root, "--out", REPORT_DIR, "--reference", "merit", "--html"], io);
    return code;
  },
};
