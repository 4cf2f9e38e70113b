/**
 * Test double of the retrieval stage's embedding seam (lib/llm/types.ts Embedder; METHOD.md §5.3): the
 * memory suites' hashed bag of words — each [a-z0-9_]+ token adds 1 to bucket sha256(token) mod
 * dimension, then L2-normalised — shared here under the name the runner suites use.
 */
export { HashedBagEmbedder as HashedEmbedder } from "../memory/fixtures.ts";
