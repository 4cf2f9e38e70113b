/**
 * A scripted repair scenario on real Spider dev data (METHOD.md §4.3, §6.1), stream seed 0, first
 * five positions: 426 (initially correct), A = 609 (fails, repaired at step 3), B = 585 (fails, never
 * repaired), C = 109 (fails, repaired at step 1), 278 (initially correct). Used by the scripted
 * episode test and, as a clean run directory, by the audit test.
 */
import type { Dataset } from "../../lib/data/index.ts";
import { parseConfig } from "../../lib/experiment/config.ts";
import type { InitialCache } from "../../lib/experiment/initial-cache.ts";
import { runExperiment } from "../../lib/experiment/run.ts";
import type { Oracle } from "../../lib/oracle/oracle.ts";
import { getMethod } from "../../lib/methods/index.ts";
import { createRetriever } from "../../lib/retrieval/retriever.ts";
import { HashedEmbedder } from "./hashed-embedder.ts";
import { rmSync } from "node:fs";
import { cacheFromChosenSql, loadSpider, SPIDER_DIR, spiderOracle, tempDir } from "./run-fixture.ts";
import { ScriptedBackend } from "./scripted-backend.ts";
import type { ChatBackend } from "../../lib/llm/types.ts";

export const SCENARIO_SEED = 0;
export const SCENARIO_LIMIT = 5;
export const A = "609";
export const B = "585";
export const C = "109";
export const SCENARIO_IDS = ["426", A, B, C, "278"];

const question = (dataset: Dataset, id: string) => dataset.examples.find((e) => e.id === id)!.question;

/** Initial SQL per query: the two correct ones are their gold SQL; A, B and C fail. */
export function scenarioInitialSql(dataset: Dataset): Map<string, string> {
  const gold = (id: string) => dataset.examples.find((e) => e.id === id)!.goldSql;
  return new Map([
    ["426", gold("426")],
    [A, "SELECT series_nam FROM TV_Channel"], // no such column → Schema Linking
    [B, "SELECT Title FROM Cartoon ORDER BY"], // incomplete input → Syntax
    [C, "SELECT count(*), T2.FullName FROM model_list AS T1 JOIN car_makers AS T2 ON T1.Maker = T2.Id GROUP BY T2.Idd"], // no such column
    ["278", gold("278")],
  ]);
}

/** The repair answers per question, step 1 first. */
export function scenarioScript(dataset: Dataset): Map<string, string[]> {
  return new Map([
    [
      question(dataset, A),
      [
        "SELECT T1.series_name FROM TV_Chanel AS T1", // no such table → Schema Linking
        "SELECT T1.series_name FROM TV_Channel AS T1 JOIN Cartoon AS T2 ON T1.id = T2.Channel WHERE T2.Title =", // → Syntax
        "SELECT T1.series_name FROM TV_Channel AS T1 JOIN Cartoon AS T2 ON T1.id = T2.Channel WHERE T2.Title = 'The Rise of the Blue Beetle!'",
      ],
    ],
    [question(dataset, B), [1, 2, 3, 4, 5, 6, 7].map((k) => `SELECT Title FROM Cartoon WHERE id <= ${k} ORDER BY Title`)], // executes, too few rows
    [question(dataset, C), ["SELECT count(*), T2.FullName FROM model_list AS T1 JOIN car_makers AS T2 ON T1.Maker = T2.Id GROUP BY T2.Id"]],
  ]);
}

/** Runs the scenario with `method` into `outDir`; returns the backend (its calls are inspectable). */
export async function runScenario(opts: {
  method: string;
  dataset: Dataset;
  oracle: Oracle;
  cache: InitialCache;
  cachePath: string;
  outDir: string;
  /** Extra config keys (e.g. max_repair_steps). */
  config?: Record<string, unknown>;
}): Promise<ScriptedBackend> {
  const backend = new ScriptedBackend(scenarioScript(opts.dataset));
  await runScenarioWith(opts, opts.method, opts.outDir, backend, { config: opts.config });
  return backend;
}

/**
 * Runs the scenario's stream with `method` into `outDir` on a chat double of the test's own (a
 * method's hook calls need answers the scenario's script does not give), with the hashed embedder
 * and a fresh retriever; `resume` continues a killed run.
 */
export async function runScenarioWith(fx: Pick<ScenarioFixture, "dataset" | "oracle" | "cache" | "cachePath">, method: string, outDir: string, backend: ChatBackend, opts: { config?: Record<string, unknown>; resume?: boolean } = {}): Promise<void> {
  await runExperiment({
    spec: {
      config: parseConfig({ dataset: "spider", data_dir: SPIDER_DIR, initial_cache: fx.cachePath, ...opts.config }),
      method,
      seed: SCENARIO_SEED,
      limit: SCENARIO_LIMIT,
    },
    method: getMethod(method),
    dataset: fx.dataset,
    initialCache: fx.cache,
    outDir,
    resume: opts.resume,
    services: { backend, oracle: fx.oracle, embedder: new HashedEmbedder(), retriever: createRetriever() },
  });
}

/** The scenario's inputs: Spider dev, an oracle on it and the scenario's initial cache, in a fresh temp folder. */
export interface ScenarioFixture {
  root: string;
  dataset: Dataset;
  oracle: Oracle;
  cache: InitialCache;
  cachePath: string;
}

/** Opens a ScenarioFixture in a new temp folder named after `prefix`; close it with `closeScenario`. */
export async function openScenario(prefix: string): Promise<ScenarioFixture> {
  const root = tempDir(prefix);
  const dataset = await loadSpider();
  const oracle = spiderOracle(dataset);
  const { cache, path: cachePath } = await cacheFromChosenSql(dataset, oracle, scenarioInitialSql(dataset), root);
  return { root, dataset, oracle, cache, cachePath };
}

/** Closes the oracle and removes the temp folder (a fixture that failed to open is skipped). */
export async function closeScenario(fixture: ScenarioFixture | undefined): Promise<void> {
  if (!fixture) return;
  await fixture.oracle.close();
  rmSync(fixture.root, { recursive: true, force: true });
}
