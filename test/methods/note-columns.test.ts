// The note columns (lib/methods/note-columns.ts; issue 38 §4): a NoteMemory hands out one frozen
// notes array until it changes (a write, a retirement, a source memory), and the kit's note filters
// over the arrays it hands hooks — eligibleNotes, notesOfKind, latestNote, latestOfKind, nearestNotes,
// the check that a picked note was given — read columns, with the answers of their object twins (the
// same filters over an undescribed copy of the array) on seeded random memories: ties in position,
// source notes, retirements, arrays a hook changed, notes of other memories.
import { describe, expect, it } from "vitest";
import type { Embedder } from "../../lib/llm/types.ts";
import { eligibleNotes, isSourceNote, stampNotes, topByCosine, type Note, type NoteView } from "../../lib/methods/hooks.ts";
import { describedNotes, noteMembership } from "../../lib/methods/note-columns.ts";
import { nearestNotes } from "../../lib/methods/note-index.ts";
import { NoteMemory } from "../../lib/methods/note-memory.ts";
import { latestNote, notesOfKind, notesOfKindWith } from "../../lib/methods/peers/common.ts";
import { latestOfKind, latestOfKindWithString } from "../../lib/methods/peers/episode-text.ts";
import { mostRecent } from "../../lib/methods/peers/exprag.ts";
import { PyRandom } from "../../lib/random.ts";

const KINDS = ["insight", "trajectory", "cheatsheet"];

/** An embedder hashing each key to a seeded vector of 8 dimensions from a small palette (ties). */
function paletteEmbedder(rng: PyRandom): Embedder {
  const palette = Array.from({ length: 6 }, () => {
    const v = Float32Array.from({ length: 8 }, () => rng.random() * 2 - 1);
    const n = Math.hypot(...v);
    return v.map((x) => x / n);
  });
  const of = (t: string) => palette[[...t].reduce((h, c) => (h * 31 + c.charCodeAt(0)) % 1009, 7) % palette.length];
  return { identity: { backend: "test", model: "palette", options: {} } as never, dimension: 8, embed: async (texts) => texts.map((t) => Float32Array.from(of(t))), close: async () => {} };
}

/** A note of query `q{query}` written at `position`. */
function note(i: number, position: number, query: number, kind: string): Note {
  return stampNotes("probe", { queryId: `q${query}`, dbId: "db", streamPosition: position, episodeId: `e${i}` }, [{ kind, text: `t${i}`, key: `k${i % 17}` }])[0];
}

/** A memory of seeded notes (positions and queries repeat), some retired, with source notes first when `source`. */
async function seeded(seed: number, n: number, source: boolean): Promise<{ memory: NoteMemory; rng: PyRandom }> {
  const rng = new PyRandom(seed);
  const memory = new NoteMemory("probe", paletteEmbedder(rng), true);
  if (source) await memory.addSource(Array.from({ length: 5 }, (_, i) => note(1000 + i, 50 + rng.randbelow(40), rng.randbelow(12), KINDS[rng.randbelow(3)])));
  const written: string[] = [];
  for (let i = 0; i < n; i += 2) {
    const batch = [note(i, rng.randbelow(40), rng.randbelow(12), KINDS[rng.randbelow(3)]), note(i + 1, rng.randbelow(40), rng.randbelow(12), KINDS[rng.randbelow(3)])];
    const retire = written.length > 4 && rng.random() < 0.3 ? [written.splice(rng.randbelow(written.length), 1)[0]] : [];
    await memory.apply(batch, retire);
    written.push(...batch.map((b) => b.note_id));
  }
  return { memory, rng };
}

const ids = (notes: readonly NoteView[]) => notes.map((n) => n.note_id);

describe("NoteMemory.notes", () => {
  it("is one frozen array until the memory changes, and a new one after a write, a retirement or a source memory", async () => {
    const { memory } = await seeded(3, 10, false);
    const before = memory.notes;
    const beforeIds = ids(before);
    expect(memory.notes).toBe(before);
    expect(Object.isFrozen(before)).toBe(true);
    await memory.apply([note(50, 7, 1, "insight")]);
    const written = memory.notes;
    expect(written).not.toBe(before);
    expect(ids(written)).toEqual([...ids(before), written[written.length - 1].note_id]);
    await memory.apply([], [before[0].note_id]);
    const retired = memory.notes;
    expect(retired).not.toBe(written);
    expect(ids(retired)).toEqual(ids(written).slice(1));
    await memory.apply([]); // nothing changed: the same array
    expect(memory.notes).toBe(retired);
    await memory.addSource([note(60, 3, 2, "trajectory")]);
    const sourced = memory.notes;
    expect(sourced).not.toBe(retired);
    expect(isSourceNote(sourced[0])).toBe(true);
    expect(ids(sourced).slice(1)).toEqual(ids(retired));
    // the earlier arrays are unchanged
    expect(ids(before)).toEqual(beforeIds);
    expect(ids(written)).toContain(before[0].note_id);
  });
});

describe("note filters by columns", () => {
  it("give the object filters' answers on seeded memories (eligibility, kinds, latest, nearest)", async () => {
    for (const [seed, source] of [
      [1, false],
      [2, true],
      [9, true],
    ] as const) {
      const { memory, rng } = await seeded(seed, 60, source);
      const all = memory.notes;
      expect(describedNotes(all)).not.toBeNull();
      const plain = (a: readonly NoteView[]) => [...a]; // an undescribed copy: the object path
      expect(describedNotes(plain(all))).toBeNull();
      for (let t = 0; t < 40; t++) {
        const position = rng.randbelow(45);
        const query = `q${rng.randbelow(13)}`;
        const eligible = eligibleNotes(all, position, query);
        expect(Object.isFrozen(eligible)).toBe(true);
        expect(ids(eligible)).toEqual(ids(eligibleNotes(plain(all), position, query)));
        eligible.forEach((n, i) => expect(n).toBe(eligibleNotes(plain(all), position, query)[i]));
        for (const kind of [...KINDS, "absent"]) {
          const byColumns = notesOfKind(eligible, kind);
          expect(ids(byColumns)).toEqual(ids(notesOfKind(plain(eligible), kind)));
          expect(latestNote(byColumns)).toBe(latestNote(plain(byColumns)));
          expect(latestOfKind(eligible, kind)).toBe(latestOfKind(plain(eligible), kind));
          const [query8] = await paletteEmbedder(new PyRandom(seed)).embed([`k${t % 17}`]);
          for (const k of [1, 3]) {
            const a = nearestNotes(byColumns, query8, k);
            const b = topByCosine(plain(byColumns), query8, k);
            expect(ids(a.map((p) => p.note))).toEqual(ids(b.map((p) => p.note)));
            expect(a.map((p) => p.score)).toStrictEqual(b.map((p) => p.score));
          }
        }
      }
    }
  });

  it("answers the same eligible view again for the same array, position and query, and a fresh one otherwise", async () => {
    const { memory } = await seeded(4, 30, false);
    const all = memory.notes;
    const a = eligibleNotes(all, 20, "q3");
    expect(eligibleNotes(all, 20, "q3")).toBe(a);
    expect(ids(eligibleNotes(all, 21, "q3"))).toEqual(ids(eligibleNotes([...all], 21, "q3")));
    expect(ids(eligibleNotes(all, 20, "q4"))).toEqual(ids(eligibleNotes([...all], 20, "q4")));
    // every note eligible: the memory's own frozen array
    expect(eligibleNotes(all, 1000, "nobody")).toBe(all);
    await memory.apply([note(99, 1, 5, "insight")]);
    expect(ids(eligibleNotes(memory.notes, 20, "q3"))).toEqual(ids(eligibleNotes([...memory.notes], 20, "q3")));
  });

  it("stops trusting an array a hook changed", async () => {
    const { memory } = await seeded(5, 40, false);
    const all = memory.notes;
    const insights = notesOfKind(all, "insight");
    const others = notesOfKind(all, "trajectory");
    expect(describedNotes(insights)).not.toBeNull();
    insights.push(others[0]); // now holds a trajectory note the slots do not know of
    expect(ids(notesOfKind(insights, "trajectory"))).toEqual([others[0].note_id]);
    expect(describedNotes(insights)).toBeNull();
    const sheets = notesOfKind(all, "cheatsheet");
    sheets.reverse(); // the same notes in another order
    expect(latestNote(sheets)).toBe(latestNote([...sheets]));
    expect(ids(notesOfKind(sheets, "cheatsheet"))).toEqual(ids(sheets));
  });

  it("tells whether a picked note is one the hook was given, by identity", async () => {
    const { memory } = await seeded(6, 40, true);
    const { memory: other } = await seeded(6, 40, true);
    const all = memory.notes;
    const eligible = eligibleNotes(all, 20, "q2");
    const left = all.filter((n) => !eligible.includes(n));
    expect(eligible.length).toBeGreaterThan(0);
    expect(left.length).toBeGreaterThan(0);
    for (const given of [eligible, [...eligible]]) {
      const member = noteMembership(given);
      for (const n of eligible) expect(member.has(n)).toBe(true);
      for (const n of left) expect(member.has(n)).toBe(false);
      expect(member.has({ ...eligible[0] })).toBe(false); // a copy
      expect(member.has(other.notes[all.indexOf(eligible[0])])).toBe(false); // the same note of another memory
      expect(member.has(null)).toBe(false);
      expect(member.has(undefined)).toBe(false);
    }
  });
});

describe("note filters by a data field and the most recent notes, by columns", () => {
  const VALUES = ["Syntax", "Aggregation", "Schema Linking"];
  const DATA_KINDS = ["error_fix", "experience", "solved"];
  /** A note whose data field `error_type` / `sheet` is a string, null, a number, absent, or whose data is null or a string. */
  function dataNote(i: number, position: number, query: number, kind: string, rng: PyRandom): Note {
    const pick = rng.randbelow(7);
    const value = pick < 3 ? VALUES[pick] : pick === 3 ? null : pick === 4 ? 7 : undefined;
    const data = pick === 5 ? null : pick === 6 ? "just text" : { error_type: value, sheet: value, other: i };
    return stampNotes("probe", { queryId: `q${query}`, dbId: "db", streamPosition: position, episodeId: `e${i}` }, [{ kind, text: `t${i}`, key: `k${i % 17}`, data: data as never }])[0];
  }

  it("give the object filters' answers on seeded memories (notesOfKindWith, latestOfKindWithString, mostRecent)", async () => {
    for (const seed of [1, 2, 7]) {
      const rng = new PyRandom(seed);
      const memory = new NoteMemory("probe", paletteEmbedder(rng), true);
      if (seed === 2) await memory.addSource(Array.from({ length: 4 }, (_, i) => dataNote(900 + i, 30 + rng.randbelow(20), rng.randbelow(8), DATA_KINDS[rng.randbelow(3)], rng)));
      const written: string[] = [];
      for (let i = 0; i < 80; i += 4) {
        const batch = Array.from({ length: 4 }, (_, j) => dataNote(i + j, rng.randbelow(30), rng.randbelow(8), DATA_KINDS[rng.randbelow(3)], rng));
        const retire = written.length > 4 && rng.random() < 0.3 ? [written.splice(rng.randbelow(written.length), 1)[0]] : [];
        await memory.apply(batch, retire);
        written.push(...batch.map((b) => b.note_id));
        // asked between writes too: the field's column grows with the memory
        const all = memory.notes;
        expect(ids(notesOfKindWith(all, "error_fix", "error_type", "Syntax"))).toEqual(ids(notesOfKindWith([...all], "error_fix", "error_type", "Syntax")));
      }
      const all = memory.notes;
      const plain = (a: readonly NoteView[]) => [...a];
      for (let t = 0; t < 30; t++) {
        const view = eligibleNotes(all, rng.randbelow(35), `q${rng.randbelow(9)}`);
        for (const kind of [...DATA_KINDS, "absent"]) {
          for (const value of [...VALUES, null, "absent value"]) {
            const byColumns = notesOfKindWith(view, kind, "error_type", value);
            expect(describedNotes(byColumns)).not.toBeNull(); // so nearestNotes ranks it by the columns too
            expect(ids(byColumns)).toEqual(ids(notesOfKindWith(plain(view), kind, "error_type", value)));
            expect(ids(byColumns)).toEqual(ids(notesOfKind(plain(view), kind).filter((n) => (n.data as { error_type?: unknown } | null)?.error_type === value)));
          }
          expect(latestOfKindWithString(view, kind, "sheet")).toBe(latestOfKindWithString(plain(view), kind, "sheet"));
          expect(latestOfKindWithString(view, kind, "nothing")).toBeNull();
        }
        for (const k of [1, 4, 50]) {
          const recent = mostRecent(view, k);
          expect(ids(recent)).toEqual(ids(mostRecent(plain(view), k)));
          recent.forEach((n, i) => expect(n).toBe(mostRecent(plain(view), k)[i]));
        }
      }
    }
  });

  it("mostRecent by columns: the k latest experiences, an equal position the later note first", async () => {
    const memory = new NoteMemory("probe", undefined, false);
    const exp = (i: number, position: number) => stampNotes("probe", { queryId: `q${i}`, dbId: "db", streamPosition: position, episodeId: `e${i}` }, [{ kind: i % 3 === 0 ? "insight" : "experience", text: `t${i}` }])[0];
    await memory.apply([5, 2, 5, 9, 1, 9, 9, 0, 4, 5, 3].map((p, i) => exp(i + 1, p)));
    const all = memory.notes;
    expect(describedNotes(all)).not.toBeNull();
    for (const k of [1, 2, 3, 5, 20]) {
      const expected = [...all]
        .map((note, i) => ({ note, i }))
        .filter(({ note }) => note.kind === "experience")
        .sort((a, b) => b.note.source_stream_position - a.note.source_stream_position || b.i - a.i)
        .slice(0, k)
        .map(({ note }) => note.note_id);
      expect(ids(mostRecent(all, k))).toEqual(expected);
    }
  });
});
