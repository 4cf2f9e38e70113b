/**
 * Vector arithmetic shared by the embedders and dense retrieval (METHOD.md §5.3: dense scores are
 * inner products of unit vectors; llama.cpp and most servers return un-normalised vectors, and the
 * memory normalises again after the model): L2 normalisation and the inner product over
 * Float32Array, both accumulated in float64. Pure.
 * @module
 */
import { MeritError } from "./errors.ts";

/** A vector that cannot be normalised (zero, non-finite, or the wrong length). */
export class VectorError extends MeritError {
  constructor(problem: string, fix: string) {
    super(`${problem}; ${fix}`);
    this.name = "VectorError";
  }
}

/**
 * A new L2-normalised copy of `v`: the squares are summed in float64 in index order, each
 * component is divided by the norm in float64 and rounded once to float32.
 * @param embeddedText the text `v` is the model's embedding of, given where the vector comes
 *   straight from an embedding model: a degenerate vector then blames the model file.
 * @throws VectorError on a zero or non-finite norm
 * @example l2Normalize([3, 4]) // Float32Array [0.6, 0.8] (as float32)
 */
export function l2Normalize(v: ArrayLike<number>, embeddedText?: string): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i] * v[i];
  const norm = Math.sqrt(sum);
  if (!Number.isFinite(norm) || norm === 0) {
    throw embeddedText === undefined
      ? new VectorError(`cannot L2-normalise a vector of norm ${norm} (length ${v.length})`, "check the embedder output: it returned a zero or non-finite vector")
      : new VectorError(`embedding of "${embeddedText.slice(0, 40)}" has norm ${norm}`, "the embedding model file is probably broken, re-run `make models`");
  }
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i] / norm;
  return out;
}

/** Inner product of two equal-length vectors (float64 accumulation). */
export function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** Throws unless `v` has length `dimension`. */
export function checkDimension(v: ArrayLike<number>, dimension: number, what: string): void {
  if (v.length !== dimension)
    throw new VectorError(`${what} has ${v.length} dimensions, the memory expects ${dimension}`, "use the same embedder for the whole run (its dimension is fixed when the memory is created)");
}
