// The `--limit` selection rules (lib/experiment/stream.ts, config `subset`): `first` keeps the first
// N of the seed-0 stream; `initially_failed` keeps the first N − C initially failed queries of that
// stream plus its first C initially correct ones; every seed visits the same queries in its own
// order, and a run with the rule in its config covers exactly those queries.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Dataset } from "../../lib/data/index.ts";
import { configHash, parseConfig } from "../../lib/experiment/config.ts";
import type { InitialCache } from "../../lib/experiment/initial-cache.ts";
import { runExperiment } from "../../lib/experiment/run.ts";
import { buildStream } from "../../lib/experiment/stream.ts";
import type { ChatBackend } from "../../lib/llm/types.ts";
import type { Oracle } from "../../lib/oracle/oracle.ts";
import { getMethod } from "../../lib/methods/index.ts";
import { cacheFromChosenSql, loadSpider, readJsonl, SPIDER_DIR, spiderOracle, tempDir } from "../helpers/run-fixture.ts";
import { budget } from "../helpers/budget.ts";

let root: string;
let dataset: Dataset;
let oracle: Oracle;
let cache: InitialCache;
let cachePath: string;
/** The seed-0 stream of the whole dataset, and which of its queries are initially correct. */
let seed0: string[];
let correctIds: Set<string>;

beforeAll(async () => {
  root = tempDir("stream-subset");
  dataset = await loadSpider();
  oracle = spiderOracle(dataset);
  // Gold SQL (initially correct) for every 5th query of the seed-0 stream's first 60; "" (an
  // execution error, initially failed) for every other query.
  const full = buildStream(dataset, await emptyCache(), 0).map((s) => s.example);
  const gold = new Map(full.slice(0, 60).filter((_, i) => i % 5 === 2).map((e) => [e.id, e.goldSql]));
  ({ cache, path: cachePath } = await cacheFromChosenSql(dataset, oracle, gold, root));
  seed0 = buildStream(dataset, cache, 0).map((s) => s.example.id);
  correctIds = new Set(cache.records.filter((r) => r.oracle_correct === true).map((r) => r.query_id));
}, budget(120_000));

afterAll(async () => {
  await oracle?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

/** A first cache (every query "") only to learn the seed-0 order before choosing gold queries. */
async function emptyCache(): Promise<InitialCache> {
  const dir = join(tempDir("stream-subset-order"));
  try {
    return (await cacheFromChosenSql(dataset, oracle, new Map(), dir)).cache;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("subset rules", () => {
  it("first: the first N of the seed-0 stream (the default)", () => {
    expect(buildStream(dataset, cache, 0, 8).map((s) => s.example.id)).toEqual(seed0.slice(0, 8));
    expect(buildStream(dataset, cache, 0, 8, { rule: "first", initially_correct: 5 }).map((s) => s.example.id)).toEqual(seed0.slice(0, 8));
  });

  it("initially_failed: the first N − C failed and the first C correct queries of the seed-0 stream, in its order", () => {
    const ids = buildStream(dataset, cache, 0, 10, { rule: "initially_failed", initially_correct: 3 }).map((s) => s.example.id);
    const failed = seed0.filter((id) => !correctIds.has(id)).slice(0, 7);
    const correct = seed0.filter((id) => correctIds.has(id)).slice(0, 3);
    expect(ids).toHaveLength(10);
    expect(new Set(ids)).toEqual(new Set([...failed, ...correct]));
    expect(ids).toEqual(seed0.filter((id) => ids.includes(id))); // seed-0 order kept
    expect(ids.filter((id) => correctIds.has(id))).toHaveLength(3);
    // Not the first 10 of the stream: that slice holds 2 correct queries (stream indices 2 and 7).
    expect(ids).not.toEqual(seed0.slice(0, 10));
  });

  it("initially_failed with C ≥ N keeps only correct queries; C = 0 only failed ones", () => {
    const allCorrect = buildStream(dataset, cache, 0, 4, { rule: "initially_failed", initially_correct: 9 });
    expect(allCorrect.every((s) => s.initial.oracle_correct === true)).toBe(true);
    expect(allCorrect).toHaveLength(4);
    const noneCorrect = buildStream(dataset, cache, 0, 4, { rule: "initially_failed", initially_correct: 0 });
    expect(noneCorrect.every((s) => s.initial.oracle_correct === false)).toBe(true);
  });

  it("every seed visits the same selected queries in its own order, positions renumbered", () => {
    const rule = { rule: "initially_failed", initially_correct: 2 } as const;
    const base = buildStream(dataset, cache, 0, 9, rule).map((s) => s.example.id);
    for (const seed of [1, 2]) {
      const stream = buildStream(dataset, cache, seed, 9, rule);
      expect(new Set(stream.map((s) => s.example.id))).toEqual(new Set(base));
      expect(stream.map((s) => s.position)).toEqual([...Array(9).keys()]);
      const order = buildStream(dataset, cache, seed).map((s) => s.example.id);
      expect(stream.map((s) => s.example.id)).toEqual(order.filter((id) => base.includes(id)));
    }
  });

  it("without a limit the rule keeps the whole stream", () => {
    expect(buildStream(dataset, cache, 1, undefined, { rule: "initially_failed", initially_correct: 1 })).toHaveLength(seed0.length);
  });
});

describe("the config field", () => {
  const base = { dataset: "spider", data_dir: "data/spider", initial_cache: "x.json" };

  it("absent leaves the config (and its hash) as before; present is validated strictly", () => {
    const plain = parseConfig(base);
    expect("subset" in plain).toBe(false);
    expect(configHash(parseConfig({ ...base, subset: { rule: "first" } }))).not.toBe(configHash(plain));
    expect(parseConfig({ ...base, subset: { rule: "initially_failed" } }).subset).toEqual({ rule: "initially_failed", initially_correct: 0 });
    expect(() => parseConfig({ ...base, subset: { rule: "failed_first" } }, "c.json")).toThrow(/c\.json: invalid config — subset\.rule/);
    expect(() => parseConfig({ ...base, subset: { rule: "first", extra: 1 } }, "c.json")).toThrow(/subset/);
  });

  it("a run with the rule in its config covers exactly the selected queries", async () => {
    const config = parseConfig({ ...base, data_dir: SPIDER_DIR, initial_cache: cachePath, subset: { rule: "initially_failed", initially_correct: 3 } });
    const refuse: ChatBackend = {
      identity: { kind: "none", model: "none", modelHash: "none", params: {} },
      generate: () => Promise.reject(new Error("zeroshot makes no model call")),
      close: async () => {},
    };
    const outDir = join(root, "zeroshot-s1");
    await runExperiment({ spec: { config, method: "zeroshot", seed: 1, limit: 5 }, method: getMethod("zeroshot"), dataset, initialCache: cache, outDir, services: { backend: refuse, oracle } });
    const ids = readJsonl<{ query_id: string }>(join(outDir, "trajectories.jsonl")).map((t) => t.query_id);
    expect(ids).toEqual(buildStream(dataset, cache, 1, 5, config.subset).map((s) => s.example.id));
    expect(ids.filter((id) => correctIds.has(id))).toHaveLength(3); // the first 5 of the stream hold 1
  });
});
