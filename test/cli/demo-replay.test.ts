// The quick demo and its replay cache (lib/cli/demo.ts, lib/experiment/replay-cache.ts): the committed cache
// is only ever copied — a replay through the working copy answers every stored call, computes none,
// and leaves the committed bytes and folder untouched; --save-cache writes a compact rollback-journal
// file; the quick demo uses the tiny models even when the real GGUF exists; --full says what it runs
// and how long before starting, and refuses missing models in one line.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import { demoPlan, REPLAY_CACHE } from "../../lib/report/demo.ts";
import { quickConfig, TINY_CACHE } from "../../lib/experiment/quick-config.ts";
import { cacheRows, saveReplayCache, stageReplayCache } from "../../lib/experiment/replay-cache.ts";
import { parseConfig } from "../../lib/experiment/config.ts";
import { CallCache } from "../../lib/llm/call-cache.ts";
import { ScriptedBackend } from "../llm/fixtures/scripted-backend.ts";
import { tempDir } from "../helpers/run-fixture.ts";

const root = tempDir("demo-replay");
afterAll(() => rmSync(root, { recursive: true, force: true }));

const PROMPTS = ["p1", "p2", "p3"];

async function fill(path: string, prompts: string[]): Promise<ScriptedBackend> {
  const inner = new ScriptedBackend();
  const cache = new CallCache(inner, path);
  for (const prompt of prompts) await cache.generate({ prompt, maxOutputTokens: 16 });
  await cache.close();
  return inner;
}

describe("replay cache", () => {
  it("save → stage → replay: every call answered from the committed outputs, committed file byte-identical", async () => {
    const working = join(root, "a", "runs", "working.sqlite");
    const committedDir = join(root, "a", "results");
    const committed = join(committedDir, "replay.sqlite");
    await fill(working, PROMPTS);
    expect(saveReplayCache(working, committed)).toBe(3);
    expect(readdirSync(committedDir)).toEqual(["replay.sqlite"]);
    const bytes = readFileSync(committed);
    // Rollback journal (header bytes 18/19 = 1), so even a read-only open needs no -wal/-shm.
    expect([bytes[18], bytes[19]]).toEqual([1, 1]);

    rmSync(working);
    writeFileSync(working + "-wal", "stale"); // a stale WAL of an old working copy is discarded
    expect(stageReplayCache(committed, working)).toBe(true);
    expect(existsSync(working + "-wal")).toBe(false);
    const inner = new ScriptedBackend();
    const replay = new CallCache(inner, working);
    for (const prompt of PROMPTS) expect((await replay.generate({ prompt, maxOutputTokens: 16 })).cached).toBe(true);
    await replay.generate({ prompt: "new", maxOutputTokens: 16 }); // a miss is computed into the working copy only
    await replay.close();
    expect(inner.calls).toBe(1);
    expect(cacheRows(working)).toBe(4);
    expect(cacheRows(committed)).toBe(3);
    expect(Buffer.compare(readFileSync(committed), bytes)).toBe(0);
    expect(readdirSync(committedDir)).toEqual(["replay.sqlite"]);
  });

  it("staging without a committed file leaves the working cache alone; saving without a working cache is one line", async () => {
    const working = join(root, "b", "working.sqlite");
    await fill(working, ["x"]);
    expect(stageReplayCache(join(root, "b", "absent.sqlite"), working)).toBe(false);
    expect(cacheRows(working)).toBe(1);
    expect(() => saveReplayCache(join(root, "b", "nope.sqlite"), join(root, "b", "out.sqlite"))).toThrow(/nope\.sqlite does not exist; run `merit demo --fresh`/);
    expect(existsSync(join(root, "b", "out.sqlite"))).toBe(false);
  });

  it("the committed replay cache of the repository opens read-only and leaves no file beside it", () => {
    if (!existsSync(REPLAY_CACHE)) return; // before the first --save-cache
    const before = readdirSync("results").sort();
    expect(cacheRows(REPLAY_CACHE)).toBeGreaterThan(0);
    expect(readdirSync("results").sort()).toEqual(before);
  });
});

describe("quick and full demo", () => {
  const realModel = join(root, "Qwen.gguf");
  mkdirSync(root, { recursive: true });
  writeFileSync(realModel, "");
  const config = parseConfig({
    dataset: "spider",
    data_dir: "data/spider",
    initial_cache: "x.json",
    max_repair_steps: 7,
    subset: { rule: "initially_failed", initially_correct: 4 },
    model: { path: realModel },
    embedder: { path: realModel },
  });

  it("quick: the tiny models and the working replay cache even when the real GGUF exists", () => {
    const quick = quickConfig(config);
    expect(quick.model.path).toMatch(/tiny-random-qwen2\.5-instruct\.gguf$/);
    expect(quick.embedder.path).toMatch(/tiny-random-bert-bge\.gguf$/);
    expect(quick.call_cache).toBe(TINY_CACHE);
    expect(quick.subset).toEqual(config.subset);
  });

  it("the plan says what runs, the most model calls, and replay vs fresh", () => {
    const replay = demoPlan({ full: false, limit: 16, config: quickConfig(config), replayRows: 321 }).join("\n");
    // 12 failed × (7 repairs × 12 runs + 8 reflections × 3 reflexion runs) = 1,296 (the fresh demo made exactly 1,296).
    expect(replay).toMatch(/12 runs\) on up to 12 initially failed \+ 4 initially correct queries .*at most 1,296 model calls/);
    expect(replay).toMatch(/replay: 321 stored model calls from results\/demo-call-cache\.sqlite/);
    expect(demoPlan({ full: false, limit: 16, config: quickConfig(config), replayRows: null }).join("\n")).toMatch(/fresh: every model call computed/);
  });

  it("full: the real models, the call bound for 100 queries and an estimated time", () => {
    const plan = demoPlan({ full: true, limit: 100, config, replayRows: null }).join("\n");
    expect(plan).toContain(`model ${realModel}`);
    // 96 failed × (7 × 12 + 8 × 3) = 10,368 calls; at the assumed 20 s / 1 s per call: 57.6 h / 2.9 h.
    expect(plan).toMatch(/at most 10,368 model calls/);
    expect(plan).toMatch(/estimated time: up to ~58 h on a CPU, ~2\.9 h on one GPU/);
  });

  it("--full without the model file: one line naming it and `make models`, exit 2, nothing run", async () => {
    const file = join(root, "demo.json");
    writeFileSync(file, JSON.stringify({ dataset: "spider", data_dir: "data/spider", initial_cache: join(root, "init.json"), model: { path: join(root, "absent.gguf") } }));
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(["demo", "--full", "--config", file], { out: (l) => out.push(l), err: (l) => err.push(l) });
    expect(code).toBe(2);
    expect(out).toEqual([]);
    expect(err).toEqual([expect.stringMatching(/^merit demo: .*absent\.gguf is not present: run `make models` .* or drop --full for the quick demo$/)]);
    expect(existsSync(join(root, "init.json"))).toBe(false);
  });

  it("--save-cache with another flag is one usage line", async () => {
    const err: string[] = [];
    const code = await main(["demo", "--save-cache", "--fresh"], { out: () => {}, err: (l) => err.push(l) });
    expect(code).toBe(2);
    expect(err).toEqual([expect.stringMatching(/--save-cache takes no other flag \(got --fresh\)/)]);
  });
});
