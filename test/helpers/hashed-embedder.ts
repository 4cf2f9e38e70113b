/**
 * Test double of the retrieval stage's embedding seam (lib/llm/types.ts Embedder; METHOD.md §5.3): a
 * hashed bag of words — each [a-z0-9_]+ token adds 1 to bucket sha256(token) mod dimension — turned
 * into a unit vector. Deterministic, fast, and similar texts get similar vectors.
 */
import { createHash } from "node:crypto";
import type { BackendIdentity, Embedder } from "../../lib/llm/types.ts";

export class HashedEmbedder implements Embedder {
  readonly identity: BackendIdentity = { kind: "test-hashed-bag", model: "hashed-bag", modelHash: "none", params: { dimension: 0 } };
  readonly dimension: number;
  /** Texts embedded so far, in call order. */
  readonly texts: string[] = [];

  constructor(dimension = 64) {
    this.dimension = dimension;
    this.identity.params.dimension = dimension;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    this.texts.push(...texts);
    return texts.map((text) => {
      const v = new Float32Array(this.dimension);
      for (const token of text.toLowerCase().match(/[a-z0-9_]+/g) ?? []) {
        v[createHash("sha256").update(token).digest().readUInt32BE(0) % this.dimension] += 1;
      }
      if (v.every((x) => x === 0)) v[0] = 1;
      const norm = Math.hypot(...v);
      return v.map((x) => x / norm);
    });
  }

  async close(): Promise<void> {}
}
