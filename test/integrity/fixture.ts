/**
 * Fault-injection fixture (README "Reliability"; lib/experiment/run.ts): the scripted five-episode
 * MERIT scenario on real Spider data (test/helpers/scripted-scenario.ts), run in process with
 * runExperiment so faults can be injected through `fsLayer` (lib/atomic-file.ts) and the
 * chat seam. Every fault case ends in a byte-identical recovery or a one-line refusal.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Dataset } from "../../lib/data/index.ts";
import { userFixableError } from "../../lib/errors.ts";
import { fsLayer } from "../../lib/atomic-file.ts";
import { parseConfig } from "../../lib/experiment/config.ts";
import type { InitialCache } from "../../lib/experiment/initial-cache.ts";
import { runExperiment, type RunResult } from "../../lib/experiment/run.ts";
import type { JsonValue } from "../../lib/hash.ts";
import type { BackendIdentity, ChatBackend, GenerateRequest, GenerateResult } from "../../lib/llm/types.ts";
import type { Oracle } from "../../lib/oracle/oracle.ts";
import { getMethod } from "../../lib/methods/index.ts";
import { createRetriever } from "../../lib/retrieval/retriever.ts";
import { HashedEmbedder } from "../helpers/hashed-embedder.ts";
import { listFiles } from "../helpers/killable-run.ts";
import { cacheFromChosenSql, loadSpider, SPIDER_DIR, spiderOracle } from "../helpers/run-fixture.ts";
import { ScriptedBackend } from "../helpers/scripted-backend.ts";
import { SCENARIO_LIMIT, SCENARIO_SEED, scenarioInitialSql, scenarioScript } from "../helpers/scripted-scenario.ts";

/** Files allowed to differ between a recovered and an undisturbed run (timestamps, resume lines). */
export const VOLATILE = new Set(["manifest.json", "stdout.log"]);

/** A scripted backend that "dies" (throws) on call number `dieAt` (1-based), as a crash would. */
export class DyingBackend implements ChatBackend {
  readonly identity: BackendIdentity;
  readonly #inner: ScriptedBackend;
  calls = 0;
  readonly dieAt: number;
  constructor(inner: ScriptedBackend, dieAt = Infinity, identity?: Partial<BackendIdentity>) {
    this.dieAt = dieAt;
    this.#inner = inner;
    this.identity = { ...inner.identity, ...identity };
  }
  async generate(request: GenerateRequest): Promise<GenerateResult> {
    if (++this.calls >= this.dieAt) throw new Error(`simulated crash at call ${this.calls}`);
    return this.#inner.generate(request);
  }
  async close(): Promise<void> {
    await this.#inner.close();
  }
}

export interface Scenario {
  dataset: Dataset;
  oracle: Oracle;
  cache: InitialCache;
  cachePath: string;
}

export interface RunArgs {
  resume?: boolean;
  dieAt?: number;
  identity?: Partial<BackendIdentity>;
  seed?: number;
  manifest?: Record<string, JsonValue>;
  cache?: InitialCache;
}

/** The scripted scenario on Spider with its initial cache written under `root` (close `oracle` when done). */
export async function openScenarioIn(root: string): Promise<Scenario> {
  const dataset = await loadSpider();
  const oracle = spiderOracle(dataset);
  const { cache, path: cachePath } = await cacheFromChosenSql(dataset, oracle, scenarioInitialSql(dataset), root);
  return { dataset, oracle, cache, cachePath };
}

/** Runs the scenario (merit, seed 0, 5 positions) into `outDir`. */
export function runScenarioInto(s: Scenario, outDir: string, args: RunArgs = {}): Promise<RunResult> {
  const backend = new DyingBackend(new ScriptedBackend(scenarioScript(s.dataset)), args.dieAt, args.identity);
  return runExperiment({
    spec: { config: parseConfig({ dataset: "spider", data_dir: SPIDER_DIR, initial_cache: s.cachePath }), method: "merit", seed: args.seed ?? SCENARIO_SEED, limit: SCENARIO_LIMIT },
    method: getMethod("merit"),
    dataset: s.dataset,
    initialCache: args.cache ?? s.cache,
    outDir,
    resume: args.resume,
    manifest: args.manifest ?? { code_hash: "test-code" },
    services: { backend, oracle: s.oracle, embedder: new HashedEmbedder(), retriever: createRetriever() },
  });
}

/** Every file of `dir` with its bytes (base64), for "nothing was rewritten" checks. */
export function snapshot(dir: string): Record<string, string> {
  if (!existsSync(dir)) return {};
  return Object.fromEntries(listFiles(dir).map((f) => [f, readFileSync(join(dir, f)).toString("base64")]));
}

/** Files of `dir` except VOLATILE ones, as a comparable record. */
export function stableFiles(dir: string): Record<string, string> {
  return Object.fromEntries(Object.entries(snapshot(dir)).filter(([f]) => !VOLATILE.has(f)));
}

/** The error a promise rejects with (fails the test when it resolves). */
export async function refusal(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a refusal, but the run finished");
}

/** The error as the CLI prints it: one line and exit code 2 (null when it would be an internal error). */
export function cliLine(error: unknown): { line: string; exitCode: number } | null {
  const known = userFixableError(error);
  return known ? { line: known.message, exitCode: known.exitCode } : null;
}

type Layer = typeof fsLayer;
const original: Layer = { ...fsLayer };

/** Replaces fsLayer functions until `restoreFs()`. */
export function injectFs(patch: Partial<Layer>): void {
  Object.assign(fsLayer, patch);
}

export function restoreFs(): void {
  Object.assign(fsLayer, original);
}

/**
 * Simulates a kill before file operation number `k` (1-based) through fsLayer: that operation and
 * every later one throws, as if the process had died there (writes may land half: the k-th write
 * writes half its bytes first). Returns a counter of operations seen.
 */
export function killAtOperation(k: number): { count: () => number } {
  let n = 0;
  let dead = false;
  const gate = <A extends unknown[], R>(name: keyof Layer, f: (...a: A) => R) =>
    (...a: A): R => {
      n++;
      if (dead || n === k) {
        dead = true;
        throw Object.assign(new Error(`simulated kill before ${name} #${n}`), { code: "EKILLED" });
      }
      return f(...a);
    };
  injectFs({
    openSync: gate("openSync", original.openSync) as Layer["openSync"],
    writeSync: ((fd: number, buffer: Uint8Array, offset: number, length: number) => {
      n++;
      if (dead) throw Object.assign(new Error("simulated kill"), { code: "EKILLED" });
      if (n === k) {
        dead = true;
        original.writeSync(fd, buffer, offset, Math.floor(length / 2)); // a torn write, then death
        throw Object.assign(new Error(`simulated kill inside write #${n}`), { code: "EKILLED" });
      }
      return original.writeSync(fd, buffer, offset, length);
    }) as Layer["writeSync"],
    fsyncSync: gate("fsyncSync", original.fsyncSync) as Layer["fsyncSync"],
    closeSync: ((fd: number) => (dead ? original.closeSync(fd) : gate("closeSync", original.closeSync)(fd))) as Layer["closeSync"],
    renameSync: gate("renameSync", original.renameSync) as Layer["renameSync"],
    ftruncateSync: gate("ftruncateSync", original.ftruncateSync) as Layer["ftruncateSync"],
  });
  return { count: () => n };
}
