/**
 * Experiment runs, a run's memory (METHOD.md §4.3, §6.5, §12.4; issue 36 §2): one interface the run
 * talks to whatever the method's memory is, through the same steps — open, rebuild what committed
 * episodes wrote (so a killed run resumes to the same bytes), hand each episode its view of the memory
 * (lib/repair/episode-memory.ts), bill an episode's planned insertions, store what a committed episode
 * wrote, finish after the stream. Two memories implement it: MERIT's entry store (memory/, an entry
 * finalized from each committed episode, the non-causal control's transductive pre-pass, a source
 * run's entries in front) and a note memory (its notes stamped in each committed trajectory, a source
 * run's notes read-only). Both are rebuilt from the trajectories, the one commit point; `openRunMemory`
 * is the one place that tells them apart.
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
import type { MemoryStore } from "../memory/store.ts";
import type { MemoryHook, Note } from "../methods/hooks.ts";
import { isEntryMemory } from "../methods/merit-memory.ts";
import type { MethodSpec } from "../methods/method.ts";
import { NoteMemory } from "../methods/note-memory.ts";
import { countEmbeddingTokens, type EpisodeResult } from "../repair/episode.ts";
import { episodeMemoryOf, type EpisodeMemory } from "../repair/episode-memory.ts";
import { finishedFromTrajectory } from "../repair/trajectory-record.ts";
import type { Trajectory } from "../repair/trajectory.ts";
import type { Retriever } from "../retrieval/retriever.ts";
import { checkDimension, l2Normalize } from "../vector.ts";
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
}

/** A run's memory: MERIT's entry store, a note memory, or none (every step a no-op). */
export interface RunMemory {
  /** Whether the method keeps a memory (its retrieval and maintenance are timed). */
  readonly active: boolean;
  /**
   * Before the first episode of this session: what the committed episodes wrote (and, per memory, the
   * transductive pre-pass, a read-only source memory).
   */
  rebuild(committed: readonly Trajectory[]): Promise<void>;
  /** The memory as the next episode sees it (undefined for none). */
  episodeMemory(): EpisodeMemory | undefined;
  /** What a finished episode stores and the embedding billed to it. */
  plan(item: StreamItem, result: EpisodeResult): Promise<PlannedWrite>;
  /** After the episode's trajectory is committed: what it wrote joins the memory. */
  commit(planned: PlannedWrite, trajectory: Trajectory): Promise<void>;
  /** After the stream. */
  finish(all: readonly Trajectory[]): Promise<void>;
}

/** Opens the method's memory for the run in `o.outDir`. */
export function openRunMemory(o: RunMemoryOptions, retriever: Retriever | undefined): RunMemory {
  const memory = o.method.hooks.memory;
  if (memory === undefined) return new NoRunMemory();
  return isEntryMemory(memory) ? EntryRunMemory.open(o, retriever) : new NoteRunMemory(o, memory);
}

/** A memoryless method's: nothing stored, nothing billed. */
class NoRunMemory implements RunMemory {
  readonly active = false;
  async rebuild(): Promise<void> {}
  episodeMemory(): undefined {
    return undefined;
  }
  async plan(): Promise<PlannedWrite> {
    return { entry: null, embeddingCalls: 0, embeddingTokens: 0 };
  }
  async commit(): Promise<void> {}
  async finish(): Promise<void> {}
}

/**
 * MERIT's entry store in the run's memory/ folder: an entry finalized from each committed episode
 * (after the stream, for transductive_batch, which also seeds its pre-pass before it), a source run's
 * entries put in front of it read-only. A memory whose ranker reads no vectors opens it with dimension
 * 0, so no entry is embedded or billed and the embedder is never loaded.
 */
class EntryRunMemory implements RunMemory {
  readonly active = true;
  private readonly o: RunMemoryOptions;
  private readonly store: MemoryStore;
  /** What retrieval reads: the store, with a source memory's entries in front when the config names one. */
  private retrievalStore: MemoryStore;
  private readonly retriever: Retriever;
  private readonly writes: MemoryWriteFlags;
  /** transductive_batch: entries stored before the stream and after it, none in between. */
  private readonly deferred: boolean;
  /** 0 when the memory stores no vectors: nothing is embedded or billed. */
  private readonly perInsertion: 0 | 1;
  private readonly prepassTokens = new Map<string, number | null>();

  private constructor(o: RunMemoryOptions, policy: NonNullable<MethodSpec["memory"]>, store: MemoryStore, retriever: Retriever) {
    this.o = o;
    this.store = store;
    this.retrievalStore = store;
    this.retriever = retriever;
    this.writes = policy.writes;
    this.deferred = policy.transductivePrepass;
    this.perInsertion = policy.vectors === false ? 0 : 1;
  }

  static open(o: RunMemoryOptions, retriever: Retriever | undefined): EntryRunMemory {
    const policy = o.method.memory;
    if (!policy || !o.embedder || !retriever) throw new MeritError(`method ${o.method.name} needs an embedder and a retriever`);
    return new EntryRunMemory(o, policy, JsonlMemoryStore.open(join(o.outDir, RUN_FILES.memoryDir), { dimension: policy.vectors ? o.embedder.dimension : 0 }), retriever);
  }

  /** The transductive pre-pass (its negatives, each billed to the episode of its query), the entries a kill kept from being inserted (the rest are skips), a source run's entries. */
  async rebuild(committed: readonly Trajectory[]): Promise<void> {
    const { store, o } = this;
    if (this.deferred) {
      for (const entry of transductivePrepassEntries(o.dataset, o.stream, o.seed, o.method.name, this.writes)) {
        await store.insert(entry, o.embedder!);
        if (this.perInsertion === 1) this.prepassTokens.set(entry.source_query_id, await countEmbeddingTokens(o.embedder, [denseText(entry)]));
      }
    } else {
      await this.insertFinalized(committed);
    }
    const source = o.source();
    if (source !== undefined && source.entries.length > 0) {
      // embedded once when the run starts (each session), billed to no episode, as a source's notes are
      const vectors = store.dimension > 0 ? (await o.embedder!.embed(source.entries.map((e) => denseText(e)))).map((raw, i) => (checkDimension(raw, store.dimension, `embedding of source entry ${source.entries[i].entry_id}`), l2Normalize(raw))) : source.entries.map(() => new Float32Array(0));
      this.retrievalStore = new SourcedMemoryStore(store, source.entries, vectors);
    }
  }

  episodeMemory(): EpisodeMemory | undefined {
    return episodeMemoryOf(this.o.method, { store: this.retrievalStore, retriever: this.retriever });
  }

  /** Its own entry's insertion, plus (transductive_batch) the pre-pass negative seeded for its query's initial failure. */
  async plan(item: StreamItem, result: EpisodeResult): Promise<PlannedWrite> {
    const entry = finalizeEpisode(result.finished, this.writes);
    const prepassInsertion = this.deferred && item.initial.oracle_correct === false ? 1 : 0;
    const planned = await countEmbeddingTokens(this.o.embedder, this.perInsertion === 1 && entry ? [denseText(entry)] : []);
    const prepass = this.perInsertion * prepassInsertion === 1 ? (this.prepassTokens.get(item.example.id) ?? null) : 0;
    return {
      entry,
      embeddingCalls: this.perInsertion * ((entry ? 1 : 0) + prepassInsertion),
      embeddingTokens: planned === null || prepass === null ? null : planned + prepass,
    };
  }

  async commit(planned: PlannedWrite): Promise<void> {
    if (planned.entry && !this.deferred) await this.store.insert(planned.entry, this.o.embedder!);
  }

  /** transductive_batch's episode entries. */
  async finish(all: readonly Trajectory[]): Promise<void> {
    if (this.deferred) await this.insertFinalized(all);
  }

  private async insertFinalized(trajectories: readonly Trajectory[]): Promise<void> {
    for (const t of trajectories) {
      const item = this.o.stream[t.stream_position];
      const entry = finalizeEpisode(finishedFromTrajectory(t, item.example, this.o.schemaOf(item)), this.writes);
      if (entry) await this.store.insert(entry, this.o.embedder!);
    }
  }
}

/** A note memory's notes in force (lib/methods/note-memory.ts): each committed episode's writes and retirements in stream order, a source run's notes read-only. */
class NoteRunMemory implements RunMemory {
  readonly active = true;
  private readonly o: RunMemoryOptions;
  private readonly notes: NoteMemory;
  private readonly embedsNotes: boolean;

  constructor(o: RunMemoryOptions, hook: MemoryHook) {
    this.o = o;
    this.embedsNotes = hook.embedsNotes === true;
    this.notes = new NoteMemory(o.method.name, o.embedder, this.embedsNotes);
  }

  async rebuild(committed: readonly Trajectory[]): Promise<void> {
    for (const t of committed) await this.notes.apply(t.memory_writes ?? [], t.memory_retires);
    const source = this.o.source();
    if (source !== undefined) await this.notes.addSource(source.notes);
  }

  episodeMemory(): EpisodeMemory | undefined {
    return episodeMemoryOf(this.o.method, { notes: this.notes.notes });
  }

  /** Its notes' embeddings, when the method embeds its notes. */
  async plan(_item: StreamItem, result: EpisodeResult): Promise<PlannedWrite> {
    const notes = this.embedsNotes ? (result.notes ?? []) : [];
    return { entry: null, embeddingCalls: notes.length, embeddingTokens: await countEmbeddingTokens(this.o.embedder, notes.map((n) => n.key)) };
  }

  async commit(_planned: PlannedWrite, trajectory: Trajectory): Promise<void> {
    if (trajectory.memory_writes) await this.notes.apply(trajectory.memory_writes, trajectory.memory_retires);
  }

  async finish(): Promise<void> {}
}
