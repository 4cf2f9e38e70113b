// Tests `merit grid --shard i/n` and `merit cache merge` (lib/experiment/shard.ts, lib/llm/cache-merge.ts):
// two shards run on "two machines" (separate call caches) plus a merge give exactly the run directories
// and call cache of one process running the whole grid; merge refuses corrupt and conflicting rows.
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cacheCommand } from "../../lib/cli/cache.ts";
import { gridCommand } from "../../lib/cli/run.ts";
import { openCacheDatabase } from "../../lib/llm/call-cache.ts";
import { parseShard, selectShard } from "../../lib/experiment/shard.ts";
import { mergeCaches } from "../../lib/llm/cache-merge.ts";
import { SPIDER_DIR, tempDir, TINY_BGE, TINY_QWEN, writeLlama3InitialCache } from "../helpers/run-fixture.ts";
import { cacheRows, snapshot } from "../helpers/run-snapshot.ts";
import { budget } from "../helpers/budget.ts";

const root = tempDir("shard");
afterAll(() => rmSync(root, { recursive: true, force: true }));

function sink() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
}

function writeConfig(name: string, initialCache: string, callCache: string): string {
  const path = join(root, `${name}.json`);
  const config = {
    dataset: "spider",
    data_dir: SPIDER_DIR,
    initial_cache: initialCache,
    call_cache: callCache,
    protocol: "merit",
    max_repair_steps: 2,
    model: { backend: "llama", path: TINY_QWEN, threads: 1 },
    embedder: { backend: "llama", path: TINY_BGE },
  };
  writeFileSync(path, JSON.stringify(config, null, 2));
  return path;
}

describe("parseShard / selectShard", () => {
  it("deals streams round-robin and refuses malformed or out-of-range shards", () => {
    expect(selectShard([0, 1, 2, 3, 4], parseShard("0/2"))).toEqual([0, 2, 4]);
    expect(selectShard([0, 1, 2, 3, 4], parseShard("1/2"))).toEqual([1, 3]);
    expect(selectShard([0, 1], parseShard("2/3"))).toEqual([]);
    expect(() => parseShard("2/2")).toThrow(/0-based/);
    expect(() => parseShard("1-2")).toThrow(/i\/n/);
    expect(() => parseShard("0/0")).toThrow(/between 1/);
  });
});

describe("merit grid --shard + merit cache merge", () => {
  let initialCache: string;
  const args = ["--methods", "iterative,merit", "--seeds", "0,1", "--limit", "5"];
  beforeAll(async () => {
    initialCache = join(root, "initial.json");
    await writeLlama3InitialCache(initialCache);
  }, budget(120_000));

  it("two shards and a merged cache equal the one-process grid byte for byte", async () => {
    // One config for every "machine": each starts with no call cache at the configured path, and
    // its cache file is moved aside afterwards (as if copied back from that machine).
    const live = join(root, "live.sqlite");
    const config = writeConfig("grid", initialCache, live);
    const moveCache = (to: string) => {
      for (const suffix of ["-wal", "-shm"]) expect(existsSync(live + suffix), `${live}${suffix} left open`).toBe(false);
      renameSync(live, to);
    };
    const whole = sink();
    expect(await gridCommand.run(["--config", config, ...args, "--out", join(root, "whole")], whole.io)).toBe(0);
    expect(whole.out.some((l) => /\(initial (?!100\.00)/.test(l)), whole.out.join("\n")).toBe(true);
    moveCache(join(root, "whole.sqlite"));

    const shards = join(root, "shards");
    for (const i of [0, 1]) {
      const s = sink();
      expect(await gridCommand.run(["--config", config, ...args, "--out", shards, "--shard", `${i}/2`], s.io)).toBe(0);
      expect(s.err.some((l) => l.startsWith(`shard ${i}/2: 2 of 4 stream(s)`))).toBe(true);
      moveCache(join(root, `shard${i}.sqlite`));
    }
    expect(readdirSync(shards).sort()).toEqual(["iterative-s0", "iterative-s1", "merit-s0", "merit-s1"]);
    const a = snapshot(join(root, "whole"));
    const b = snapshot(shards);
    expect([...b.keys()]).toEqual([...a.keys()]);
    for (const [file, text] of a) expect(b.get(file), file).toBe(text);

    const m = sink();
    expect(await cacheCommand.run(["merge", join(root, "shard0.sqlite"), join(root, "shard1.sqlite"), "--into", join(root, "merged.sqlite")], m.io)).toBe(0);
    const wholeRows = cacheRows(join(root, "whole.sqlite"));
    expect(wholeRows.length).toBeGreaterThan(0);
    expect(cacheRows(join(root, "merged.sqlite"))).toEqual(wholeRows);
    // Merging again adds nothing.
    const again = mergeCaches([join(root, "shard0.sqlite"), join(root, "whole.sqlite")], join(root, "merged.sqlite"));
    expect(again.sources.every((s) => s.added === 0)).toBe(true);
    expect(again.rows).toBe(wholeRows.length);
  }, budget(600_000));

  it("refuses a corrupt source row and a conflicting output, leaving no new target behind", () => {
    const src = join(root, "whole.sqlite");
    const bad = join(root, "bad.sqlite");
    writeFileSync(bad, readFileSync(src));
    const db = openCacheDatabase(bad);
    const key = (db.prepare("SELECT key FROM calls ORDER BY key LIMIT 1").get() as { key: string }).key;
    db.prepare("UPDATE calls SET text = text || 'x' WHERE key = ?").run(key);
    db.close();
    const target = join(root, "never.sqlite");
    expect(() => mergeCaches([bad], target)).toThrow(/bad\.sqlite: row .* is corrupt \(row_hash/);
    expect(existsSync(target)).toBe(false);

    // Same key, different (but self-consistent) output: rewrite text and row hash together.
    const forged = join(root, "forged.sqlite");
    writeFileSync(forged, readFileSync(src));
    const f = openCacheDatabase(forged);
    const row = f.prepare("SELECT key, prompt_tokens, output_tokens, truncated_prompt_tokens FROM calls WHERE key = ?").get(key) as { key: string; prompt_tokens: number; output_tokens: number; truncated_prompt_tokens: number };
    return import("../../lib/llm/call-cache.ts").then(({ rowHash }) => {
      const text = "SELECT 'forged'";
      f.prepare("UPDATE calls SET text = ?, row_hash = ? WHERE key = ?").run(text, rowHash({ key, text, promptTokens: row.prompt_tokens, outputTokens: row.output_tokens, truncatedPromptTokens: row.truncated_prompt_tokens }), key);
      f.close();
      const merged = join(root, "merged.sqlite");
      const before = cacheRows(merged);
      expect(() => mergeCaches([forged], merged)).toThrow(/different output .* nothing was merged/);
      expect(cacheRows(merged)).toEqual(before);
    });
  });

  it("cache merge usage errors are one line", async () => {
    const s = sink();
    await expect(cacheCommand.run(["merge", "--into", join(root, "x.sqlite")], s.io)).rejects.toThrow(/at least one source/);
    await expect(cacheCommand.run(["merge", join(root, "whole.sqlite")], s.io)).rejects.toThrow(/--into/);
    await expect(cacheCommand.run(["merge", join(root, "nope.sqlite"), "--into", join(root, "y.sqlite")], s.io)).rejects.toThrow(/nope\.sqlite: call-cache file not found/);
  });
});
