// Tests lib/memory/memory-table.ts VectorArena: copies into shared buffers, views that never change, dimension checks; and that a merge gives its row a new vector object while the old one keeps its values.
import { describe, expect, it } from "vitest";
import { MemoryTable, VectorArena } from "../../lib/memory/memory-table.ts";
import { VectorError } from "../../lib/vector.ts";
import { HashedBagEmbedder, makeEntry } from "./fixtures.ts";

describe("VectorArena", () => {
  it("stores copies, across buffer boundaries, and never changes a returned view", () => {
    const arena = new VectorArena(3, 2); // two slots per buffer
    const input = Float32Array.from([1, 2, 3]);
    const views = [arena.store(input), arena.store([4, 5, 6]), arena.store([7, 8, 9])];
    input[0] = 99; // the arena holds a copy
    expect(views.map((v) => Array.from(v))).toEqual([[1, 2, 3], [4, 5, 6], [7, 8, 9]]);
    expect(views[0].buffer).toBe(views[1].buffer);
    expect(views[2].buffer).not.toBe(views[1].buffer);
  });
  it("refuses a vector of another length", () => {
    expect(() => new VectorArena(3).store([1, 2])).toThrow(VectorError);
  });
});

describe("MemoryTable vectors", () => {
  it("a merge stores a new vector object; the replaced one keeps its values", async () => {
    const table = new MemoryTable(16);
    const embedder = new HashedBagEmbedder(16);
    const first = makeEntry({ queryId: "q1", position: 1, question: "alpha beta" });
    let plan = table.plan(first);
    table.apply(plan, await table.embedPlan(plan, embedder));
    const before = table.vectors()[0];
    const values = Array.from(before);
    plan = table.plan(makeEntry({ queryId: "q2", position: 2, question: "gamma delta" }));
    expect(plan.kind).toBe("merge");
    table.apply(plan, await table.embedPlan(plan, embedder));
    expect(table.vectors()[0]).not.toBe(before);
    expect(Array.from(table.vectors()[0])).not.toEqual(values);
    expect(Array.from(before)).toEqual(values);
  });
});
