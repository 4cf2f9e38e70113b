// Runs compared together must share every input but their method and seed (README "Reliability";
// lib/experiment/shared-inputs.ts, lib/analysis/run-alignment.ts `assertSharedInputs`): `merit
// report` refuses runs of one dataset whose config.json (without method and seed) or manifest
// (model, code, prompts, packages, …) differ, naming the field; and a grid shard run into an --out
// whose other runs were made with another config is refused before any of its streams writes.
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import { buildTrajectory, repairTrajectory } from "../analysis/build-trajectory.ts";
import { writeRunDir } from "../cli/run-dir-fixture.ts";
import { SPIDER_DIR, tempDir, TINY_BGE, TINY_QWEN, writeLlama3InitialCache } from "../helpers/run-fixture.ts";
import { budget } from "../helpers/budget.ts";

const root = tempDir("shared-inputs");
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function merit(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

const QWEN = { kind: "llama.cpp", model: "qwen.gguf", modelHash: "a".repeat(64) };

/** merit and iterative, seed 0, on three spider queries, in `dir`/<method>-s0. */
function writeRuns(dir: string): string[] {
  return ["merit", "iterative"].map((method) => {
    const lines = [buildTrajectory({ query_id: "0", attempts: ["SELECT 0"], statuses: ["CORRECT"], method, stream_seed: 0 }), repairTrajectory("1", 1, true, { method, stream_seed: 0 }), repairTrajectory("2", 2, method === "merit", { method, stream_seed: 0 })];
    return writeRunDir(join(dir, `${method}-s0`), lines, { backend: QWEN });
  });
}

function edit(file: string, change: (json: Record<string, any>) => void): void {
  const json = JSON.parse(readFileSync(file, "utf8"));
  change(json);
  writeFileSync(file, JSON.stringify(json, null, 2) + "\n");
}

describe("`merit report` refuses runs made with other inputs", () => {
  it("the same inputs: exit 0", async () => {
    const runs = writeRuns(join(root, "same"));
    const r = await merit(["report", ...runs, "--out", join(root, "report-same"), "--resamples", "100"]);
    expect(r.code, r.err.join("\n")).toBe(0);
  }, budget(60_000));

  it.each([
    ["another decoding config (max_output_tokens 16 vs 8)", (dir: string) => edit(join(dir, "config.json"), (c) => (c.config.decoding = { max_output_tokens: 8 })), /runs differ in config \(config\.json config\.decoding\.max_output_tokens\): .*merit-s0 \(merit, seed 0\) has 16 but .*iterative-s0 \(iterative, seed 0\) has 8; /],
    ["another model file (GGUF replaced at the same path)", (dir: string) => edit(join(dir, "manifest.json"), (m) => (m.backend.modelHash = "b".repeat(64))), /runs differ in model \(manifest\.json backend\.modelHash\): .*merit-s0 \(merit, seed 0\) has "a{64}" but .*iterative-s0 \(iterative, seed 0\) has "b{64}"/],
    ["another code version", (dir: string) => edit(join(dir, "manifest.json"), (m) => (m.code_hash = "other-code")), /runs differ in code version \(manifest\.json code_hash\)/],
    ["another --limit", (dir: string) => edit(join(dir, "config.json"), (c) => (c.limit = 3)), /runs differ in config \(config\.json limit\): .* has null but .* has 3/],
  ])("%s: one line naming the field, exit 2", async (name, change, message) => {
    const runs = writeRuns(join(root, name.replace(/\W+/g, "-")));
    for (const dir of runs) edit(join(dir, "config.json"), (c) => (c.config.decoding = { max_output_tokens: 16 }));
    change(runs[1]);
    const r = await merit(["report", ...runs, "--out", join(root, `report-${name.replace(/\W+/g, "-")}`)]);
    expect(r.code).toBe(2);
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toMatch(message);
  });

  it("a memoryless and a memory method differ in their embedder presence only: accepted", async () => {
    const runs = writeRuns(join(root, "embedder"));
    edit(join(runs[0], "manifest.json"), (m) => (m.embedder = { kind: "llama.cpp-embedding", model: "bge.gguf", modelHash: "c".repeat(64), params: {} }));
    const r = await merit(["report", ...runs, "--out", join(root, "report-embedder"), "--resamples", "100"]);
    expect(r.code, r.err.join("\n")).toBe(0);
  }, budget(60_000));
});

describe("`merit grid --shard` into an --out whose runs were made with another config", () => {
  let initialCache: string;
  const configFile = (tokens: number) => {
    const path = join(root, `grid-${tokens}.json`);
    const config = { dataset: "spider", data_dir: SPIDER_DIR, initial_cache: initialCache, call_cache: join(root, "calls.sqlite"), protocol: "merit", max_repair_steps: 1, decoding: { max_output_tokens: tokens }, model: { backend: "llama", path: TINY_QWEN, threads: 1 }, embedder: { backend: "llama", path: TINY_BGE } };
    writeFileSync(path, JSON.stringify(config, null, 2));
    return path;
  };
  beforeAll(async () => {
    initialCache = join(root, "initial.json");
    await writeLlama3InitialCache(initialCache);
  }, budget(120_000));

  it("shard 1/2 with max_output_tokens 8 after shard 0/2 with 16: one line naming the field, nothing written; with 16 it runs", async () => {
    const out = join(root, "shards");
    const args = ["--methods", "iterative,merit", "--seeds", "0", "--limit", "2", "--out", out];
    const first = await merit(["grid", "--config", configFile(16), ...args, "--shard", "0/2"]);
    expect(first.code, first.err.join("\n")).toBe(0);
    expect(readdirSync(out)).toEqual(["iterative-s0"]);
    const second = await merit(["grid", "--config", configFile(8), ...args, "--shard", "1/2"]);
    expect(second.code).toBe(2);
    const line = second.err.find((l) => l.startsWith("merit grid: "));
    expect(line).toMatch(/iterative-s0: holds a run made with another config \(config\.json config\.decoding\.max_output_tokens\): 16 there but 8 now; run this grid \(or shard\) with the inputs of the runs already in its --out, or give it its own --out$/);
    expect(existsSync(join(out, "merit-s0"))).toBe(false);
    const third = await merit(["grid", "--config", configFile(16), ...args, "--shard", "1/2"]);
    expect(third.code, third.err.join("\n")).toBe(0);
    expect(readdirSync(out).sort()).toEqual(["iterative-s0", "merit-s0"]);
  }, budget(300_000));
});
