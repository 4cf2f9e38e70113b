/**
 * The note fields that the kit's note filters read, kept as columns (issue 38 §4), as MERIT keeps its
 * entries' scan fields (lib/retrieval/memory-columns.ts). A run's notes are frozen views scattered in
 * the heap; each filter over 100,000 of them (`eligibleNotes`, `notesOfKind`, the latest note of a
 * kind, the vector rows `nearestNotes` ranks) read every view's fields, several milliseconds each
 * (bench/README.md). Here each note a NoteMemory hands out has a slot in its memory's columns — kind,
 * stream position and source query interned to small integers, whether it comes from a read-only
 * source memory, its vector row — and the arrays the kit hands a hook (the memory's notes, the
 * eligible ones, the notes of one kind) are described by the slots of their elements, so a filter
 * over them is a loop over typed arrays that reads no view.
 *
 * Same answers: each columnar filter runs the predicate of its object twin (the same
 * `writtenBefore` / `fromOtherQuery` of lib/memory/eligibility.ts, `===` on interned strings) and keeps
 * the elements in order; test/methods/note-columns.test.ts compares them. An array is described only
 * while it is provably the one described: frozen, or (an array a hook may change, such as
 * `notesOfKind`'s) each element checked by identity against the view of its slot before use, which
 * reads pointers, not views. Anything else (a hook's own copies, a note of another memory, a field
 * of an unexpected type) leaves the filters on their object path.
 * @module
 */
import { fromOtherQuery, writtenBefore } from "../memory/eligibility.ts";
import type { NoteView } from "./hooks.ts";
import type { NoteVectors } from "./note-index.ts";

/** Where a note view keeps its slot (a non-enumerable symbol: no copy, JSON or clone sees it). */
const SLOT = Symbol("merit.noteSlot");

interface SlotRef {
  readonly table: NoteColumns;
  readonly slot: number;
}

/** The slots of one array's elements, in order. */
interface Description {
  readonly table: NoteColumns;
  readonly slots: Int32Array;
}

/** The codes of a data-field column (`NoteColumns#fields`) that are no interned string. */
const NULL_CODE = -2;
const OTHER_CODE = -1;
/** A code no column holds (a kind or value never interned). */
const NO_CODE = -3;

const described = new WeakMap<readonly NoteView[], Description>();

/** The columns of one memory's notes, one slot per view in the order they were made (slots never move). */
export class NoteColumns {
  /** The memory's vectors, which the rows of `rows` index (null: none kept). */
  readonly vectors: NoteVectors | null;
  /** Slot → the view. */
  readonly #views: NoteView[] = [];
  readonly #strings = new Map<string, number>();
  #kind = new Int32Array(1024);
  #query = new Int32Array(1024);
  #position = new Float64Array(1024);
  #source = new Uint8Array(1024);
  #row = new Int32Array(1024);
  /** The last `eligible` answer over a frozen array, and what it was asked. */
  #lastEligible: { notes: readonly NoteView[]; position: number; queryId: string; out: readonly NoteView[] } | null = null;
  /** True once a note had a field of an unexpected type: then no array of this memory is described. */
  #plain = false;
  /**
   * Columns of one top-level field of the notes' data each (`data[field]`, as a hook reads it), made
   * at the first filter that asks for the field and extended to new slots at later ones (a view is
   * deeply frozen: its data never changes): a string value interned, NULL_CODE for null, OTHER_CODE
   * for anything else (no such field, a number, an object, data that is not an object).
   */
  readonly #fields = new Map<string, { codes: Int32Array; filled: number }>();

  constructor(vectors: NoteVectors | null = null) {
    this.vectors = vectors;
  }

  /** Number of slots. */
  get size(): number {
    return this.#views.length;
  }

  #intern(s: string): number {
    let id = this.#strings.get(s);
    if (id === undefined) this.#strings.set(s, (id = this.#strings.size));
    return id;
  }

  #grow(size: number): void {
    const grow = <T extends Int32Array | Float64Array | Uint8Array>(a: T, make: (n: number) => T): T => {
      const b = make(Math.max(size, 2 * a.length));
      b.set(a);
      return b;
    };
    this.#kind = grow(this.#kind, (n) => new Int32Array(n));
    this.#query = grow(this.#query, (n) => new Int32Array(n));
    this.#position = grow(this.#position, (n) => new Float64Array(n));
    this.#source = grow(this.#source, (n) => new Uint8Array(n));
    this.#row = grow(this.#row, (n) => new Int32Array(n));
  }

  /**
   * Gives `view` (not yet frozen) the next slot, its fields copied into the columns; `row` = its
   * vector row in the memory's NoteVectors, or -1. Returns the slot.
   */
  add(view: NoteView, row: number): number {
    const slot = this.#views.length;
    if (slot >= this.#kind.length) this.#grow(slot + 1);
    this.#views.push(view);
    Object.defineProperty(view, SLOT, { value: { table: this, slot } satisfies SlotRef });
    if (typeof view.kind !== "string" || typeof view.source_query_id !== "string" || typeof view.source_stream_position !== "number") this.#plain = true;
    else {
      this.#kind[slot] = this.#intern(view.kind);
      this.#query[slot] = this.#intern(view.source_query_id);
      this.#position[slot] = view.source_stream_position;
    }
    this.#row[slot] = row;
    return slot;
  }

  /** The column of `data[field]` over every slot (the class's `#fields`). */
  #field(field: string): Int32Array {
    let col = this.#fields.get(field);
    if (col === undefined) this.#fields.set(field, (col = { codes: new Int32Array(0), filled: 0 }));
    const n = this.#views.length;
    if (col.filled < n) {
      if (col.codes.length < n) {
        const grown = new Int32Array(Math.max(n, 2 * col.codes.length));
        grown.set(col.codes.subarray(0, col.filled));
        col.codes = grown;
      }
      for (let s = col.filled; s < n; s++) {
        const v = (this.#views[s].data as Record<string, unknown> | null)?.[field];
        col.codes[s] = typeof v === "string" ? this.#intern(v) : v === null ? NULL_CODE : OTHER_CODE;
      }
      col.filled = n;
    }
    return col.codes;
  }

  /** Marks the note of `slot` as a read-only source memory's (eligible at every position). */
  markSource(slot: number): void {
    this.#source[slot] = 1;
    this.#lastEligible = null;
  }

  /** `notes` (views of this memory at `slots`, in order), frozen and described. */
  freeze(notes: NoteView[], slots: Int32Array): readonly NoteView[] {
    const out = Object.freeze(notes);
    if (!this.#plain) described.set(out, { table: this, slots });
    return out;
  }

  /** The elements of a described array at the indices `at[0…n)`, in order, described (frozen when `frozen`; every element kept: the same frozen array). */
  #take(notes: readonly NoteView[], slots: Int32Array, at: Int32Array, n: number, frozen: boolean): NoteView[] | readonly NoteView[] {
    if (frozen && n === slots.length && Object.isFrozen(notes)) return notes;
    const out = new Array<NoteView>(n);
    const outSlots = new Int32Array(n);
    for (let j = 0; j < n; j++) {
      out[j] = notes[at[j]];
      outSlots[j] = slots[at[j]];
    }
    if (frozen) return this.freeze(out, outSlots);
    described.set(out, { table: this, slots: outSlots });
    return out;
  }

  /** The elements of a described array whose slot passes `keep`, in order (described: frozen or not). */
  #select(notes: readonly NoteView[], slots: Int32Array, keep: (slot: number) => boolean, frozen: boolean): NoteView[] | readonly NoteView[] {
    const at = new Int32Array(slots.length);
    let n = 0;
    for (let i = 0; i < slots.length; i++) if (keep(slots[i])) at[n++] = i;
    return this.#take(notes, slots, at, n, frozen);
  }

  /** The elements whose `codes[slot] === want` (and, with `codes2`, `codes2[slot] === want2`): #select's answer without a call per element. */
  #selectCodes(notes: readonly NoteView[], slots: Int32Array, codes: Int32Array, want: number, codes2: Int32Array | null, want2: number): NoteView[] {
    const at = new Int32Array(slots.length);
    let n = 0;
    if (codes2 === null) {
      for (let i = 0; i < slots.length; i++) if (codes[slots[i]] === want) at[n++] = i;
    } else {
      for (let i = 0; i < slots.length; i++) {
        const s = slots[i];
        if (codes[s] === want && codes2[s] === want2) at[n++] = i;
      }
    }
    return this.#take(notes, slots, at, n, false) as NoteView[];
  }

  /**
   * `eligibleNotes`' answer by the columns (hooks.ts), frozen. The last answer over a frozen array is
   * kept and returned again for the same array, position and query (an episode's repair steps and its
   * write see one eligible view; the memory's array changes identity whenever the memory changes).
   */
  eligible(notes: readonly NoteView[], slots: Int32Array, position: number, queryId: string): readonly NoteView[] {
    const last = this.#lastEligible;
    if (last !== null && last.notes === notes && last.position === position && last.queryId === queryId) return last.out;
    const current = this.#strings.get(queryId) ?? -1;
    const source = this.#source;
    const pos = this.#position;
    const query = this.#query;
    const out = this.#select(notes, slots, (s) => (source[s] === 1 || writtenBefore(pos[s], position)) && fromOtherQuery(query[s], current), true);
    this.#lastEligible = Object.isFrozen(notes) ? { notes, position, queryId, out } : null;
    return out;
  }

  /** `notesOfKind`'s answer by the columns (a fresh array, described while unchanged). */
  ofKind(notes: readonly NoteView[], slots: Int32Array, kind: string): NoteView[] {
    const id = this.#strings.get(kind);
    return this.#selectCodes(notes, slots, this.#kind, id ?? NO_CODE, null, 0); // a kind never seen: no slot has it
  }

  /**
   * `notesOfKindWith`'s answer by the columns (peers/common.ts): the elements of `kind` whose
   * `data[field] === value` (a string, or null), a fresh array, described while unchanged.
   */
  ofKindWith(notes: readonly NoteView[], slots: Int32Array, kind: string, field: string, value: string | null): NoteView[] {
    const codes = this.#field(field); // first: it interns the field's values
    const id = this.#strings.get(kind);
    const want = value === null ? NULL_CODE : this.#strings.get(value);
    return this.#selectCodes(notes, slots, this.#kind, id ?? NO_CODE, codes, want ?? NO_CODE);
  }

  /**
   * The last element of the greatest stream position (of `kind`, when given; with `stringField`, of
   * those whose `data[stringField]` is a string); null when none.
   */
  latest(notes: readonly NoteView[], slots: Int32Array, kind?: string, stringField?: string): NoteView | null {
    const codes = stringField === undefined ? null : this.#field(stringField);
    const id = kind === undefined ? -1 : this.#strings.get(kind);
    if (id === undefined) return null;
    const kinds = this.#kind;
    const pos = this.#position;
    let best = -1;
    for (let i = 0; i < slots.length; i++) {
      const s = slots[i];
      if (id >= 0 && kinds[s] !== id) continue;
      if (codes !== null && codes[s] < 0) continue;
      if (best < 0 || pos[s] >= pos[slots[best]]) best = i;
    }
    return best < 0 ? null : notes[best];
  }

  /**
   * The `k` elements of `kind` of the greatest stream positions, greatest first, an equal position
   * the later element first (`mostRecent`'s sort, peers/exprag.ts, without reading a view); null when
   * a position is not a number the sort orders (NaN): the caller sorts then.
   */
  mostRecent(notes: readonly NoteView[], slots: Int32Array, kind: string, k: number): NoteView[] | null {
    const id = this.#strings.get(kind);
    if (id === undefined || k <= 0) return [];
    const kinds = this.#kind;
    const pos = this.#position;
    const best: number[] = []; // indices into notes, best first
    for (let i = 0; i < slots.length; i++) {
      const s = slots[i];
      if (kinds[s] !== id) continue;
      const p = pos[s];
      if (Number.isNaN(p)) return null;
      // a later element goes before every kept one of an equal or smaller position
      if (best.length === k && p < pos[slots[best[k - 1]]]) continue;
      let j = best.length;
      while (j > 0 && pos[slots[best[j - 1]]] <= p) j -= 1;
      best.splice(j, 0, i);
      if (best.length > k) best.pop();
    }
    return best.map((i) => notes[i]);
  }

  /**
   * The vector rows (-1: no vector) of an array described as `slots`, checking on the way — unless it
   * is frozen — that each element is still the view of its slot (`matches`, in the same pass); null
   * when one is not.
   */
  rowsOf(notes: readonly NoteView[], slots: Int32Array): Int32Array | null {
    if (notes.length !== slots.length) return null;
    const row = this.#row;
    const out = new Int32Array(slots.length);
    if (Object.isFrozen(notes)) {
      for (let i = 0; i < slots.length; i++) out[i] = row[slots[i]];
      return out;
    }
    const views = this.#views;
    for (let i = 0; i < slots.length; i++) {
      const s = slots[i];
      if (notes[i] !== views[s]) return null;
      out[i] = row[s];
    }
    return out;
  }

  /** Whether `note` is the element `notes[i]` for some i, by the slots (null: cannot tell here). */
  contains(notes: readonly NoteView[], slots: Int32Array, note: unknown): boolean | null {
    const ref = slotOf(note);
    if (ref === undefined || ref.table !== this) return false; // a note of no memory or of another is in no array of this one
    // slots increase along every array the kit describes (memory order); binary search, else a scan
    let lo = 0;
    let hi = slots.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (slots[mid] === ref.slot) return notes[mid] === note;
      if (slots[mid] < ref.slot) lo = mid + 1;
      else hi = mid - 1;
    }
    for (let i = 0; i < slots.length; i++) if (slots[i] === ref.slot) return notes[i] === note;
    return false;
  }

  /** Whether `notes` still holds, element by element, the views of `slots` (pointer reads only). */
  matches(notes: readonly NoteView[], slots: Int32Array): boolean {
    if (notes.length !== slots.length) return false;
    const views = this.#views;
    for (let i = 0; i < slots.length; i++) if (notes[i] !== views[slots[i]]) return false;
    return true;
  }
}

function slotOf(note: unknown): SlotRef | undefined {
  return typeof note === "object" && note !== null ? (note as { [SLOT]?: SlotRef })[SLOT] : undefined;
}

/** The table and slots of `notes` when it is provably the array described (module comment); else null. */
export function describedNotes(notes: readonly NoteView[]): Description | null {
  const d = described.get(notes);
  if (d === undefined) return null;
  if (Object.isFrozen(notes) || d.table.matches(notes, d.slots)) return d;
  described.delete(notes);
  return null;
}

/**
 * The vector rows of `notes`' elements (-1: no vector) and their store, when `notes` is provably the
 * array described (as `describedNotes`, checked in the same pass); else null.
 */
export function describedRows(notes: readonly NoteView[]): { rows: Int32Array; vectors: NoteVectors | null } | null {
  const d = described.get(notes);
  if (d === undefined) return null;
  const rows = d.table.rowsOf(notes, d.slots);
  if (rows === null) described.delete(notes);
  return rows === null ? null : { rows, vectors: d.table.vectors };
}

/** Marks a view of some memory as a read-only source memory's in its columns (hooks.ts `markSourceNote`). */
export function markSourceSlot(note: NoteView): void {
  const ref = slotOf(note);
  ref?.table.markSource(ref.slot);
}

/**
 * Membership in `notes` (a note the hook returned is one it was given): by the slots when `notes` is
 * described, else a Set over its elements.
 */
export function noteMembership(notes: readonly NoteView[]): { has(note: unknown): boolean } {
  const d = describedNotes(notes);
  if (d !== null) {
    const { table, slots } = d;
    return { has: (note) => table.contains(notes, slots, note) === true };
  }
  const set = new Set<unknown>(notes);
  return { has: (note) => set.has(note) };
}
