/**
 * Repair stage, the embedding tokens of an episode (METHOD.md §12.1, "Cost"): every text embedded for
 * an episode (retrieval queries, hooks' texts) is counted by the embedder's token counter, whether its
 * vector was cached or computed; null when an embedder cannot count.
 * @module
 */
import type { Embedder } from "../llm/types.ts";

/** The embedding tokens of `texts` together (0 for none); null when `embedder` cannot count them. */
export async function countEmbeddingTokens(embedder: Embedder | undefined, texts: readonly string[]): Promise<number | null> {
  if (texts.length === 0) return 0;
  const counts = (await embedder?.tokenCounts?.(texts)) ?? null;
  return counts === null ? null : counts.reduce((s, n) => s + n, 0);
}

/**
 * `inner` with the tokens of every text it embeds reported to `add` before the vectors come (null when
 * `inner` cannot count them); identity and dimension are `inner`'s.
 */
export function countingEmbedder(inner: Embedder, add: (tokens: number | null) => void): Embedder {
  return {
    identity: inner.identity,
    dimension: inner.dimension,
    async embed(texts) {
      if (texts.length > 0) add(await countEmbeddingTokens(inner, texts));
      return inner.embed(texts);
    },
    tokenCounts: (texts) => inner.tokenCounts?.(texts) ?? Promise.resolve(null),
    close: () => inner.close(),
  };
}

