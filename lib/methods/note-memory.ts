/**
 * A memory hook's notes in force during a run (METHOD.md §12.4; issue 36 §6): the run applies each
 * committed episode's `memory_writes` (new notes) and `memory_retires` (ids of notes its write
 * superseded or retired) in stream order — the same on a fresh run and on a resumed one, which
 * rebuilds the memory from the committed trajectories. The notes a hook is given are deeply frozen
 * (data included) and their vectors are copies, so nothing a hook does to them reaches the memory:
 * revising is the one sanctioned change, recorded in the trajectory and checked by `merit audit`.
 * @module
 */
import { MeritError } from "../errors.ts";
import type { Embedder } from "../llm/types.ts";
import { deepFreeze } from "./hook-guard.ts";
import { markSourceNote, type Note, type NoteView } from "./hooks.ts";
import { NoteColumns } from "./note-columns.ts";
import { defineNoteVector, NoteVectors } from "./note-index.ts";

/**
 * A stored note as hooks are given it: deeply frozen, its vector a fresh copy at each read. With
 * `vectors`, the stored vector is also kept there (one row), so `nearestNotes` ranks without copies;
 * with `columns`, the note gets a slot there (lib/methods/note-columns.ts), so the kit's filters
 * read columns instead of views.
 */
export function noteView(note: Note, vector: Float32Array | null, vectors?: NoteVectors, columns?: NoteColumns): NoteView {
  const view = { ...structuredClone(note) } as Note & { vector: Float32Array | null };
  const row = defineNoteVector(view, note.kind, vector === null ? null : Float32Array.from(vector), vectors);
  columns?.add(view as NoteView, row);
  return deepFreeze(view) as NoteView;
}

/** The notes in force of one run, in the order they were written. */
export class NoteMemory {
  private readonly inForce: NoteView[] = [];
  /** The column slot of each note in force (aligned with `inForce`). */
  private readonly inForceSlots: number[] = [];

  private readonly method: string;
  private readonly embedder: Embedder | undefined;
  private readonly embedsNotes: boolean;
  /** The notes' vectors, one row per note written (lib/methods/note-index.ts). */
  private readonly vectors: NoteVectors;
  /** The notes' filter fields, one slot per note made (lib/methods/note-columns.ts). */
  private readonly columns: NoteColumns;
  /** The frozen array `notes` returns until the memory changes (null: to be made at the next read). */
  private cached: readonly NoteView[] | null = null;

  /** `prefilterMin`: pools of at least this many notes are cut by the int8 prefilter before exact scoring (note-index.ts; default 2,048; the answer is the same). */
  constructor(method: string, embedder: Embedder | undefined, embedsNotes: boolean, prefilterMin?: number) {
    this.method = method;
    this.embedder = embedder;
    this.embedsNotes = embedsNotes;
    this.vectors = new NoteVectors(prefilterMin);
    this.columns = new NoteColumns(this.vectors);
  }

  private readonly source: NoteView[] = [];
  private readonly sourceSlots: number[] = [];

  /**
   * The notes in force: a read-only source memory's first, then the run's own. One frozen array,
   * the same object at every read until the memory changes (`apply`, `addSource`), described by
   * its column slots, so hooks' filters over it read the columns.
   */
  get notes(): readonly NoteView[] {
    if (this.cached === null) {
      const slots = new Int32Array(this.sourceSlots.length + this.inForceSlots.length);
      slots.set(this.sourceSlots);
      slots.set(this.inForceSlots, this.sourceSlots.length);
      this.cached = this.columns.freeze(this.source.concat(this.inForce), slots);
    }
    return this.cached;
  }

  /** A note view of this memory (vector row and column slot), its slot appended to `slots`. */
  private view(note: Note, vector: Float32Array | null, slots: number[]): NoteView {
    const view = noteView(note, vector, this.vectors, this.columns);
    slots.push(this.columns.size - 1);
    return view;
  }

  /** Adds a read-only source memory's notes (config memory_source), embedded when the method embeds notes. */
  async addSource(notes: readonly Note[]): Promise<void> {
    if (notes.length === 0) return;
    if (this.embedsNotes && !this.embedder) throw new MeritError(`method ${this.method} embeds its notes but the run has no embedder`);
    const vectors = this.embedsNotes ? await this.embedder!.embed(notes.map((n) => n.key)) : notes.map(() => null);
    this.cached = null;
    notes.forEach((n, i) => this.source.push(markSourceNote(this.view(n, vectors[i], this.sourceSlots))));
  }

  /** How many notes are in force. */
  get size(): number {
    return this.inForce.length;
  }

  /** Applies one committed episode's revision: the notes it retires leave, then its new notes join (embedded when the method embeds notes). */
  async apply(written: readonly Note[], retired: readonly string[] = []): Promise<void> {
    for (const id of retired) {
      const at = this.inForce.findIndex((n) => n.note_id === id);
      if (at < 0) throw new MeritError(`method ${this.method}: a committed episode retires note ${id}, which is not in force; the trajectories were changed after the run: start it again in a fresh --out`);
      this.inForce.splice(at, 1);
      this.inForceSlots.splice(at, 1);
      this.cached = null;
    }
    if (written.length === 0) return;
    if (this.embedsNotes && !this.embedder) throw new MeritError(`method ${this.method} embeds its notes but the run has no embedder`);
    const vectors = this.embedsNotes ? await this.embedder!.embed(written.map((n) => n.key)) : written.map(() => null);
    this.cached = null;
    written.forEach((n, i) => this.inForce.push(this.view(n, vectors[i], this.inForceSlots)));
  }
}
