// Experiment runs, crash safety (METHOD.md §11; lib/experiment/run.ts): `merit run` (tiny Qwen, tiny
// BGE, merit, real Spider data) is SIGKILLed at seeded points — right after a trajectory commit, in
// the middle of a memory write, in the middle of an LLM call — and resumed with --resume until it
// completes. The finished directory must equal an uninterrupted run byte for byte (all files except
// manifest.json and stdout.log). Both runs compute every LLM call from scratch, concurrently: the
// config names the call cache by a RELATIVE path (config.json must be identical) and each run's
// child process has its own working directory, hence its own cache file. Resuming with other
// inputs, or reusing a directory without --resume, is refused (in process, no model needed).
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Dataset } from "../../lib/data/index.ts";
import { loadConfig } from "../../lib/experiment/config.ts";
import { readInitialCache } from "../../lib/experiment/initial-cache.ts";
import { runExperiment } from "../../lib/experiment/run.ts";
import type { Oracle } from "../../lib/oracle/oracle.ts";
import { getMethod } from "../../lib/methods/index.ts";
import { createRetriever } from "../../lib/retrieval/retriever.ts";
import { HashedEmbedder } from "../helpers/hashed-embedder.ts";
import { ScriptedBackend } from "../helpers/scripted-backend.ts";
import { cacheFromPredictionsFile, DEEPSEEK_PREDICTIONS, loadSpider, SPIDER_DIR, spiderOracle, tempDir, TINY_BGE, TINY_QWEN } from "../helpers/run-fixture.ts";
import { lineCount, listFiles, memoryWriteInFlight, runCli, type ChildOutcome } from "../helpers/killable-run.ts";
import { mulberry32 } from "../helpers/mulberry32.ts";
import { budget } from "../helpers/budget.ts";

// Stream seed 4 over the --limit 24 subset (the first 24 queries of the seed-0 stream): 4 initial
// failures (positions 3, 6, 8, 15) ⇒ 28 repair calls and 4 negative memory entries, the later
// failures retrieving the earlier ones.
const SEED = "4";
const LIMIT = "24";
const EXCLUDED = new Set(["manifest.json", "stdout.log"]);


let root: string;
let configPath: string;
let reference: string;
let resumed: string;
let dataset: Dataset;
let oracle: Oracle;
const kills: { point: string; lines: number; memoryInFlight: string[]; outcome: ChildOutcome }[] = [];

const args = (out: string, extra: string[] = []) => ["run", "--config", configPath, "--method", "merit", "--seed", SEED, "--limit", LIMIT, "--out", out, ...extra];

/** Kills the run at three seeded points, then resumes it until it completes. */
async function interruptedRun(cwd: string): Promise<void> {
  const traj = join(resumed, "trajectories.jsonl");
  const random = mulberry32(20261130);
  // Commit lines 4 and 9 are failed episodes (positions 3 and 8): a kill right after them lands
  // between the trajectory commit and its memory insertion, which the resume must replay.
  const k1 = random() < 0.5 ? 4 : 9;
  const delay = 20 + Math.floor(random() * 300);
  const schedule: { point: string; killWhen: (base: number) => () => boolean; delayMs?: number }[] = [
    { point: `right after trajectory ${k1} is committed`, killWhen: () => () => lineCount(traj) >= k1 },
    { point: "in the middle of a memory write", killWhen: () => () => memoryWriteInFlight(resumed).length > 0 },
    { point: `${delay} ms after the next trajectory is committed`, killWhen: (base) => () => lineCount(traj) > base, delayMs: delay },
  ];
  let first = true;
  for (const step of schedule) {
    const outcome = await runCli(args(resumed, first ? [] : ["--resume"]), { killWhen: step.killWhen(lineCount(traj)), delayMs: step.delayMs, pollMs: 1, cwd });
    first = false;
    kills.push({ point: step.point, lines: lineCount(traj), memoryInFlight: memoryWriteInFlight(resumed), outcome });
    if (!outcome.killed) expect(outcome.code, outcome.stderr).toBe(0);
  }
  for (let i = 0; i < 5 && JSON.parse(readFileSync(join(resumed, "manifest.json"), "utf8")).status !== "completed"; i++) {
    const outcome = await runCli(args(resumed, ["--resume"]), { cwd });
    expect(outcome.code, outcome.stderr).toBe(0);
  }
}

beforeAll(async () => {
  root = tempDir("run-resume");
  dataset = await loadSpider();
  oracle = spiderOracle(dataset, 2);
  const cachePath = join(root, "initial.json");
  await cacheFromPredictionsFile(dataset, oracle, DEEPSEEK_PREDICTIONS, cachePath);
  configPath = join(root, "config.json");
  writeFileSync(
    configPath,
    JSON.stringify({
      dataset: "spider",
      data_dir: SPIDER_DIR,
      initial_cache: cachePath,
      call_cache: "llm-calls.sqlite", // relative: one cache file per working directory
      model: { backend: "llama", path: TINY_QWEN, gpu: false, threads: 1 },
      embedder: { backend: "llama", path: TINY_BGE },
      decoding: { max_output_tokens: 16 },
    }),
  );
  const [refCwd, resumedCwd] = ["cwd-reference", "cwd-resumed"].map((d) => join(root, d));
  for (const d of [refCwd, resumedCwd]) mkdirSync(d);
  reference = join(root, "reference");
  resumed = join(root, "resumed");
  const [ref] = await Promise.all([runCli(args(reference), { cwd: refCwd }), interruptedRun(resumedCwd)]);
  expect(ref.code, ref.stderr).toBe(0);
}, budget(600_000));

afterAll(async () => {
  await oracle?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe("merit run survives kill -9 and resumes to the same bytes", () => {
  it("was actually killed mid-run at least twice (kill points recorded)", () => {
    const hits = kills.filter((k) => k.outcome.killed);
    // The memory-write kill can miss its window (the write may finish before the signal lands); the
    // commit-point and mid-call kills cannot.
    expect(hits.length, JSON.stringify(kills.map((k) => ({ point: k.point, lines: k.lines, inFlight: k.memoryInFlight, killed: k.outcome.killed })))).toBeGreaterThanOrEqual(2);
    expect(kills[0].outcome.killed).toBe(true);
    expect(kills[2].outcome.killed || kills[2].lines === Number(LIMIT)).toBe(true);
  });

  it("finishes with exactly the reference run's files, byte for byte (except manifest.json and stdout.log)", () => {
    const files = listFiles(reference).filter((f) => !EXCLUDED.has(f));
    expect(listFiles(resumed).filter((f) => !EXCLUDED.has(f))).toEqual(files);
    expect(files).toEqual(
      expect.arrayContaining(["config.json", "metrics.json", "prompts.jsonl", "retrieval_log.jsonl", "trajectories.jsonl", join("memory", "memory_negative.jsonl"), join("memory", "memory_vectors.f32")]),
    );
    for (const f of files) expect(readFileSync(join(resumed, f)).equals(readFileSync(join(reference, f))), f).toBe(true);
    expect(lineCount(join(reference, "trajectories.jsonl"))).toBe(Number(LIMIT));
    expect(lineCount(join(reference, "memory", "memory_negative.jsonl"))).toBe(4);
  });

  it("marks both runs completed and logs the resumption", () => {
    for (const dir of [reference, resumed]) expect(JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")).status).toBe("completed");
    expect(readFileSync(join(resumed, "stdout.log"), "utf8")).toMatch(/resuming .* at stream position \d+\/24/);
  });
});

describe("a run directory cannot mix runs", () => {
  const snapshot = (dir: string) => listFiles(dir).filter((f) => !EXCLUDED.has(f)).map((f) => readFileSync(join(dir, f)).toString("base64"));

  /** runExperiment into the reference directory with a never-called backend (the check comes first). */
  async function rerun(method: string, seed: number, resume: boolean): Promise<unknown> {
    const config = loadConfig(configPath);
    const backend = new ScriptedBackend(new Map());
    try {
      await runExperiment({
        spec: { config, method, seed, limit: Number(LIMIT) },
        method: getMethod(method),
        dataset,
        initialCache: readInitialCache(config.initial_cache, dataset),
        outDir: reference,
        resume,
        services: { backend, oracle, embedder: new HashedEmbedder(32), retriever: createRetriever() },
      });
    } catch (error) {
      expect(backend.calls).toEqual([]);
      return error;
    }
    throw new Error("runExperiment did not refuse");
  }

  it("refuses an existing run directory without --resume, leaving it untouched", async () => {
    const before = snapshot(reference);
    const error = await rerun("merit", Number(SEED), false);
    expect(String(error)).toMatch(/already holds a run; pass --resume to continue it or choose another --out/);
    expect(snapshot(reference)).toEqual(before);
  });

  it("refuses --resume with a different seed", async () => {
    const before = snapshot(reference);
    expect(String(await rerun("merit", 1, true))).toMatch(/holds a run with a different seed \(4 in its config\.json, 1 now\); resume it with the same inputs or choose another --out/);
    expect(snapshot(reference)).toEqual(before);
  });

  it("refuses --resume with a different method", async () => {
    expect(String(await rerun("iterative", Number(SEED), true))).toMatch(/holds a run with a different method \("merit" in its config\.json, "iterative" now\)/);
  });
});
