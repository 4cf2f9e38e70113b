// topByCosine (lib/methods/hooks.ts), the peers' note ranking: its partial selection returns what
// sorting every score returns — best first, ties in memory order, notes without vectors skipped —
// for every k, with ties and vectorless notes mixed in (issue 38 §4: it no longer sorts a whole memory).
import { describe, expect, it } from "vitest";
import { topByCosine, type NoteView } from "../../lib/methods/hooks.ts";
import { PyRandom } from "../../lib/random.ts";

const note = (i: number, vector: Float32Array | null): NoteView => ({ note_id: `n${i}`, kind: "insight", text: `t${i}`, key: `t${i}`, polarity: "positive", data: null, source_query_id: `q${i}`, source_db_id: "db", source_stream_position: i, source_episode_id: `e${i}`, vector });

/** The definition: every score sorted, best first, ties by memory order. */
const reference = (memory: readonly NoteView[], query: Float32Array, k: number) =>
  memory
    .flatMap((n, i) => (n.vector ? [{ n, s: n.vector.reduce((a, x, j) => a + x * query[j], 0), i }] : []))
    .sort((a, b) => b.s - a.s || a.i - b.i)
    .slice(0, k)
    .map((x) => x.n.note_id);

describe("topByCosine", () => {
  it("equals sorting every score, for every k, with tied scores and notes without vectors", () => {
    const rng = new PyRandom(5);
    // few distinct vectors (many exact ties), some notes with none
    const palette = Array.from({ length: 6 }, () => Float32Array.from({ length: 4 }, () => rng.randbelow(5) - 2));
    const memory = Array.from({ length: 300 }, (_, i) => note(i, rng.random() < 0.1 ? null : palette[rng.randbelow(palette.length)]));
    for (let q = 0; q < 5; q++) {
      const query = Float32Array.from({ length: 4 }, () => rng.randbelow(5) - 2);
      for (const k of [1, 2, 3, 4, 7, 64, 65, 299, 400]) {
        expect(topByCosine(memory, query, k).map((p) => p.note.note_id), `k ${k}`).toEqual(reference(memory, query, k));
      }
    }
    expect(topByCosine([], new Float32Array(4), 3)).toEqual([]);
    expect(topByCosine(memory, new Float32Array(4), 0)).toEqual([]);
  });
});
