// Tests examples/merit-rrf.ts, loaded through the plugin loader: the rrf ranker on a hand-computed
// pool (k = 60, ordinal channel ranks with entry-id tie-breaks) and `merit grid --plugin ...
// --methods merit_rrf` on a tiny slice with the tiny test models (manifest: method_parts, plugins).
import { createHash } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gridCommand } from "../lib/cli/run.ts";
import { getMethod, loadPlugins, RANKERS, type RankContext } from "../lib/methods/index.ts";
import { readJsonl, tempDir, writeTinyGridConfig } from "../test/helpers/run-fixture.ts";
import { budget } from "../test/helpers/budget.ts";

const PLUGIN = "examples/merit-rrf.ts";

/** A context over hand-given raw scores (rows 0..n-1). */
function contextOf(rows: { id: string; dense: number; bm25: number }[]): RankContext {
  return {
    queryId: "q",
    repairIteration: 1,
    errorType: "Syntax",
    typeFilterApplied: true,
    randomSeed: 42,
    denseScores: (asked) => ({ rows: asked, scores: asked.map((r) => rows[r].dense) }),
    bm25Scores: (asked) => asked.map((r) => rows[r].bm25),
    hasType: () => true,
    entryId: (r) => rows[r].id,
    queryText: "q",
    queryVector: () => {
      throw new Error("the rrf ranker reads no vector");
    },
    vector: () => {
      throw new Error("the rrf ranker reads no vector");
    },
    entry: () => {
      throw new Error("the rrf ranker reads no entry");
    },
  };
}

describe("the rrf ranker", () => {
  beforeAll(async () => {
    await loadPlugins([PLUGIN]);
  });

  it("fuses the channel ranks: 1/(60 + rank_dense) + 1/(60 + rank_bm25), top `limit` kept", () => {
    const ranker = RANKERS.get("rrf").build({ k: 60 });
    // dense ranks a 1, b 2, c 3; BM25 ranks b 1, c 2, a 3.
    const rows = [
      { id: "a", dense: 0.9, bm25: 0.1 },
      { id: "b", dense: 0.5, bm25: 0.8 },
      { id: "c", dense: 0.1, bm25: 0.5 },
    ];
    const ranked = ranker.rank({ key: "positive", polarity: "positive", limit: 2, candidates: [0, 1, 2] }, contextOf(rows));
    expect(ranked.map((r) => r.row)).toEqual([1, 0]); // b 0.032522474881 > a 0.032266458496 > c 0.032002048131
    expect(ranked.map((r) => r.final)).toEqual([0.032522474881, 0.032266458496]);
    expect(ranked[0]).toMatchObject({ dense: 0.5, bm25: 1, typeMatch: 0 });
    expect(ranker.channels).toEqual({ dense: true, bm25: true });
  });

  it("breaks channel ties by entry id, and equal finals by dense, BM25, then entry id (METHOD.md §5.4)", () => {
    const ranker = RANKERS.get("rrf").build({ k: 60 });
    // Equal raw dense: y (id "y") ranks after x; bm25 equal too, so x: 2/61, y: 2/62.
    const tied = ranker.rank({ key: "positive", polarity: "positive", limit: 3, candidates: [0, 1] }, contextOf([{ id: "y", dense: 0.3, bm25: 0.2 }, { id: "x", dense: 0.3, bm25: 0.2 }]));
    expect(tied.map((r) => r.row)).toEqual([1, 0]);
    expect(tied.map((r) => r.final)).toEqual([0.032786885246, 0.032258064516]);
    // p: dense 1st, BM25 2nd; q: dense 2nd, BM25 1st → equal finals; p has the larger dense component.
    const swapped = ranker.rank({ key: "negative", polarity: "negative", limit: 2, candidates: [0, 1] }, contextOf([{ id: "q", dense: 0.2, bm25: 0.9 }, { id: "p", dense: 0.8, bm25: 0.1 }]));
    expect(swapped[0].final).toBe(swapped[1].final);
    expect(swapped.map((r) => r.row)).toEqual([1, 0]);
  });

  it("merit_rrf is MERIT's memory with the rrf ranker", () => {
    const rrf = getMethod("merit_rrf");
    const merit = getMethod("merit");
    expect(rrf.canonicalName).toBe("merit_rrf");
    expect(rrf.record.hooks!.memory).toEqual({ name: "merit_memory", args: { ...(merit.record.hooks!.memory as { args: object }).args, ranker: "rrf", ranker_args: { k: 60 } } });
  });
});

describe("merit grid --plugin examples/merit-rrf.ts --methods merit_rrf", () => {
  const root = tempDir("rrf");
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  let config: string;
  beforeAll(async () => {
    config = await writeTinyGridConfig(root);
  }, budget(120_000));

  it("runs the plugin's method and records its memory's args and the plugin file in the manifest", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l) };
    const dir = join(root, "runs");
    expect(await gridCommand.run(["--config", config, "--plugin", PLUGIN, "--methods", "merit_rrf", "--seeds", "0", "--limit", "6", "--out", dir], io), err.join("\n")).toBe(0);
    expect(out.some((l) => l.startsWith("merit_rrf seed 0: EX "))).toBe(true);
    const manifest = JSON.parse(readFileSync(join(dir, "merit_rrf-s0", "manifest.json"), "utf8"));
    expect(manifest.method).toBe("merit_rrf");
    expect(manifest.method_parts.hooks.memory.args).toMatchObject({ ranker: "rrf", ranker_args: { k: 60 }, layout: "by_polarity", type_filter: "always" });
    expect(manifest.plugins).toEqual([{ path: PLUGIN, sha256: createHash("sha256").update(readFileSync(PLUGIN)).digest("hex") }]);
    const log = readJsonl<{ method_name: string }>(join(dir, "merit_rrf-s0", "retrieval_log.jsonl"));
    expect(log.length).toBeGreaterThan(0);
    expect(new Set(log.map((r) => r.method_name))).toEqual(new Set(["merit_rrf"]));
  }, budget(300_000));
});
