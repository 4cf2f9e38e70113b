// Contract suite for every MemoryStore (STYLE.md §2.13): insert / merge / skip semantics of METHOD.md §4.4, embeddings, serialised inserts.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { denseText } from "../../lib/memory/entry-text.ts";
import { InMemoryMemoryStore } from "../../lib/memory/in-memory-store.ts";
import { JsonlMemoryStore } from "../../lib/memory/jsonl-store.ts";
import type { MemoryStore } from "../../lib/memory/store.ts";
import { HashedBagEmbedder, makeEntry } from "./fixtures.ts";

const tmpDirs: string[] = [];
afterAll(() => tmpDirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

const IMPLEMENTATIONS: [string, (dimension: number) => MemoryStore][] = [
  ["InMemoryMemoryStore", (d) => new InMemoryMemoryStore(d)],
  [
    "JsonlMemoryStore",
    (d) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "merit-store-"));
      tmpDirs.push(dir);
      return JsonlMemoryStore.open(dir, { dimension: d });
    },
  ],
];

const DELTA = "SELECT a FROM t => SELECT b FROM t";

for (const [name, create] of IMPLEMENTATIONS) {
  describe(`MemoryStore contract: ${name}`, () => {
    it("starts empty", () => {
      const store = create(16);
      expect(store.size).toBe(0);
      expect(store.entries()).toEqual([]);
      expect(store.dimension).toBe(16);
    });

    it("appends a new entry with its normalised dense-text embedding", async () => {
      const store = create(16);
      const embedder = new HashedBagEmbedder(16);
      const e = makeEntry({ queryId: "q1", position: 0 });
      expect(await store.insert(e, embedder)).toEqual({ kind: "insert", row: 0, entryId: e.entry_id, embeddingCalls: 1 });
      expect(embedder.texts).toEqual([denseText(e)]);
      const [expected] = await new HashedBagEmbedder(16).embed([denseText(e)]);
      expect(Array.from(store.vectors()[0])).toEqual(Array.from(expected));
      expect(store.rowOf(e.entry_id)).toBe(0);
      expect(store.hasEpisode(e.source_episode_id)).toBe(true);
    });

    it("merges a same-ID entry in place and re-embeds the merged entry", async () => {
      const store = create(16);
      const embedder = new HashedBagEmbedder(16);
      await store.insert(makeEntry({ delta: "x => y", queryId: "q0" }), embedder);
      await store.insert(makeEntry({ delta: DELTA, queryId: "q1", position: 1, question: "alpha" }), embedder);
      const r = await store.insert(makeEntry({ delta: DELTA, queryId: "q2", position: 2, question: "beta" }), embedder);
      expect(r.kind).toBe("merge");
      expect(r.row).toBe(1);
      expect(store.size).toBe(2);
      const merged = store.entries()[1];
      expect(merged.confirmation_count).toBe(2);
      expect(merged.question).toBe("beta");
      expect(embedder.texts.at(-1)).toBe(denseText(merged));
      expect(store.hasEpisode(makeEntry({ queryId: "q1", position: 1 }).source_episode_id)).toBe(true);
    });

    it("skips an already stored episode without embedding", async () => {
      const store = create(16);
      const embedder = new HashedBagEmbedder(16);
      const e = makeEntry({ queryId: "q1", position: 3 });
      await store.insert(e, embedder);
      const again = await store.insert(e, embedder);
      expect(again).toEqual({ kind: "skip", row: 0, entryId: e.entry_id, embeddingCalls: 0 });
      expect(embedder.calls).toBe(1);
      expect(store.entries()[0].confirmation_count).toBe(1);
    });

    it("serialises concurrent inserts (no lost merge)", async () => {
      const store = create(16);
      const embedder = new HashedBagEmbedder(16);
      await Promise.all([1, 2, 3, 4].map((i) => store.insert(makeEntry({ delta: DELTA, queryId: `q${i}`, position: i }), embedder)));
      expect(store.size).toBe(1);
      expect(store.entries()[0].confirmation_count).toBe(4);
    });

    it("revision changes on every insert and merge, not on a skip", async () => {
      const store = create(16);
      const embedder = new HashedBagEmbedder(16);
      const seen = [store.revision];
      const e = makeEntry({ delta: DELTA, queryId: "q1", position: 1 });
      await store.insert(e, embedder); // insert
      seen.push(store.revision);
      await store.insert(makeEntry({ delta: DELTA, queryId: "q2", position: 2 }), embedder); // merge
      seen.push(store.revision);
      await store.insert(e, embedder); // skip
      expect(store.revision).toBe(seen[2]);
      expect(new Set(seen).size).toBe(3);
      expect(seen.every((r) => typeof r === "number")).toBe(true);
    });

    it("rejects an embedding of the wrong dimension", async () => {
      const store = create(16);
      await expect(store.insert(makeEntry(), new HashedBagEmbedder(8))).rejects.toThrow(/8 dimensions, the memory expects 16/);
      expect(store.size).toBe(0);
    });
  });
}
