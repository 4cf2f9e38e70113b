// Tests lib/experiment/grid.ts: stream planning, the refusals before any model loads, and the library
// grid reporting only through its callbacks, with run directories byte-identical to `merit grid`'s.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gridCommand } from "../../lib/cli/run.ts";
import { loadConfig } from "../../lib/experiment/config.ts";
import { checkStreams, planStreams, runGrid, streamDirName, type GridProgress } from "../../lib/experiment/grid.ts";
import { RUN_FILES, runFile } from "../../lib/experiment/run-dir.ts";
import { SPIDER_DIR, tempDir, TINY_BGE, TINY_QWEN, writeLlama3InitialCache } from "../helpers/run-fixture.ts";
import { budget } from "../helpers/budget.ts";

const root = tempDir("grid-lib");
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("planStreams / checkStreams", () => {
  it("plans methods outer, seeds inner, each in root/<method>-s<seed>", () => {
    expect(streamDirName("merit", 2)).toBe("merit-s2");
    expect(planStreams(["iterative", "merit"], [0, 1], "runs/x")).toEqual([
      { method: "iterative", seed: 0, outDir: join("runs/x", "iterative-s0") },
      { method: "iterative", seed: 1, outDir: join("runs/x", "iterative-s1") },
      { method: "merit", seed: 0, outDir: join("runs/x", "merit-s0") },
      { method: "merit", seed: 1, outDir: join("runs/x", "merit-s1") },
    ]);
  });

  it("refuses an unknown method with the nearest name, a stream asked for twice, and a shared folder", () => {
    expect(() => checkStreams([{ method: "mreit", seed: 0, outDir: "a" }])).toThrow(/merit/);
    expect(() => checkStreams([{ method: "merit", seed: 0, outDir: "a" }, { method: "merit", seed: 0, outDir: "b" }])).toThrow(/merit seed 0 is asked for twice/);
    expect(() => checkStreams([{ method: "merit", seed: 0, outDir: "a" }, { method: "iterative", seed: 0, outDir: "./a" }])).toThrow(/would share the run directory/);
  });
});

describe("runGrid (library)", () => {
  let configFile: string;
  beforeAll(async () => {
    const initialCache = join(root, "initial.json");
    await writeLlama3InitialCache(initialCache);
    configFile = join(root, "config.json");
    const config = {
      dataset: "spider",
      data_dir: SPIDER_DIR,
      initial_cache: initialCache,
      call_cache: join(root, "calls.sqlite"),
      protocol: "merit",
      max_repair_steps: 1,
      model: { backend: "llama", path: TINY_QWEN, threads: 1 },
      embedder: { backend: "llama", path: TINY_BGE },
      decoding: { max_output_tokens: 16 },
    };
    writeFileSync(configFile, JSON.stringify(config, null, 2));
  }, budget(120_000));

  it("reports through its callbacks only and writes what `merit grid` writes", async () => {
    const config = loadConfig(configFile);
    const streams = planStreams(["iterative", "merit"], [0], join(root, "lib"));
    const log: string[] = [];
    const runLog: string[] = [];
    const progress: GridProgress[] = [];
    const events: string[] = [];
    const stderr = process.stderr.write;
    let printed = "";
    process.stderr.write = ((chunk: string | Uint8Array) => ((printed += String(chunk)), true)) as typeof process.stderr.write;
    let results: Awaited<ReturnType<typeof runGrid>>;
    try {
      results = await runGrid({ ...config, model: { ...config.model, sequences: 2 } }, streams, {
        limit: 2,
        log: (line) => (log.push(line), events.push("log")),
        runLog: (line) => runLog.push(line),
        onProgress: (p) => progress.push(p),
        onFinished: () => events.push("finished"),
      });
    } finally {
      process.stderr.write = stderr;
    }
    // (the llama.cpp backend announces its mode itself; the grid's progress and status lines never reach stderr)
    expect(printed).not.toMatch(/episodes |LLM calls|completed |config [0-9a-f]{12}|\x1b\[/);
    expect(results.map((r) => r.stream)).toEqual(streams);
    expect(results.map((r) => r.result.metrics.total)).toEqual([2, 2]);
    expect(log.slice(0, 2)).toEqual(["warning: no database for wta_1 (62); those queries are dropped from the stream", expect.stringMatching(/^config [0-9a-f]{12}, spider, K=1, protocol merit, initial cache /)]);
    expect(log[log.length - 1]).toMatch(/^LLM calls: \d+ computed, \d+ from the call cache/);
    expect(log[log.length - 2]).toMatch(/^embeddings: \d+ computed, \d+ from the embedding cache/); // merit asked for the embedder
    expect(events.slice(-3)).toEqual(["finished", "log", "log"]);
    expect(runLog.filter((l) => l.startsWith("completed "))).toHaveLength(2);
    for (const key of ["iterative/s0", "merit/s0"]) {
      const last = progress.filter((p) => p.key === key).at(-1)!;
      expect(last.progress).toMatchObject({ done: 2, total: 2 });
      expect(last.calls.computed + last.calls.hits).toBeGreaterThan(0);
    }

    // The CLI over the same config (its calls now come from the cache) writes the same files.
    const io = { out: () => undefined, err: () => undefined };
    expect(await gridCommand.run(["--config", configFile, "--methods", "iterative,merit", "--seeds", "0", "--limit", "2", "--sequences", "2", "--out", join(root, "cli")], io)).toBe(0);
    for (const s of streams) {
      const cli = join(root, "cli", streamDirName(s.method, s.seed));
      for (const file of ["trajectories", "prompts", "metrics", "config"] as const) {
        expect(readFileSync(runFile(cli, file), "utf8"), `${s.method} ${RUN_FILES[file]}`).toBe(readFileSync(runFile(s.outDir, file), "utf8"));
      }
    }
  }, budget(300_000));
});
