// Tests lib/llm/llama-embedder.ts on the tiny random BERT/BGE GGUF (METHOD.md §5.3): dimension 32,
// unit L2 norm, determinism, the in-memory cache, and right truncation to the model's 512 positions.
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLlamaEmbedder, type LlamaEmbedder } from "../../lib/llm/llama-embedder.ts";
import { l2Normalize as l2Normalise } from "../../lib/vector.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BGE = `${ROOT}test/fixtures/models/tiny-random-bert-bge.gguf`;
const BGE_SHA = "433f4c32a57b96124c21b83118145ba4dfb7f273544610146548890bb4235860"; // PROVENANCE.md

let embedder: LlamaEmbedder;
beforeAll(async () => {
  embedder = await createLlamaEmbedder({ modelPath: BGE, threads: 1, batchSize: 2, modelHash: BGE_SHA });
});
afterAll(async () => {
  await embedder?.close();
});

const norm = (v: Float32Array) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i], 0);

describe("llama embedder", () => {
  it("has dimension 32 and returns one unit vector per text, in order", async () => {
    expect(embedder.dimension).toBe(32);
    const texts = ["singer table", "concert in 2014", "stadium capacity", "", "singer table"];
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(texts.length);
    for (const v of vectors) {
      expect(v).toHaveLength(32);
      expect(norm(v)).toBeCloseTo(1, 5);
    }
    expect(vectors[4]).toEqual(vectors[0]); // same text, same vector
    expect(dot(vectors[0], vectors[1])).toBeLessThan(0.9999); // different texts differ
  });

  it("is deterministic and serves repeats from the cache", async () => {
    const before = embedder.stats();
    const [a] = await embedder.embed(["how many heads of departments are older than 56"]);
    const [b] = await embedder.embed(["how many heads of departments are older than 56"]);
    expect(b).toEqual(a);
    const after = embedder.stats();
    expect(after.computed - before.computed).toBe(1);
    expect(after.cacheHits - before.cacheHits).toBe(1);
    b[0] = 42; // callers get copies: mutating one never corrupts the cache
    const [c] = await embedder.embed(["how many heads of departments are older than 56"]);
    expect(c).toEqual(a);
  });

  it("a fresh embedder computes the same vectors (no hidden state)", async () => {
    const other = await createLlamaEmbedder({ modelPath: BGE, threads: 1, modelHash: BGE_SHA });
    try {
      const texts = ["singer table", "concert in 2014"];
      expect(await other.embed(texts)).toEqual(await embedder.embed(texts));
    } finally {
      await other.close();
    }
  });

  it("2 threads give bit-identical vectors", async () => {
    const texts = ["singer table", "how many heads of departments are older than 56", "x ".repeat(400)];
    const two = await createLlamaEmbedder({ modelPath: BGE, threads: 2, modelHash: BGE_SHA });
    try {
      expect(await two.embed(texts)).toEqual(await embedder.embed(texts));
    } finally {
      await two.close();
    }
  });

  it("cuts inputs longer than 512 positions at the end and counts them", async () => {
    // "word " × 600 → 600 WordPiece tokens; room = 512 − [CLS] − [SEP] = 510 ⇒ 90 tokens dropped.
    const long = "word ".repeat(600);
    const before = embedder.stats();
    const [v] = await embedder.embed([long]);
    const after = embedder.stats();
    expect(norm(v)).toBeCloseTo(1, 5);
    expect(after.truncatedInputs - before.truncatedInputs).toBe(1);
    expect(after.truncatedTokens - before.truncatedTokens).toBe(90);
    // Same kept prefix ⇒ same vector: 510 words and 600 words embed identically.
    const [w] = await embedder.embed(["word ".repeat(510)]);
    expect(w).toEqual(v);
  });

  it("l2Normalise: (3, 4) → (0.6, 0.8); a zero vector is an error", () => {
    expect(Array.from(l2Normalise([3, 4]))).toEqual([Math.fround(0.6), Math.fround(0.8)]);
    expect(() => l2Normalise([0, 0], "x")).toThrow(/norm 0/);
  });
});
