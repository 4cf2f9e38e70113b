// Structured stream orders (lib/experiment/stream-order.ts structuredOrder, config `order`, METHOD.md §7):
// the shape of each kind, the seeded shuffle breaking ties, the config hash unchanged for `random`,
// and buildStream's --limit subset shared by every kind.
import { describe, expect, it } from "vitest";
import type { Dataset } from "../../lib/data/index.ts";
import { configHash, parseConfig } from "../../lib/experiment/config.ts";
import type { InitialCache } from "../../lib/experiment/initial-cache.ts";
import { buildStream } from "../../lib/experiment/stream.ts";
import { DIFFICULTY_RANK, DRIFT_BLOCKS, streamOrder, structuredOrder, type OrderedExample } from "../../lib/experiment/stream-order.ts";
import { MeritError } from "../../lib/errors.ts";

// 40 examples over 8 databases of unequal size, Spider hardness levels plus a few "unknown"
const LEVELS = ["easy", "medium", "hard", "extra", "unknown"];
const examples: OrderedExample[] = Array.from({ length: 40 }, (_, i) => ({ dbId: `db${(i * i) % 8}`, difficulty: LEVELS[(i * 7) % 5] }));
const seeds = [0, 1, 2];

const isPermutation = (order: number[]) => expect([...order].sort((a, b) => a - b)).toEqual(examples.map((_, i) => i));
/** Indices in the seed's random order restricted to `keep`: the tie-break every structured kind must respect. */
const randomWithin = (seed: number, keep: (i: number) => boolean) => streamOrder(examples.length, seed).filter(keep);
/** Databases in the order of their first query in the seed's random order. */
const dbsByFirstSeen = (seed: number) => [...new Set(streamOrder(examples.length, seed).map((i) => examples[i].dbId))];

describe("structured stream orders", () => {
  it("random is the CPython shuffle", () => {
    for (const seed of seeds) expect(structuredOrder(examples, seed)).toEqual(streamOrder(examples.length, seed));
  });

  it("by_database: each database one contiguous block, databases by first appearance, the shuffle within", () => {
    for (const seed of seeds) {
      const order = structuredOrder(examples, seed, "by_database");
      isPermutation(order);
      const dbs = order.map((i) => examples[i].dbId);
      const blocks = dbs.filter((db, p) => p === 0 || dbs[p - 1] !== db);
      expect(blocks).toEqual(dbsByFirstSeen(seed));
      for (const db of blocks) expect(order.filter((i) => examples[i].dbId === db)).toEqual(randomWithin(seed, (i) => examples[i].dbId === db));
    }
  });

  it("easy_to_hard and hard_to_easy: monotone in level, unknown last, the shuffle within a level", () => {
    for (const seed of seeds) {
      for (const kind of ["easy_to_hard", "hard_to_easy"] as const) {
        const order = structuredOrder(examples, seed, kind);
        isPermutation(order);
        const level = order.map((i) => DIFFICULTY_RANK[examples[i].difficulty] ?? Infinity);
        const known = level.filter((l) => l !== Infinity);
        expect(level.slice(known.length).every((l) => l === Infinity)).toBe(true);
        for (let p = 1; p < known.length; p++) expect(kind === "easy_to_hard" ? known[p] >= known[p - 1] : known[p] <= known[p - 1]).toBe(true);
        for (const d of LEVELS) expect(order.filter((i) => examples[i].difficulty === d)).toEqual(randomWithin(seed, (i) => examples[i].difficulty === d));
      }
    }
    // BIRD's levels
    const bird = ["challenging", "simple", "moderate", "simple"].map((difficulty) => ({ dbId: "a", difficulty }));
    expect(structuredOrder(bird, 0, "easy_to_hard").map((i) => bird[i].difficulty)).toEqual(["simple", "simple", "moderate", "challenging"]);
    expect(() => structuredOrder([{ dbId: "a", difficulty: "unknown" }], 0, "easy_to_hard")).toThrow(MeritError);
  });

  it("drift: databases in DRIFT_BLOCKS consecutive blocks, each block's queries interleaved in shuffle order", () => {
    for (const seed of seeds) {
      const order = structuredOrder(examples, seed, "drift");
      isPermutation(order);
      // the block of each database, as documented: ⌊4 · queries before it / n⌋ over first-seen order
      const block = new Map<string, number>();
      let before = 0;
      for (const db of dbsByFirstSeen(seed)) {
        block.set(db, Math.floor((DRIFT_BLOCKS * before) / examples.length));
        before += examples.filter((e) => e.dbId === db).length;
      }
      const blocks = order.map((i) => block.get(examples[i].dbId)!);
      for (let p = 1; p < blocks.length; p++) expect(blocks[p]).toBeGreaterThanOrEqual(blocks[p - 1]);
      expect(new Set(blocks).size).toBeGreaterThan(1);
      for (const b of new Set(blocks)) expect(order.filter((i) => block.get(examples[i].dbId) === b)).toEqual(randomWithin(seed, (i) => block.get(examples[i].dbId) === b));
    }
  });

  it("each seed is its own order within the structure", () => {
    for (const kind of ["by_database", "easy_to_hard", "hard_to_easy", "drift"] as const) {
      expect(structuredOrder(examples, 0, kind)).not.toEqual(structuredOrder(examples, 1, kind));
      expect(structuredOrder(examples, 5, kind)).toEqual(structuredOrder(examples, 5, kind));
    }
  });
});

describe("config order and buildStream", () => {
  const base = { dataset: "spider", data_dir: "data/spider", initial_cache: "c.jsonl" };
  it("order random is left out of the config, so its hash is that of a config without it", () => {
    const plain = parseConfig(base);
    const random = parseConfig({ ...base, order: "random" });
    expect("order" in random).toBe(false);
    expect(configHash(random)).toBe(configHash(plain));
    const clustered = parseConfig({ ...base, order: "by_database" });
    expect(clustered.order).toBe("by_database");
    expect(configHash(clustered)).not.toBe(configHash(plain));
    expect(() => parseConfig({ ...base, order: "alphabetical" })).toThrow(/order/);
  });

  it("every kind visits the same --limit subset (chosen on the seed-0 random stream)", () => {
    const ex = examples.map((e, i) => ({ id: String(i), sourceIndex: i, dbId: e.dbId, question: "q", evidence: "", goldSql: "SELECT 1", difficulty: e.difficulty }));
    const dataset = { examples: ex, databases: new Map(ex.map((e) => [e.dbId, {}])) } as unknown as Dataset;
    const cache = { records: ex.map((e) => ({ query_id: e.id, execution_status: "OK", oracle_correct: false })) } as unknown as InitialCache;
    const subset = new Set(buildStream(dataset, cache, 0, 12).map((s) => s.example.id));
    for (const kind of ["random", "by_database", "easy_to_hard", "hard_to_easy", "drift"] as const) {
      for (const seed of seeds) {
        const stream = buildStream(dataset, cache, seed, 12, undefined, kind);
        expect(new Set(stream.map((s) => s.example.id))).toEqual(subset);
        expect(stream.map((s) => s.position)).toEqual(stream.map((_, p) => p));
        // the structure holds within the subset: the full order restricted to it
        const full = buildStream(dataset, cache, seed, undefined, undefined, kind).map((s) => s.example.id);
        expect(stream.map((s) => s.example.id)).toEqual(full.filter((id) => subset.has(id)));
      }
    }
  });
});
