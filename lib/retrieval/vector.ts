/**
 * Retrieval stage (METHOD.md §5.3): the vector arithmetic of dense scoring — L2 normalisation and
 * the inner product over Float32Array (accumulated in float64). Pure.
 * @module
 */
import { MeritError } from "../errors.ts";

/** A vector that cannot be normalised (zero, non-finite, or the wrong length). */
export class VectorError extends MeritError {
  constructor(problem: string, fix: string) {
    super(`${problem}; ${fix}`);
    this.name = "VectorError";
  }
}

/** A new L2-normalised copy of `v` (METHOD.md §5.3 normalises embeddings again after the model). */
export function l2Normalize(v: ArrayLike<number>): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i] * v[i];
  const norm = Math.sqrt(sum);
  if (!Number.isFinite(norm) || norm === 0)
    throw new VectorError(`cannot L2-normalise a vector of norm ${norm} (length ${v.length})`, "check the embedder output: it returned a zero or non-finite vector");
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
