/**
 * The peers' nearest-note search (METHOD.md §13; issue 38 §4): the vectors of one run's notes kept
 * by their memory (lib/methods/note-memory.ts), so ranking a memory by cosine reads the stored
 * vectors where they lie instead of copying every note's `vector` (a fresh copy at each read: at
 * 100,000 notes of 1,024 dimensions, 400 MB copied per retrieval).
 *
 * Exact at every size: the answer is `topByCosine`'s — the same notes in the same order with the
 * same scores (float64 dot product summed in index order, bit-identical to `cosine` in hooks.ts),
 * ties in memory order (test/methods/nearest-notes.test.ts). A pool of fewer than `prefilterMin`
 * (default PREFILTER_MIN, 2,048: every paper-scale run) notes is scored exactly, four notes side by
 * side. A larger pool is first cut by lib/retrieval/int8-scan.ts — the notes' vectors also kept as
 * 8-bit integers, scanned with WebAssembly SIMD — to the notes whose exact score provably may reach
 * the `k` best (an error bound per note), and only those are scored exactly: the same answer at a
 * quarter of the bytes read and a fraction of the arithmetic (bench/overhead.ts: a whole retrieval
 * over 100,000 notes 8–11.5 ms, the same retrieve with the exact scan 46–120 ms). Before this, pools
 * above 5,000 notes went through an HNSW shortlist (approximate, ef 1,024; a graph of 100,000 notes
 * took ~90 s to build and 8–20 ms to search): bench/README.md, seventh pass. An array described by the memory's columns
 * (note-columns.ts) gives its vector rows without reading a note. Notes a memory retired are in no
 * pool, so nothing is rebuilt when they leave, and a resumed run searches what a fresh one does.
 *
 * A pool this module cannot vouch for — notes not handed out by a NoteMemory (a hook's own copies,
 * a test's literals), notes of two memories, vectors of another dimension than the query's, a `k`
 * outside 1…64, a NaN score — is ranked by `topByCosine` itself.
 * @module
 */
import { topByCosine, type NoteView, type PickedNote } from "./hooks.ts";
import { exactDenseScores } from "../retrieval/dense.ts";
import { Int8Rows } from "../retrieval/int8-scan.ts";
import { describedRows } from "./note-columns.ts";

/** Pools of at least this many notes are cut by the int8 prefilter before the exact scoring (module comment). */
export const PREFILTER_MIN = 2048;

/** Where a note handed out by a NoteMemory keeps its row (a non-enumerable symbol: no copy, JSON or clone sees it). */
const ROW = Symbol("merit.noteRow");

interface RowRef {
  readonly store: NoteVectors;
  readonly row: number;
}

/** Where a note handed out by a NoteMemory keeps its stored vector (or null). */
const STORED = Symbol("merit.noteVector");

/** The `vector` getter every note view shares: a fresh copy of the stored vector at each read. */
function vectorCopy(this: { [STORED]?: Float32Array | null }): Float32Array | null {
  const stored = this[STORED];
  return stored === undefined || stored === null ? null : Float32Array.from(stored);
}

/**
 * Gives `view` (not yet frozen) its `vector` — an enumerable getter returning a fresh copy of
 * `stored` at each read — and, with `store`, a row there holding `stored`. Every view gets the same
 * properties in the same order with one getter function shared by all (no closure per note).
 * Returns the row (-1: none).
 */
export function defineNoteVector(view: object, kind: string, stored: Float32Array | null, store?: NoteVectors): number {
  const ref = stored !== null && store !== undefined ? store.add(kind, stored) : undefined;
  Object.defineProperty(view, "vector", { enumerable: true, get: vectorCopy });
  Object.defineProperty(view, STORED, { value: stored });
  Object.defineProperty(view, ROW, { value: ref });
  return ref === undefined ? -1 : ref.row;
}

/** The vectors of one memory's notes, one row per note in the order they were written. */
export class NoteVectors {
  /** Row → the stored vector (the object a note's `vector` getter copies). */
  readonly #vectors: Float32Array[] = [];
  #dimension = -1;
  /** True once vectors of two lengths were stored (then every search is `topByCosine`'s). */
  #mixed = false;
  /** Row → the note's kind (rows of one kind lie together in the int8 copy). */
  readonly #kinds: string[] = [];
  /**
   * The rows again as int8 (lib/retrieval/int8-scan.ts), made at the first search that cuts a pool
   * (each holds a WebAssembly memory, whose address-space reservation is large: small memories,
   * e.g. every paper-scale run's and most tests', never make one), then kept in step with `add`.
   */
  #int8: Int8Rows | null = null;
  /** The widest search since the last `takeNoteSearch`: none or exact. */
  searched: "exact" | "none" = "none";
  /** Pools of at least this many notes are cut by the int8 prefilter first (a bench sets Infinity: the plain exact scan). */
  prefilterMin: number;

  constructor(prefilterMin = PREFILTER_MIN) {
    this.prefilterMin = prefilterMin;
  }

  /** Stores `vector` as the next row (kept with the other rows of `kind` in the int8 copy); its reference for the note. */
  add(kind: string, vector: Float32Array): RowRef {
    if (this.#dimension < 0) this.#dimension = vector.length;
    else if (vector.length !== this.#dimension) this.#mixed = true;
    const ref: RowRef = { store: this, row: this.#vectors.length };
    this.#vectors.push(vector);
    this.#kinds.push(kind);
    this.#int8?.add(vector, kind); // another length makes it decline every search
    return ref;
  }

  /** The int8 copy of the rows, made now if it was not. */
  #prefilter(): Int8Rows {
    if (this.#int8 === null) {
      const int8 = new Int8Rows(this.#dimension);
      this.#vectors.forEach((v, row) => int8.add(v, this.#kinds[row]));
      this.#int8 = int8;
    }
    return this.#int8;
  }

  /** The `k` best of `rows` (rows of this memory, in pool order) by cosine with `query`; null when it cannot vouch for the answer. */
  search(rows: ArrayLike<number>, notes: readonly NoteView[], query: Float32Array, k: number): { picked: PickedNote[]; mode: "exact" } | null {
    if (this.#mixed || query.length !== this.#dimension) return null;
    // indices into rows of the notes scored exactly: every one, or the prefilter's candidates
    const kept = rows.length >= this.prefilterMin ? this.#prefilter().candidates(query, rows, k) : null;
    const scored = kept === null ? rows : Array.from(kept, (i) => rows[i]);
    const scores = exactDenseScores(query, this.#vectors, scored);
    const best: number[] = []; // indices into scored, best first
    for (let i = 0; i < scores.length; i++) {
      const s = scores[i];
      if (Number.isNaN(s)) return null;
      // scanned in pool order, so an equal score never displaces an earlier note
      if (best.length === k && s <= scores[best[k - 1]]) continue;
      let j = best.length === k ? k - 1 : best.length;
      while (j > 0 && scores[best[j - 1]] < s) j -= 1;
      best.splice(j, 0, i);
      if (best.length > k) best.pop();
    }
    return { picked: best.map((i) => ({ note: notes[kept === null ? i : kept[i]], score: scores[i] })), mode: "exact" };
  }
}

function rowOf(note: NoteView): RowRef | undefined {
  return (note as unknown as { [ROW]?: RowRef })[ROW];
}

/**
 * The `k` notes of `memory` nearest `query` by cosine, best first, ties in memory order, notes
 * without vectors skipped: `topByCosine`'s answer, exactly (module comment), from the vectors the
 * memory stores.
 */
export function nearestNotes(memory: readonly NoteView[], query: Float32Array, k: number): PickedNote[] {
  if (memory.length === 0) return [];
  if (!Number.isInteger(k) || k <= 0 || k > 64) return topByCosine(memory, query, k);
  const d = describedRows(memory);
  if (d !== null) return nearestByColumns(memory, d.rows, d.vectors, query, k);
  let store: NoteVectors | null = null;
  const rows: number[] = [];
  const notes: NoteView[] = [];
  for (let i = 0; i < memory.length; i++) {
    const note = memory[i];
    const ref = rowOf(note);
    if (ref === undefined) {
      if (note.vector === null) continue; // a note without a vector is skipped, as topByCosine does
      return topByCosine(memory, query, k);
    }
    if (store === null) store = ref.store;
    else if (ref.store !== store) return topByCosine(memory, query, k);
    rows.push(ref.row);
    notes.push(note);
  }
  if (store === null) return [];
  const found = store.search(rows, notes, query, k);
  if (found === null) return topByCosine(memory, query, k);
  store.searched = found.mode;
  return found.picked;
}

/** `nearestNotes` over a described array: its elements' vector rows read from the columns (-1: no vector, skipped). */
function nearestByColumns(memory: readonly NoteView[], rowOfNote: Int32Array, store: NoteVectors | null, query: Float32Array, k: number): PickedNote[] {
  let all = true;
  for (let i = 0; i < rowOfNote.length && all; i++) all = rowOfNote[i] >= 0;
  let rows: ArrayLike<number>;
  let notes: readonly NoteView[];
  if (all) {
    rows = rowOfNote;
    notes = memory;
  } else {
    const some: number[] = [];
    const kept: NoteView[] = [];
    for (let i = 0; i < rowOfNote.length; i++)
      if (rowOfNote[i] >= 0) {
        some.push(rowOfNote[i]);
        kept.push(memory[i]);
      }
    rows = some;
    notes = kept;
  }
  if (rows.length === 0) return [];
  if (store === null) return topByCosine(memory, query, k);
  const found = store.search(rows, notes, query, k);
  if (found === null) return topByCosine(memory, query, k);
  store.searched = found.mode;
  return found.picked;
}

/**
 * How `nearestNotes` searched the memory `notes` come from since the last call — `exact` (every
 * search is, module comment) or `none` — and starts counting afresh: for
 * the retrieval log's `dense_search` of a memory hook's retrieve (call it before and after).
 */
export function takeNoteSearch(notes: readonly NoteView[]): "exact" | "none" {
  for (const note of notes) {
    const ref = rowOf(note);
    if (ref === undefined) continue;
    const mode = ref.store.searched;
    ref.store.searched = "none";
    return mode;
  }
  return "none";
}
