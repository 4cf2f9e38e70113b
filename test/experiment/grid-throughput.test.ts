// `merit grid` in throughput mode end to end (issue 16 §3; README "Exactness contract"): the same
// user command with `"model": {"mode": "throughput"}` runs every stream through the one batched
// llama.cpp context, records the mode in each run's identity (config.json) and its exactness contract
// in the manifest, and — on CPU with the tiny model — gives the trajectories deterministic mode gives
// (the batched decoder's stress test bounds where they could differ: near-tied logits only).
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gridCommand } from "../../lib/cli/run.ts";
import { SPIDER_DIR, tempDir, TINY_BGE, TINY_QWEN, writeLlama3InitialCache } from "../helpers/run-fixture.ts";
import { budget } from "../helpers/budget.ts";

const root = tempDir("grid-throughput");
afterAll(() => rmSync(root, { recursive: true, force: true }));

function config(mode: string, initialCache: string): string {
  const path = join(root, `${mode}.json`);
  writeFileSync(path, JSON.stringify({
    dataset: "spider",
    data_dir: SPIDER_DIR,
    initial_cache: initialCache,
    call_cache: join(root, `${mode}.sqlite`),
    protocol: "merit",
    max_repair_steps: 2,
    model: { backend: "llama", path: TINY_QWEN, threads: 1, mode },
    embedder: { backend: "llama", path: TINY_BGE },
  }));
  return path;
}

describe("merit grid with model.mode throughput", () => {
  let initialCache: string;
  beforeAll(async () => {
    initialCache = join(root, "initial.json");
    await writeLlama3InitialCache(initialCache);
  }, budget(120_000));

  it("runs, records the mode and the contract, and matches deterministic mode on CPU", async () => {
    const args = ["--methods", "iterative,merit", "--seeds", "0,1", "--limit", "4"];
    const err: string[] = [];
    const io = { out: () => {}, err: (l: string) => err.push(l) };
    expect(await gridCommand.run(["--config", config("throughput", initialCache), ...args, "--out", join(root, "throughput")], io)).toBe(0);
    expect(await gridCommand.run(["--config", config("deterministic", initialCache), ...args, "--out", join(root, "deterministic")], io)).toBe(0);
    for (const run of ["iterative-s0", "iterative-s1", "merit-s0", "merit-s1"]) {
      const identity = JSON.parse(readFileSync(join(root, "throughput", run, "config.json"), "utf8"));
      expect(identity.config.model.mode).toBe("throughput");
      expect(JSON.parse(readFileSync(join(root, "deterministic", run, "config.json"), "utf8")).config.model.mode).toBeUndefined();
      expect(String(JSON.parse(readFileSync(join(root, "throughput", run, "manifest.json"), "utf8")).exactness)).toMatch(/throughput/);
      const lines = (mode: string) => readFileSync(join(root, mode, run, "trajectories.jsonl"), "utf8");
      expect(lines("throughput").split("\n").filter(Boolean)).toHaveLength(4);
      expect(lines("throughput"), run).toBe(lines("deterministic"));
    }
  }, budget(600_000));
});
