/**
 * Experiment runs, a run's memory (METHOD.md §4.3, §6.5, §12.4; issue 36 §2): one object the run
 * talks to whatever the method's memory is — MERIT's entry store (memory/, an entry finalized from
 * each committed episode, the non-causal control's transductive pre-pass) or a note memory (its notes
 * stamped in each committed trajectory, a read-only source memory) — through the same five steps:
 * open, rebuild what committed episodes wrote (so a killed run resumes to the same bytes), bill an
 * episode's planned insertions, store what a committed episode wrote, finish after the stream. Both
 * are rebuilt from the trajectories, the one commit point.
 * @module
 */
import { join } from "node:path";
import type { Dataset } from "../data/types.ts";
import { MeritError } from "../errors.ts";
import type { Embedder } from "../llm/types.ts";
import type { MemoryEntry } from "../memory/entry.ts";
import { denseText } from "../memory/entry-text.ts";
import { finalizeEpisode, type MemoryWriteFlags } from "../memory/finalize.ts";
import { JsonlMemoryStore } from "../memory/jsonl-store.ts";
import { SourcedMemoryStore } from "../memory/sourced-store.ts";
import { checkDimension, l2Normalize } from "../vector.ts";
import type { MemoryStore } from "../memory/store.ts";
import type { Note, NoteView } from "../methods/hooks.ts";
import { noteMemoryOf, type MethodSpec } from "../methods/method.ts";
import { NoteMemory } from "../methods/note-memory.ts";
import { countEmbeddingTokens, type EpisodeResult } from "../repair/episode.ts";
import { finishedFromTrajectory } from "../repair/trajectory-record.ts";
import type { Trajectory } from "../repair/trajectory.ts";
import { RUN_FILES } from "./run-dir.ts";
import type { StreamItem } from "./stream.ts";
import { transductivePrepassEntries } from "./transductive.ts";

/** What one finished episode plans to store, and the embedding it bills for it (as embedding_calls and tokens). */
export interface PlannedWrite {
  entry: MemoryEntry | null;
  embeddingCalls: number;
  embeddingTokens: number | null;
}

/** What a run's memory reads from the run. */
export interface RunMemoryOptions {
  outDir: string;
  method: MethodSpec;
  dataset: Dataset;
  stream: readonly StreamItem[];
  seed: number;
  embedder: Embedder | undefined;
  /** A read-only source memory (config memory_source): a note memory's notes or MERIT's entries; undefined without one. */
  source: () => { notes: readonly Note[]; entries: readonly MemoryEntry[] } | undefined;
  schemaOf: (item: StreamItem) => string;
  /** Above this many notes in a pool a note memory's nearestNotes searches the HNSW index (config retrieval.exact_pool_limit). */
  exactPoolLimit?: number;
}

/** A run's memory: MERIT's entry store, a note memory, or none (every step a no-op). */
export class RunMemory {
  /** MERIT's entry store (null for any other memory). */
  readonly store: MemoryStore | null;
  /** What MERIT's retrieval reads: the store, with a source memory's entries in front when the config names one. */
  retrievalStore: MemoryStore | null;
  private readonly o: RunMemoryOptions;
  private readonly writes: MemoryWriteFlags | null;
  /** transductive_batch: entries stored before the stream and after it, none in between. */
  private readonly deferred: boolean;
  /** 0 when the memory stores no vectors (a ranker that reads none): nothing is embedded or billed. */
  private readonly perInsertion: 0 | 1;
  private readonly notes: NoteMemory;
  private readonly embedsNotes: boolean;
  private readonly prepassTokens = new Map<string, number | null>();

  private constructor(o: RunMemoryOptions, store: MemoryStore | null) {
    this.o = o;
    this.store = store;
    this.retrievalStore = store;
    const policy = o.method.memory;
    this.writes = policy ? policy.writes : null;
    this.deferred = policy?.transductivePrepass ?? false;
    this.perInsertion = policy?.vectors === false ? 0 : 1;
    this.embedsNotes = noteMemoryOf(o.method)?.embedsNotes === true;
    this.notes = new NoteMemory(o.method.name, o.embedder, this.embedsNotes, o.exactPoolLimit);
  }

  /**
   * Opens the run's memory (MERIT's store in the run's memory/ folder: a method whose ranker reads no
   * vectors opens it with dimension 0, so no entry is embedded and the embedder is never loaded).
   */
  static open(o: RunMemoryOptions, retriever: unknown): RunMemory {
    const policy = o.method.memory;
    if (!policy) return new RunMemory(o, null);
    if (!o.embedder || !retriever) throw new MeritError(`method ${o.method.name} needs an embedder and a retriever`);
    return new RunMemory(o, JsonlMemoryStore.open(join(o.outDir, RUN_FILES.memoryDir), { dimension: policy.vectors ? o.embedder.dimension : 0 }));
  }

  /** Whether the method keeps a memory (its retrieval and maintenance are timed). */
  get active(): boolean {
    return this.store !== null || noteMemoryOf(this.o.method) !== undefined;
  }

  /** The notes in force now (what the episode shows its note memory's hooks, the eligible ones only). */
  get noteViews(): readonly NoteView[] {
    return this.notes.notes;
  }

  /**
   * Before the first episode of this session: the transductive pre-pass (its negatives, each billed
   * to the episode of its query), then what the committed episodes wrote — entries a kill kept from
   * being inserted (the rest are skips), notes replayed in stream order with their retirements — and
   * a read-only source memory: its notes, or MERIT's entries put in front of the store (`retrievalStore`).
   */
  async rebuild(committed: readonly Trajectory[]): Promise<void> {
    const { store, writes } = this;
    if (store && writes && this.deferred) {
      for (const entry of transductivePrepassEntries(this.o.dataset, this.o.stream, this.o.seed, this.o.method.name, writes)) {
        await store.insert(entry, this.o.embedder!);
        if (this.perInsertion === 1) this.prepassTokens.set(entry.source_query_id, await countEmbeddingTokens(this.o.embedder, [denseText(entry)]));
      }
    }
    if (store && writes && !this.deferred) await this.insertFinalized(committed);
    if (noteMemoryOf(this.o.method)) for (const t of committed) await this.notes.apply(t.memory_writes ?? [], t.memory_retires);
    const source = this.o.source();
    if (source !== undefined) await this.notes.addSource(source.notes);
    if (source !== undefined && store && source.entries.length > 0) {
      // embedded once when the run starts (each session), billed to no episode, as a source's notes are
      const vectors = store.dimension > 0 ? (await this.o.embedder!.embed(source.entries.map((e) => denseText(e)))).map((raw, i) => (checkDimension(raw, store.dimension, `embedding of source entry ${source.entries[i].entry_id}`), l2Normalize(raw))) : source.entries.map(() => new Float32Array(0));
      this.retrievalStore = new SourcedMemoryStore(store, source.entries, vectors);
    }
  }

  /**
   * What a finished episode stores and the embedding billed to it: its own entry's (or notes')
   * insertion, plus (transductive_batch) the pre-pass negative seeded for its query's initial failure.
   */
  async plan(item: StreamItem, result: EpisodeResult): Promise<PlannedWrite> {
    const entry = this.writes ? finalizeEpisode(result.finished, this.writes) : null;
    const prepassInsertion = this.deferred && item.initial.oracle_correct === false ? 1 : 0;
    const notes = this.embedsNotes ? (result.notes ?? []) : [];
    const texts = [...(this.perInsertion === 1 && entry ? [denseText(entry)] : []), ...notes.map((n) => n.key)];
    const planned = await countEmbeddingTokens(this.o.embedder, texts);
    const prepass = this.perInsertion * prepassInsertion === 1 ? (this.prepassTokens.get(item.example.id) ?? null) : 0;
    return {
      entry,
      embeddingCalls: this.perInsertion * ((entry ? 1 : 0) + prepassInsertion) + notes.length,
      embeddingTokens: planned === null || prepass === null ? null : planned + prepass,
    };
  }

  /** After the episode's trajectory is committed: its entry (not deferred) and its notes join the memory. */
  async commit(planned: PlannedWrite, trajectory: Trajectory): Promise<void> {
    if (this.store && planned.entry && !this.deferred) await this.store.insert(planned.entry, this.o.embedder!);
    if (trajectory.memory_writes) await this.notes.apply(trajectory.memory_writes, trajectory.memory_retires);
  }

  /** After the stream: transductive_batch's episode entries. */
  async finish(all: readonly Trajectory[]): Promise<void> {
    if (this.store && this.writes && this.deferred) await this.insertFinalized(all);
  }

  private async insertFinalized(trajectories: readonly Trajectory[]): Promise<void> {
    for (const t of trajectories) {
      const item = this.o.stream[t.stream_position];
      const entry = finalizeEpisode(finishedFromTrajectory(t, item.example, this.o.schemaOf(item)), this.writes!);
      if (entry) await this.store!.insert(entry, this.o.embedder!);
    }
  }
}
