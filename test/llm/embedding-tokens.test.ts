// Tests the embedding-token count (issue 29 §4; lib/llm/llama-embedder.ts loadEmbeddingTokenCounter,
// lib/llm/embedding-cache.ts tokenCounts, lib/repair/episode.ts countingEmbedder): the vocabulary-only
// counter counts exactly the text tokens the tiny BGE embedder embeds (truncation included); the
// embedding cache answers the same counts before and after the vectors are cached, and null without
// a counter; countingEmbedder bills the sum of every batch, null once a batch cannot be counted.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EmbeddingCache } from "../../lib/llm/embedding-cache.ts";
import { createLlamaEmbedder, loadEmbeddingTokenCounter, readLlamaEmbedderIdentity } from "../../lib/llm/llama-embedder.ts";
import type { Embedder } from "../../lib/llm/types.ts";
import { countingEmbedder } from "../../lib/repair/episode.ts";
import { TINY_BGE } from "../helpers/run-fixture.ts";
import { budget } from "../helpers/budget.ts";

const dir = mkdtempSync(join(tmpdir(), "merit-embtokens-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const TEXTS = ["", "hello world", "SELECT name FROM singer WHERE age > 30 ORDER BY name", "x ".repeat(2000)];

describe("embedding tokens", () => {
  it("the vocabulary-only counter equals what the embedder embeds, with and without truncation", async () => {
    for (const maxTokens of [undefined, 16]) {
      const embedder = await createLlamaEmbedder({ modelPath: TINY_BGE, threads: 1, maxTokens });
      const counter = await loadEmbeddingTokenCounter({ modelPath: TINY_BGE, maxTokens });
      try {
        const counts = counter.count(TEXTS);
        expect(counts).toEqual(TEXTS.map((t) => embedder.tokenCount(t)));
        expect(counts[0]).toBe(0);
        expect(counts[2]).toBeGreaterThan(counts[1]);
        expect(counts[3]).toBe(maxTokens === undefined ? 510 : 14); // cut beside [CLS] and [SEP]
      } finally {
        await embedder.close();
        await counter.close();
      }
    }
  }, budget(60_000));

  it("the embedding cache counts the same tokens cold and warm, and null without a counter", async () => {
    const { identity, dimension } = await readLlamaEmbedderIdentity({ modelPath: TINY_BGE });
    const file = join(dir, "cache.sqlite");
    let loads = 0;
    const source = {
      identity,
      dimension,
      load: () => ((loads += 1), createLlamaEmbedder({ modelPath: TINY_BGE, threads: 1, modelHash: identity.modelHash })),
      tokenCounts: async (texts: readonly string[]) => (await (counter ??= loadEmbeddingTokenCounter({ modelPath: TINY_BGE }))).count(texts),
    };
    let counter: ReturnType<typeof loadEmbeddingTokenCounter> | null = null;
    const cold = new EmbeddingCache(source, file);
    const before = await cold.tokenCounts(TEXTS);
    const inner = cold.loadedEmbedder();
    expect(inner).toBeNull(); // counting loads no embedder
    await cold.embed(TEXTS);
    expect(await cold.tokenCounts(TEXTS)).toEqual(before);
    await (await cold.loadedEmbedder())!.close();
    await cold.close();
    const warm = new EmbeddingCache(source, file);
    await warm.embed(TEXTS);
    expect(warm.stats().computed).toBe(0);
    expect(await warm.tokenCounts(TEXTS)).toEqual(before);
    await warm.close();
    expect(loads).toBe(1);
    const uncounted = new EmbeddingCache({ identity, dimension, load: source.load }, file);
    expect(await uncounted.tokenCounts(TEXTS)).toBeNull();
    await uncounted.close();
    await (await counter!).close();
  }, budget(60_000));

  it("countingEmbedder bills each batch's tokens before its vectors, and null once a batch cannot be counted", async () => {
    const fake = (counts: number[] | null): Embedder => ({
      identity: { kind: "test", model: "fake", modelHash: "0", params: {} },
      dimension: 2,
      embed: async (texts) => texts.map(() => Float32Array.from([1, 0])),
      tokenCounts: async (texts) => (counts === null ? null : texts.map((_, i) => counts[i])),
      close: async () => {},
    });
    let total: number | null = 0;
    const add = (n: number | null) => (total = total === null || n === null ? null : total + n);
    const counted = countingEmbedder(fake([3, 4]), add);
    await counted.embed(["a", "b"]);
    await counted.embed([]); // no texts: nothing billed
    expect(total).toBe(7);
    await countingEmbedder(fake(null), add).embed(["c"]);
    expect(total).toBeNull();
  });
});
