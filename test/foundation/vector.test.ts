/**
 * Tests lib/vector.ts (METHOD.md §5.3): the one L2-normaliser serves both the embedders (which name
 * the embedded text in their error) and the memory and retriever (which do not), with the same
 * float64-accumulate, float32-round arithmetic.
 */
import { describe, expect, it } from "vitest";
import { MeritError } from "../../lib/errors.ts";
import { PyRandom } from "../../lib/random.ts";
import { checkDimension, dot, l2Normalize, VectorError } from "../../lib/vector.ts";

describe("l2Normalize", () => {
  it("divides in float64 and rounds each component once to float32", () => {
    const rng = new PyRandom(7);
    const v = Array.from({ length: 64 }, () => rng.random() * 2 - 1);
    let sum = 0;
    for (const x of v) sum += x * x;
    const norm = Math.sqrt(sum);
    expect(l2Normalize(v)).toEqual(Float32Array.from(v, (x) => x / norm));
  });

  it("gives the same vector for a number[] and a Float32Array input of the same values", () => {
    const f = Float32Array.from([0.1, -2.5, 3e-3, 7]);
    expect(l2Normalize(f)).toEqual(l2Normalize(Array.from(f)));
    expect(l2Normalize(f, "some text")).toEqual(l2Normalize(f));
  });

  it("rejects zero, NaN and infinite norms with the vector's length", () => {
    expect(() => l2Normalize([0, 0, 0])).toThrow("cannot L2-normalise a vector of norm 0 (length 3); check the embedder output: it returned a zero or non-finite vector");
    expect(() => l2Normalize([1, Number.NaN])).toThrow("of norm NaN (length 2)");
    expect(() => l2Normalize([Infinity, 1])).toThrow("of norm Infinity (length 2)");
    expect(() => l2Normalize([])).toThrow(VectorError);
  });

  it("blames the embedding model, naming the first 40 characters of the text, when the text is given", () => {
    const text = "x".repeat(50);
    let error: unknown;
    try {
      l2Normalize([0, 0], text);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(MeritError);
    expect((error as Error).message).toBe(`embedding of "${"x".repeat(40)}" has norm 0; the embedding model file is probably broken, re-run \`make models\``);
    expect(() => l2Normalize([Number.NaN], "")).toThrow('embedding of "" has norm NaN');
  });
});

describe("dot and checkDimension", () => {
  it("accumulates in float64 in index order", () => {
    const a = Float32Array.from([0.1, 0.2, 0.3]);
    const b = Float32Array.from([3, 2, 1]);
    expect(dot(a, b)).toBe(a[0] * b[0] + a[1] * b[1] + a[2] * b[2]);
  });

  it("checkDimension names what has the wrong length", () => {
    expect(() => checkDimension([1, 2], 3, "query embedding")).toThrow("query embedding has 2 dimensions, the memory expects 3; use the same embedder");
    expect(() => checkDimension([1, 2, 3], 3, "query embedding")).not.toThrow();
  });
});
