/**
 * `merit demo`: the main job on the bundled default data. For now it scores every bundled predictions
 * file with the oracle (official Spider protocol; BIRD needs `make data-bird`) and prints EX per file.
 * @module
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { loadDataset, missingDatabases } from "../data/index.ts";
import type { Dataset, DatasetName } from "../data/types.ts";
import { evaluatePredictions, writeEvalOutputs } from "../oracle/evaluate.ts";
import { readPredictions } from "../oracle/predictions.ts";
import { parseFlags, type Command, type CommandIO } from "./command.ts";
import { defaultJobs } from "./eval.ts";

const USAGE = `usage: merit demo [--out DIR]
  Scores the bundled prediction files in data/predictions/ (official Spider protocol) and prints EX per
  file; with --out, writes each file's verdicts.jsonl and summary.json under DIR/<file>/.`;

/** Latin-1 files among the bundled predictions (see data/PROVENANCE.md). */
const LATIN1 = new Set(["spider_dev__Llama3-8B.sql"]);

export const demoCommand: Command = {
  name: "demo",
  summary: "the main job on the bundled data (scores the bundled prediction files)",
  usage: USAGE,
  async run(argv: string[], io: CommandIO): Promise<number> {
    const { values } = parseFlags(argv, { out: { type: "string" } }, USAGE);
    const files = readdirSync("data/predictions").filter((f) => f.endsWith(".sql")).sort();
    const datasets = new Map<DatasetName, Dataset>();
    const rows: string[][] = [];
    for (const file of files) {
      const name: DatasetName = file.startsWith("bird_") ? "bird" : "spider";
      if (!datasets.has(name)) datasets.set(name, await loadDataset({ name, dir: join("data", name) }));
      const data = datasets.get(name)!;
      if (data.databases.size === 0) {
        io.err(`skipping ${file}: no ${name} databases under ${data.dir} (run \`make data-${name}\`)`);
        rows.push([file, name, "-", "-", "-", "-", "no databases"]);
        continue;
      }
      const missing = missingDatabases(data).reduce((s, m) => s + m.examples, 0);
      const encoding = LATIN1.has(file) ? "latin1" : "utf8";
      const predictions = readPredictions(join("data/predictions", file), encoding, data.examples.length);
      const result = await evaluatePredictions(data, predictions, { protocol: "official", timeoutMs: 30_000, jobs: defaultJobs() });
      if (values.out) writeEvalOutputs(join(values.out, file.replace(/\.sql$/, "")), data, result);
      const s = result.summary;
      rows.push([file, name, String(s.n), String(s.correct), s.ex.toFixed(2), String(s.counts.EXECUTION_ERROR), missing ? `${missing} NO_DATABASE` : ""]);
    }
    const header = ["predictions", "dataset", "n", "correct", "EX %", "exec errors", "note"];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    const fmt = (r: string[]) => "| " + r.map((c, i) => c.padEnd(widths[i])).join(" | ") + " |";
    io.out(fmt(header));
    io.out("|" + widths.map((w) => "-".repeat(w + 2)).join("|") + "|");
    for (const r of rows) io.out(fmt(r));
    if (!existsSync("data/bird/dev_databases")) io.out("(BIRD scores need the BIRD databases: make data-bird)");
    return 0;
  },
};
