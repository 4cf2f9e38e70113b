// Tests lib/memory/merge.ts: merge rules of METHOD.md §4.4 (counts, majority polarity, ties, representative fields, history union) and idempotent insertion plans.
import { describe, expect, it } from "vitest";
import { observationOf, type MemoryEntry } from "../../lib/memory/entry.ts";
import { mergeEntries, planInsertion, unionHistories, type MemoryView } from "../../lib/memory/merge.ts";
import { makeEntry } from "./fixtures.ts";

const DELTA = "SELECT a FROM t => SELECT b FROM t";
const pos = (queryId: string, position: number) => makeEntry({ polarity: "positive", queryId, position, delta: DELTA });
const neg = (queryId: string, position: number) => makeEntry({ polarity: "negative", queryId, position, delta: DELTA });

function view(entries: MemoryEntry[]): MemoryView {
  return {
    size: entries.length,
    rowOf: (id) => {
      const i = entries.findIndex((e) => e.entry_id === id);
      return i < 0 ? undefined : i;
    },
    entryAt: (row) => entries[row],
    rowOfEpisode: (ep) => {
      const i = entries.findIndex((e) => e.provenance_history.some((h) => h.source_episode_id === ep));
      return i < 0 ? undefined : i;
    },
  };
}

describe("mergeEntries", () => {
  it("same polarity: counts summed, incoming wins representation, histories unioned", () => {
    const m = mergeEntries(pos("q1", 1), pos("q2", 4));
    expect([m.confirmation_count, m.success_count, m.failure_count]).toEqual([2, 2, 0]);
    expect(m.polarity).toBe("positive");
    expect(m.source_query_id).toBe("q2"); // incoming has the winning polarity → its source fields
    expect(m.source_stream_position).toBe(4);
    expect(m.provenance_history.map((h) => h.source_query_id)).toEqual(["q1", "q2"]);
    expect(m.entry_id).toBe(pos("q1", 1).entry_id);
  });

  it("tie keeps the existing polarity and the existing representative (positive + negative = 1:1)", () => {
    const existing = pos("q1", 1);
    const m = mergeEntries(existing, neg("q2", 4));
    expect([m.success_count, m.failure_count, m.confirmation_count]).toEqual([1, 1, 2]);
    expect(m.polarity).toBe("positive");
    expect(m.source_query_id).toBe("q1");
    expect(m.observed_outcome).toBe("CORRECT");
    // incoming successful_direction is "" → keep the existing one
    expect(m.successful_direction).toBe(existing.successful_direction);
  });

  it("tie keeps an existing negative; a non-empty incoming successful_direction still replaces", () => {
    const incoming = pos("q2", 4);
    const m = mergeEntries(neg("q1", 1), incoming);
    expect(m.polarity).toBe("negative");
    expect(m.source_query_id).toBe("q1");
    expect(m.observed_outcome).toBe("EXECUTION_ERROR");
    expect(m.successful_direction).toBe(incoming.successful_direction);
  });

  it("majority flips the polarity and the incoming entry becomes representative (1:1 + 0:1 → 1:2 negative)", () => {
    const tied = mergeEntries(pos("q1", 1), neg("q2", 2));
    const m = mergeEntries(tied, neg("q3", 3));
    expect([m.success_count, m.failure_count, m.confirmation_count]).toEqual([1, 2, 3]);
    expect(m.polarity).toBe("negative");
    expect(m.source_query_id).toBe("q3");
    expect(m.observed_outcome).toBe("EXECUTION_ERROR");
    expect(m.provenance_history.map((h) => h.source_query_id)).toEqual(["q1", "q2", "q3"]);
  });

  it("does not mutate its inputs", () => {
    const a = pos("q1", 1);
    const snapshot = JSON.stringify(a);
    mergeEntries(a, pos("q2", 2));
    expect(JSON.stringify(a)).toBe(snapshot);
  });
});

describe("unionHistories", () => {
  it("deduplicates by canonical JSON (key order does not matter) and keeps order", () => {
    const a = observationOf(pos("q1", 1));
    const reordered = Object.fromEntries(Object.entries(a).reverse()) as typeof a;
    const b = observationOf(pos("q2", 2));
    expect(unionHistories([a], [reordered, b])).toEqual([a, b]);
  });
});

describe("planInsertion", () => {
  it("appends a new ID at the next row", () => {
    const plan = planInsertion(view([makeEntry({ delta: "x => y" })]), pos("q1", 1));
    expect(plan.kind).toBe("insert");
    expect(plan.row).toBe(1);
  });
  it("merges an existing ID in place", () => {
    const plan = planInsertion(view([makeEntry({ delta: "x => y" }), pos("q1", 1)]), pos("q2", 2));
    expect(plan.kind).toBe("merge");
    expect(plan.row).toBe(1);
    if (plan.kind === "merge") expect(plan.entry.confirmation_count).toBe(2);
  });
  it("skips an episode already present in any history (idempotent resume)", () => {
    const merged = mergeEntries(pos("q1", 1), pos("q2", 2));
    const again = makeEntry({ polarity: "negative", queryId: "q2", position: 2, delta: "other => delta" }); // same episode, other ID
    const plan = planInsertion(view([merged]), again);
    expect(plan).toEqual({ kind: "skip", row: 0, episodeId: again.source_episode_id });
  });
  it("validates the incoming entry", () => {
    expect(() => planInsertion(view([]), { ...pos("q1", 1), question: " " })).toThrow(/question must be a non-empty string/);
  });
});
