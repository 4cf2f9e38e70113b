/**
 * L2 normalisation of embedding vectors (METHOD.md §5.3: dense scores are inner products of unit
 * vectors; llama.cpp and most servers return un-normalised vectors).
 * @module
 */
import { MeritError } from "../errors.ts";

/** The unit vector of `vector` (float64 accumulation). @throws MeritError on a zero or non-finite vector */
export function l2Normalise(vector: readonly number[], text = ""): Float32Array {
  let sum = 0;
  for (const x of vector) sum += x * x;
  const norm = Math.sqrt(sum);
  if (!(norm > 0) || !Number.isFinite(norm)) {
    throw new MeritError(`embedding of "${text.slice(0, 40)}" has norm ${norm}; the embedding model file is probably broken, re-run \`make models\``);
  }
  return Float32Array.from(vector, (x) => x / norm);
}
