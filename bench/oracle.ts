/**
 * Benchmark, execution oracle (METHOD.md §2.3, §11.1–§11.2): wall time to score every line of each
 * bundled Spider dev predictions file (protocol `official`) with 1 and 2 SQL worker processes, median
 * of 3 repetitions. "cold" builds a fresh Oracle per repetition (workers spawned, gold cache empty, as
 * `merit eval` does); "warm" re-scores with an Oracle that has already scored the file once (workers
 * running, every gold denotation cached); "start" is the part of cold spent until every worker process
 * answers a trivial statement. Target: cold < 3 s per file with 2 workers on 2 cores.
 * Dataset loading and file reading are outside the timed region. Never asserted by tests.
 * Run: npx tsx bench/oracle.ts
 */
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadDataset } from "../lib/data/index.ts";
import type { Dataset } from "../lib/data/types.ts";
import { Oracle } from "../lib/oracle/oracle.ts";
import { readPredictions, type PredictionEncoding } from "../lib/oracle/predictions.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const REPETITIONS = 3;
const TARGET_S = 3;
const FILES: Array<[string, PredictionEncoding]> = [
  ["spider_dev__Llama3-8B.sql", "latin1"],
  ["spider_dev__Deepseek-Coder-7B.sql", "utf8"],
  ["spider_dev__SFT_CodeS_7B.sql", "utf8"],
];

function newOracle(dataset: Dataset, jobs: number): Oracle {
  return new Oracle({ dataset: "spider", databases: dataset.databases, protocol: "official", jobs, timeoutMs: 30_000 });
}

/** Scores every example concurrently (as evaluatePredictions does); returns the number correct. */
async function scoreAll(oracle: Oracle, dataset: Dataset, lines: string[]): Promise<number> {
  const verdicts = await Promise.all(dataset.examples.map((example, i) => oracle.score(example, lines[i])));
  return verdicts.filter((v) => v.status === "CORRECT").length;
}

async function seconds(work: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** One trivial statement per worker: resolves once every worker process is up and answering. */
function workersUp(oracle: Oracle, dataset: Dataset, jobs: number): Promise<unknown> {
  const db = [...dataset.databases.values()][0].canonicalPath;
  return Promise.all(Array.from({ length: jobs }, () => oracle.sandbox.execute({ db, sql: "SELECT 1" })));
}

/** Median wall times (s) for one file at one worker count: cold total, its worker start-up part, warm. */
async function measure(dataset: Dataset, lines: string[], jobs: number): Promise<{ cold: number; start: number; warm: number; correct: number }> {
  const cold: number[] = [];
  const start: number[] = [];
  let correct = 0;
  for (let rep = 0; rep < REPETITIONS; rep++) {
    cold.push(
      await seconds(async () => {
        const oracle = newOracle(dataset, jobs);
        try {
          start.push(await seconds(() => workersUp(oracle, dataset, jobs)));
          correct = await scoreAll(oracle, dataset, lines);
        } finally {
          await oracle.close();
        }
      }),
    );
  }
  const warm: number[] = [];
  const oracle = newOracle(dataset, jobs);
  try {
    await scoreAll(oracle, dataset, lines); // fills the gold cache and starts the workers
    for (let rep = 0; rep < REPETITIONS; rep++) warm.push(await seconds(() => scoreAll(oracle, dataset, lines)));
  } finally {
    await oracle.close();
  }
  return { cold: median(cold), start: median(start), warm: median(warm), correct };
}

const dataset = await loadDataset({ name: "spider", dir: join(ROOT, "data/spider") });
console.log(`oracle: Spider dev, ${dataset.examples.length} predictions per file, protocol official, median of ${REPETITIONS}`);
console.log(`load average at start: ${loadavg().map((x) => x.toFixed(2)).join(" ")} on ${availableParallelism()} cores`);
console.log(["file".padEnd(34), "correct", "cold j1", "cold j2", "j1/j2", "start j1", "start j2", "warm j1", "warm j2", "j1/j2", "target"].join("  "));
for (const [file, encoding] of FILES) {
  const lines = readPredictions(join(ROOT, "data/predictions", file), encoding, dataset.examples.length).lines;
  const one = await measure(dataset, lines, 1);
  const two = await measure(dataset, lines, 2);
  const verdict = two.cold < TARGET_S ? "OK" : `SLOWER THAN ${TARGET_S} s`;
  const cells = [
    file.padEnd(34),
    String(two.correct).padStart(7),
    `${one.cold.toFixed(2)} s`.padStart(7),
    `${two.cold.toFixed(2)} s`.padStart(7),
    (one.cold / two.cold).toFixed(2).padStart(5),
    `${one.start.toFixed(2)} s`.padStart(8),
    `${two.start.toFixed(2)} s`.padStart(8),
    `${one.warm.toFixed(2)} s`.padStart(7),
    `${two.warm.toFixed(2)} s`.padStart(7),
    (one.warm / two.warm).toFixed(2).padStart(5),
    verdict,
  ];
  console.log(cells.join("  "));
}
