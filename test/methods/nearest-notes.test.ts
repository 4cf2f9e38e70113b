// nearestNotes (lib/methods/note-index.ts), the peers' note ranking from the vectors their memory
// stores (issue 38 §4): up to the exact limit it picks exactly what topByCosine's plain scan picks —
// the same notes, in the same order, with the same scores (bit for bit), ties in memory order — on
// seeded random vectors, whole memories and filtered pools, retired notes and notes without
// vectors; from the prefilter size on (lib/retrieval/int8-scan.ts cuts the pool first) the same,
// on whole memories, one kind's notes and filtered pools, and after retirements as a resumed run.
import { describe, expect, it } from "vitest";
import type { Embedder } from "../../lib/llm/types.ts";
import { stampNotes, topByCosine, type Note } from "../../lib/methods/hooks.ts";
import { nearestNotes, takeNoteSearch } from "../../lib/methods/note-index.ts";
import { NoteMemory, noteView } from "../../lib/methods/note-memory.ts";
import { notesOfKind } from "../../lib/methods/peers/common.ts";
import { PyRandom } from "../../lib/random.ts";

/** An embedder that returns the vector registered for each key. */
function tableEmbedder(table: Map<string, Float32Array>, dimension: number): Embedder {
  return {
    identity: { backend: "test", model: "table", options: {} } as never,
    dimension,
    async embed(texts) {
      return texts.map((t) => Float32Array.from(table.get(t) as Float32Array));
    },
    async close() {},
  };
}

const unit = (rng: PyRandom, d: number): Float32Array => {
  const v = Float32Array.from({ length: d }, () => rng.random() * 2 - 1);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};

function notesAt(i: number, kind: string): Note {
  return stampNotes("probe", { queryId: `q${i}`, dbId: "db", streamPosition: i, episodeId: `e${i}` }, [{ kind, text: `t${i}`, key: `k${i}` }])[0];
}

/** A memory of `n` notes whose vectors are drawn from `palette` (many exact ties), written a few per episode. */
async function filled(n: number, palette: readonly Float32Array[], rng: PyRandom, kinds: readonly string[], prefilterMin?: number): Promise<NoteMemory> {
  const table = new Map<string, Float32Array>();
  const notes = Array.from({ length: n }, (_, i) => {
    table.set(`k${i}`, palette[rng.randbelow(palette.length)]);
    return notesAt(i, kinds[rng.randbelow(kinds.length)]);
  });
  const memory = new NoteMemory("probe", tableEmbedder(table, palette[0].length), true, prefilterMin);
  for (let i = 0; i < n; i += 3) await memory.apply(notes.slice(i, i + 3));
  return memory;
}

/** `n` notes of `kind`, note i keyed by its own random unit vector (16 dimensions) drawn from PyRandom(seed); the generator goes on for probes. */
function distinctNotes(seed: number, n: number, kind: string): { rng: PyRandom; table: Map<string, Float32Array>; notes: Note[] } {
  const rng = new PyRandom(seed);
  const palette = Array.from({ length: n }, () => unit(rng, 16));
  const table = new Map<string, Float32Array>();
  const notes = Array.from({ length: n }, (_, i) => (table.set(`k${i}`, palette[i]), notesAt(i, kind)));
  return { rng, table, notes };
}

const same = (a: ReturnType<typeof topByCosine>, b: ReturnType<typeof topByCosine>) => {
  expect(a.map((p) => p.note.note_id)).toEqual(b.map((p) => p.note.note_id));
  a.forEach((p, i) => expect(p.note).toBe(b[i].note));
  // the same additions in the same order: identical scores, not merely close ones
  expect(a.map((p) => p.score)).toStrictEqual(b.map((p) => p.score));
};

describe("nearestNotes", () => {
  it("picks what the plain scan picks, ties and scores included, on seeded random vectors", async () => {
    const rng = new PyRandom(17);
    // 40 distinct vectors over 700 notes: most scores are tied with others
    const palette = Array.from({ length: 40 }, () => unit(rng, 24));
    const memory = await filled(700, palette, rng, ["insight", "trajectory"]);
    const all = memory.notes;
    for (let q = 0; q < 6; q++) {
      const query = q === 0 ? palette[3] : unit(rng, 24);
      for (const k of [1, 2, 3, 4, 7, 64, 65, 699, 1000]) {
        same(nearestNotes(all, query, k), topByCosine(all, query, k));
        const pool = all.filter((n) => n.kind === "trajectory" && n.source_stream_position % 5 !== 0);
        same(nearestNotes(pool, query, k), topByCosine(pool, query, k));
      }
    }
    expect(takeNoteSearch(all)).toBe("exact");
    expect(takeNoteSearch(all)).toBe("none");
    expect(nearestNotes([], palette[0], 3)).toEqual([]);
    expect(nearestNotes(all, palette[0], 0)).toEqual([]);
  });

  it("skips retired notes and notes without vectors, and ranks foreign notes by the plain scan", async () => {
    const rng = new PyRandom(3);
    const palette = Array.from({ length: 5 }, () => unit(rng, 8));
    const memory = await filled(60, palette, rng, ["insight"]);
    const before = memory.notes;
    await memory.apply([], [before[2].note_id, before[10].note_id]);
    const after = memory.notes;
    expect(after).toHaveLength(58);
    for (const query of palette) {
      same(nearestNotes(after, query, 5), topByCosine(after, query, 5));
      // a note built elsewhere (not by a NoteMemory) and one without a vector mixed in: the plain scan's answer
      const foreign = noteView(notesAt(999, "insight"), query);
      const bare = noteView(notesAt(998, "insight"), null);
      const mixed = [bare, ...after.slice(0, 20), foreign];
      same(nearestNotes(mixed, query, 3), topByCosine(mixed, query, 3));
    }
    // the same notes from a memory that does not embed them: nothing to rank
    const plain = new NoteMemory("probe", undefined, false);
    await plain.apply([notesAt(1, "insight"), notesAt(2, "insight")]);
    expect(nearestNotes(plain.notes, palette[0], 2)).toEqual([]);
  });

  it("from the prefilter size on gives the plain scan's answer too — ties and scores included — on whole memories, one kind's notes (contiguous in the int8 copy) and filtered pools (scattered)", async () => {
    const rng = new PyRandom(23);
    // 30 distinct vectors over 900 notes of three kinds: most scores tied; prefilter from 100 notes
    const palette = Array.from({ length: 30 }, () => unit(rng, 40));
    const memory = await filled(900, palette, rng, ["insight", "trajectory", "error_fix"], 100);
    const all = memory.notes;
    const pools = [all, notesOfKind(all, "trajectory"), all.filter((n) => n.source_stream_position % 7 !== 3), notesOfKind(all, "error_fix").filter((_, i) => i % 5 === 0)];
    expect(pools.every((p) => p.length >= 100 || p === pools[3])).toBe(true);
    for (let q = 0; q < 5; q++) {
      const query = q === 0 ? palette[5] : unit(rng, 40);
      for (const k of [1, 2, 4, 7, 64]) for (const pool of pools) same(nearestNotes(pool, query, k), topByCosine(pool, query, k));
    }
    expect(takeNoteSearch(all)).toBe("exact");
    // a pool a hook changed after the kit handed it out (reordered, an element replaced): still the plain scan's answer
    const changed = notesOfKind(all, "trajectory");
    changed.reverse();
    changed[3] = notesOfKind(all, "insight")[0];
    for (const k of [1, 4]) same(nearestNotes(changed, palette[7], k), topByCosine(changed, palette[7], k));
    // distinct vectors (no ties), 1,000 notes, k = 4: the same notes and scores
    const { rng: r2, table, notes } = distinctNotes(29, 1000, "insight");
    const distinct = new NoteMemory("probe", tableEmbedder(table, 16), true, 100);
    await distinct.apply(notes);
    for (let q = 0; q < 10; q++) {
      const query = unit(r2, 16);
      same(nearestNotes(distinct.notes, query, 4), topByCosine(distinct.notes, query, 4));
    }
  });

  it("a memory that retired notes answers as a resumed run does and as the plain scan does, and never with a retired note", async () => {
    const rng = new PyRandom(41);
    const table = new Map<string, Float32Array>();
    const notes = Array.from({ length: 300 }, (_, i) => (table.set(`k${i}`, unit(rng, 16)), notesAt(i, "insight")));
    const probes = Array.from({ length: 8 }, () => unit(rng, 16));
    // the fresh run: 200 notes, a search, three retirements, 100 more notes
    const fresh = new NoteMemory("probe", tableEmbedder(table, 16), true, 100);
    await fresh.apply(notes.slice(0, 200));
    const before = nearestNotes(fresh.notes, probes[0], 4);
    const retired = [...new Set([before[0].note.note_id, fresh.notes[7].note_id, fresh.notes[150].note_id])];
    await fresh.apply(notes.slice(200), retired);
    // the resumed run: the same writes and retirements, no search before the last
    const resumed = new NoteMemory("probe", tableEmbedder(table, 16), true, 100);
    await resumed.apply(notes.slice(0, 200));
    await resumed.apply(notes.slice(200), retired);
    for (const query of probes) {
      const a = nearestNotes(fresh.notes, query, 4);
      same(a, topByCosine(fresh.notes, query, 4));
      const b = nearestNotes(resumed.notes, query, 4);
      expect(a.map((p) => p.note.note_id)).toEqual(b.map((p) => p.note.note_id));
      expect(a.map((p) => p.score)).toStrictEqual(b.map((p) => p.score));
      for (const id of retired) expect(a.map((p) => p.note.note_id)).not.toContain(id);
    }
  });
});
