/**
 * The peers' nearest-note search (METHOD.md §13; issue 38 §4): the vectors of one run's notes kept
 * by their memory (lib/methods/note-memory.ts), so ranking a memory by cosine reads the stored
 * vectors where they lie instead of copying every note's `vector` (a fresh copy at each read: at
 * 100,000 notes of 1,024 dimensions, 400 MB copied per retrieval).
 *
 * Choice, as MERIT's dense index (lib/retrieval/dense.ts, the same class): up to `exactPoolLimit`
 * (default 5,000, MERIT's default `retrieval.exact_pool_limit`) notes with vectors in the pool, every
 * note is scored exactly — float64 dot product summed in index order, bit-identical to `cosine` in
 * hooks.ts, four notes side by side — and the `k` best are kept in one pass, ties in memory order:
 * the same notes in the same order with the same scores as `topByCosine` (test/methods/
 * nearest-notes.test.ts). Above the limit the pool is cut to an HNSW shortlist (hnswlib-node, M 16,
 * efConstruction 64, ef 1,024 — MERIT's index searches at 4,096; graphs sharded by note kind, so a
 * pool of one kind is one graph) rescored exactly, and the `k` best of the shortlist are kept:
 * approximate by design, as MERIT's retrieval above its limit. A pool above the limit that is a small
 * part of its kinds' notes (at most SPARSE_POOL_FRACTION, e.g. error_fix_memory's fixes of one failure
 * type) is scored exactly instead: a graph search filtered to it visits about ef / fraction nodes
 * (25–31 ms for one type's ~9,200 of 64,000 fixes), the exact scan only its rows. ef 1,024, not 4,096 (issue 38 §4):
 * a peer's pool is often one kind of note, one graph over the whole memory, and at 4,096 the search
 * visits most of it — 21 ms of hnswlib search alone over 100,000 notes, above the 20 ms goal for a
 * whole retrieval — where 1,024 took 8 ms and picked the same notes against the exact scan (30
 * probes over bench/overhead.ts's 100,000 notes: top-1 30 of 30 at ef 512, 1,024, 2,048 and 4,096;
 * bench/README.md). An array described by the memory's columns (note-columns.ts) gives its vector
 * rows without reading a note. The graph holds the notes in force in the order they were written (a
 * retired note leaves it: the graph is rebuilt), so a resumed run, which rebuilds its memory from
 * the committed trajectories, searches the same graph. Every paper-scale run (≤ 1,534 episodes) is
 * exact.
 *
 * A pool this module cannot vouch for — notes not handed out by a NoteMemory (a hook's own copies,
 * a test's literals), notes of two memories, vectors of another dimension than the query's, a `k`
 * outside 1…64, a NaN score — is ranked by `topByCosine` itself.
 * @module
 */
import { topByCosine, type NoteView, type PickedNote } from "./hooks.ts";
import { DenseIndex, exactDenseScores } from "../retrieval/dense.ts";
import { describedNotes } from "./note-columns.ts";

/** The HNSW search beam of the note search above the exact limit (module comment). */
export const NOTE_EF_SEARCH = 1024;

/**
 * A pool above the exact limit that is at most this fraction of the notes of its kinds is scored
 * exactly rather than searched through their graphs (module comment): a filtered HNSW search visits
 * about ef / fraction nodes, an exact scan the pool's rows.
 */
export const SPARSE_POOL_FRACTION = 0.25;

/** Shard of the notes a memory retired (no pool holds them). */
const RETIRED = "\u0000retired";

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
  /** Row → shard key (the note's kind, or RETIRED). */
  readonly #keys: string[] = [];
  /** Kind → rows of notes in force of that kind. */
  readonly #kindRows = new Map<string, number>();
  #dimension = -1;
  /** True once vectors of two lengths were stored (then every search is `topByCosine`'s). */
  #mixed = false;
  #revision = 0;
  #dense: DenseIndex | null = null;
  /** Kinds whose notes a search above the limit has put in a graph (since the index was last dropped). */
  readonly #graphKinds = new Set<string>();
  /** The widest search since the last `takeNoteSearch`: none, exact, or hnsw. */
  searched: "exact" | "hnsw" | "none" = "none";
  /** Pools of more notes than this are searched through HNSW (a bench raises it to compare with the exact answer). */
  exactPoolLimit: number;
  /** The HNSW search beam above the exact limit (NOTE_EF_SEARCH unless a bench sweeps it). */
  efSearch: number;
  /** The HNSW construction beam of graphs built from now on (64, MERIT's, unless a bench sweeps it). */
  efConstruction = 64;

  constructor(exactPoolLimit = 5000, efSearch = NOTE_EF_SEARCH) {
    this.exactPoolLimit = exactPoolLimit;
    this.efSearch = efSearch;
  }

  /** Stores `vector` as the next row (shard `kind`); its reference for the note. */
  add(kind: string, vector: Float32Array): RowRef {
    if (this.#dimension < 0) this.#dimension = vector.length;
    else if (vector.length !== this.#dimension) this.#mixed = true;
    const ref: RowRef = { store: this, row: this.#vectors.length };
    this.#vectors.push(vector);
    this.#keys.push(kind);
    this.#kindRows.set(kind, (this.#kindRows.get(kind) ?? 0) + 1);
    this.#revision += 1;
    return ref;
  }

  /**
   * The note left the memory: its row moves to a shard no pool reads (a new vector object, so the
   * index sees the move). When a graph may hold it, the index is dropped and rebuilt at the next
   * search from the notes then in force, in the order they were written: a graph that merely marked
   * the note deleted would still route searches through it, and a resumed run, which builds its
   * graph after the retirement, would search another graph.
   */
  retire(view: NoteView): void {
    const ref = rowOf(view);
    if (ref === undefined || ref.store !== this) return;
    if (this.#graphKinds.has(this.#keys[ref.row])) {
      this.#dense = null;
      this.#graphKinds.clear();
    }
    this.#vectors[ref.row] = Float32Array.from(this.#vectors[ref.row]);
    const kind = this.#keys[ref.row];
    this.#kindRows.set(kind, (this.#kindRows.get(kind) ?? 1) - 1);
    this.#keys[ref.row] = RETIRED;
    this.#revision += 1;
  }

  /** Whether `rows` are at most SPARSE_POOL_FRACTION of the notes in force of their kinds (a filtered pool: scored exactly). */
  #sparse(rows: readonly number[]): boolean {
    const keys = this.#keys;
    const kinds = new Set<string>();
    let last: string | undefined;
    for (const row of rows) if (keys[row] !== last) kinds.add((last = keys[row]));
    let inForce = 0;
    for (const kind of kinds) inForce += this.#kindRows.get(kind) ?? 0;
    return rows.length <= SPARSE_POOL_FRACTION * inForce;
  }

  /** The `k` best of `rows` (rows of this memory, in pool order) by cosine with `query`; null when it cannot vouch for the answer. */
  search(rows: readonly number[], notes: readonly NoteView[], query: Float32Array, k: number): { picked: PickedNote[]; mode: "exact" | "hnsw" } | null {
    if (this.#mixed || query.length !== this.#dimension) return null;
    let rowsScored: readonly number[] = rows;
    let scores: number[];
    let mode: "exact" | "hnsw" = "exact";
    if (rows.length <= this.exactPoolLimit || this.#sparse(rows)) scores = exactDenseScores(query, this.#vectors, rows);
    else {
      this.#dense ??= new DenseIndex(this.#dimension, { exactPoolLimit: this.exactPoolLimit, efConstruction: this.efConstruction });
      this.#dense.setEfSearch(this.efSearch);
      const keys = this.#keys;
      let last: string | undefined;
      for (const row of rows) if (keys[row] !== last) this.#graphKinds.add((last = keys[row]));
      const found = this.#dense.scores(query, this.#vectors, rows, k, (row) => keys[row], this.#revision);
      rowsScored = found.rows;
      scores = found.scores;
      mode = found.mode;
    }
    // Pool position of each scored row (HNSW keeps pool order, a subset), for ties in memory order.
    const at = rowsScored === rows ? null : positions(rows, rowsScored);
    const best: number[] = []; // indices into rowsScored, best first
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
    return { picked: best.map((i) => ({ note: notes[at === null ? i : at[i]], score: scores[i] })), mode };
  }
}

/** For each row of `subset` (a subsequence of `rows`), its index in `rows`. */
function positions(rows: readonly number[], subset: readonly number[]): number[] {
  const out: number[] = [];
  let j = 0;
  for (let i = 0; i < rows.length && out.length < subset.length; i++) if (rows[i] === subset[j]) (out.push(i), (j += 1));
  return out;
}

function rowOf(note: NoteView): RowRef | undefined {
  return (note as unknown as { [ROW]?: RowRef })[ROW];
}

/**
 * The `k` notes of `memory` nearest `query` by cosine, best first, ties in memory order, notes
 * without vectors skipped: `topByCosine`'s answer (exactly, up to the exact limit; above it an HNSW
 * shortlist's, module comment), from the vectors the memory stores.
 */
export function nearestNotes(memory: readonly NoteView[], query: Float32Array, k: number): PickedNote[] {
  if (memory.length === 0) return [];
  if (!Number.isInteger(k) || k <= 0 || k > 64) return topByCosine(memory, query, k);
  const d = describedNotes(memory);
  if (d !== null) return nearestByColumns(memory, d.table.rows(d.slots), d.table.vectors, query, k);
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
  if (store.searched !== "hnsw") store.searched = found.mode;
  return found.picked;
}

/** `nearestNotes` over a described array: its elements' vector rows read from the columns (-1: no vector, skipped). */
function nearestByColumns(memory: readonly NoteView[], rowOfNote: Int32Array, store: NoteVectors | null, query: Float32Array, k: number): PickedNote[] {
  let all = true;
  for (let i = 0; i < rowOfNote.length && all; i++) all = rowOfNote[i] >= 0;
  let rows: number[];
  let notes: readonly NoteView[];
  if (all) {
    rows = new Array<number>(rowOfNote.length);
    for (let i = 0; i < rowOfNote.length; i++) rows[i] = rowOfNote[i];
    notes = memory;
  } else {
    rows = [];
    const kept: NoteView[] = [];
    for (let i = 0; i < rowOfNote.length; i++)
      if (rowOfNote[i] >= 0) {
        rows.push(rowOfNote[i]);
        kept.push(memory[i]);
      }
    notes = kept;
  }
  if (rows.length === 0) return [];
  if (store === null) return topByCosine(memory, query, k);
  const found = store.search(rows, notes, query, k);
  if (found === null) return topByCosine(memory, query, k);
  if (store.searched !== "hnsw") store.searched = found.mode;
  return found.picked;
}

/**
 * How `nearestNotes` searched the memory `notes` come from since the last call — `hnsw` when some
 * pool went through the index (approximate), `exact`, or `none` — and starts counting afresh: for
 * the retrieval log's `dense_search` of a memory hook's retrieve (call it before and after).
 */
export function takeNoteSearch(notes: readonly NoteView[]): "exact" | "hnsw" | "none" {
  for (const note of notes) {
    const ref = rowOf(note);
    if (ref === undefined) continue;
    const mode = ref.store.searched;
    ref.store.searched = "none";
    return mode;
  }
  return "none";
}
