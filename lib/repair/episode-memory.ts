/**
 * Repair stage, a method's memory within one episode (METHOD.md §4–5, §12.2–12.4): before each repair
 * the memory picks what the prompt shows — MERIT's entry memory through the retriever over its store
 * (legal pools, type filter, hybrid ranking; its entries under their polarity's heading), a note
 * memory through the plugin's `retrieve` over the eligible view — and each pick is logged in one
 * retrieval_log.jsonl format; once the episode is final a note memory's `write` returns its notes (the
 * kit writes MERIT's entry after the run commits the episode, lib/memory/finalize.ts). Either way the
 * memory sees only what episodes at strictly earlier stream positions wrote (lib/memory/eligibility.ts
 * for entries, `eligibleNotes` for notes: the same rules 1–2 of METHOD.md §4.7).
 * @module
 */
import { MeritError } from "../errors.ts";
import type { Embedder } from "../llm/types.ts";
import { failureContext, type EpisodeAttempt } from "../memory/finalize.ts";
import type { MemoryStore } from "../memory/store.ts";
import { eligibleNotes, retrievedSection, stampWrite, type AttemptView, type HookModel, type MemoryHook, type Note, type NoteView, type QuestionView, type WriteResult } from "../methods/hooks.ts";
import { callHook, deepFreeze, type HookSite } from "../methods/hook-guard.ts";
import type { MethodSpec } from "../methods/method.ts";
import { isEntryMemory } from "../methods/merit-memory.ts";
import { noteMembership } from "../methods/note-columns.ts";
import { takeNoteSearch } from "../methods/note-index.ts";
import type { PromptMemory } from "../prompts.ts";
import type { RetrievalLogRecord } from "../retrieval/retrieval-log.ts";
import type { Retriever } from "../retrieval/retriever.ts";

/** What the memory puts in one repair prompt, and what is logged of it. */
export interface RetrievedSection {
  positives: PromptMemory[];
  negatives: PromptMemory[];
  /** A note memory's section under its heading ("" for none). */
  notesText: string;
  /** The ids shown, best first. */
  ids: string[];
  log: RetrievalLogRecord;
  /** Query embeddings the retrieval computed. */
  queryEmbeddings: number;
}

/** The repair step being prepared. */
export interface RepairStep {
  view: QuestionView;
  iteration: number;
  /** The last attempt (the failure being repaired), as the agent was shown it. */
  last: Pick<EpisodeAttempt, "sql" | "status" | "dbError"> & { errorType: string | null };
  attempts: readonly AttemptView[];
}

/** How a hook call is guarded (lib/methods/hook-guard.ts). */
export interface HookCalling {
  site(hook: string, name: string): HookSite;
  model: HookModel;
  deadlineS: number;
}

/** What a memory's write returns once the episode is final: a note memory's stamped notes, the ids it retires, its own verdict. */
export interface WrittenNotes {
  /** null for a memory that writes no notes (MERIT's entry is written by the kit after the run commits the episode). */
  notes: Note[] | null;
  retired: string[];
  verdict: boolean | null;
}

/** The episode as a memory's write reads it (lib/methods/hooks.ts `EpisodeView`). */
export type FinalEpisode = Parameters<MemoryHook["write"]>[0];

/** Where a note written by the episode comes from. */
export interface NoteSource {
  queryId: string;
  dbId: string;
  streamPosition: number;
  episodeId: string;
}

/**
 * A method's memory as one episode sees it, whatever it stores: its section of each repair prompt
 * (with the retrieval log record), and its write once the episode is final. The run builds it over
 * its store (lib/experiment/run-memory.ts); `episodeMemoryOf` is the one place that tells MERIT's
 * entry memory from a note memory.
 */
export interface EpisodeMemory {
  retrieve(step: RepairStep, calling: HookCalling, embedder: Embedder | undefined): Promise<RetrievedSection>;
  write(episode: FinalEpisode, source: NoteSource, calling: HookCalling): Promise<WrittenNotes>;
}

/** What an episode memory reads: MERIT's entry store and retriever, or a note memory's notes so far (default none). */
export interface EpisodeMemoryStores {
  store?: MemoryStore;
  retriever?: Retriever;
  notes?: readonly NoteView[];
}

/** The episode memory of `method` over `stores` (undefined for a method without a memory hook; an entry memory without its store refuses to retrieve). */
export function episodeMemoryOf(method: MethodSpec, stores: EpisodeMemoryStores): EpisodeMemory | undefined {
  const memory = method.hooks.memory;
  if (memory === undefined) return undefined;
  if (!isEntryMemory(memory)) return noteEpisodeMemory(method, memory, stores.notes ?? []);
  if (stores.store && stores.retriever && method.memory) return entryEpisodeMemory(method, method.memory, stores.store, stores.retriever);
  // Without its store an entry memory still plays an episode that never repairs (the plan's replay).
  return {
    retrieve: async () => {
      throw new MeritError(`method ${method.name} needs a memory store, a retriever and an embedder`);
    },
    write: async () => NO_NOTES,
  };
}

const NO_NOTES: WrittenNotes = Object.freeze({ notes: null, retired: [], verdict: null }) as WrittenNotes;

/**
 * MERIT's entry memory in an episode: the retriever over the store (legal pools, type filter, hybrid
 * ranking), each entry under its polarity's heading. It writes nothing here: the kit finalizes the
 * episode's entry after the run commits it (lib/memory/finalize.ts).
 */
function entryEpisodeMemory(method: MethodSpec, policy: NonNullable<MethodSpec["memory"]>, store: MemoryStore, retriever: Retriever): EpisodeMemory {
  return {
    async retrieve(step, _calling, embedder) {
      if (!embedder) throw new MeritError(`method ${method.name} needs an embedder`);
      const { view } = step;
      const result = await retriever.retrieve(
        store,
        { queryId: view.queryId, dbId: view.dbId, streamPosition: view.streamPosition, repairIteration: step.iteration, currentErrorType: step.last.errorType ?? "Unknown", question: view.question, currentSql: step.last.sql, failureContext: failureContext(step.last) },
        policy,
        embedder,
      );
      // Each entry goes under its own polarity's heading, whatever the pool layout: a combined pool
      // (returned as `positives`) holds negatives too when the memory stores them, and a failed
      // direction must never be shown as a confirmed success.
      const ranked = [...result.positives, ...result.negatives].map((r) => r.entry);
      return {
        positives: ranked.filter((e) => e.polarity === "positive"),
        negatives: ranked.filter((e) => e.polarity === "negative"),
        notesText: "",
        ids: ranked.map((e) => e.entry_id),
        log: result.log,
        queryEmbeddings: result.embeddingCalls,
      };
    },
    write: async () => NO_NOTES,
  };
}

/**
 * A note memory in an episode: the plugin's `retrieve` over the eligible notes (its section under its
 * heading), and its `write` once the episode is final, stamped; the notes are stored only after the
 * run commits the episode.
 */
function noteEpisodeMemory(method: MethodSpec, memory: MemoryHook, notes: readonly NoteView[]): EpisodeMemory {
  return {
    async retrieve(step, calling) {
      const currentErrorType = step.last.errorType ?? "Unknown";
      const eligible = eligibleNotes(notes, step.view.streamPosition, step.view.queryId);
      takeNoteSearch(eligible); // how the hook's nearestNotes calls search, counted from here
      const raw = await callHook(calling.site("memory.retrieve", memory.name), calling.model, calling.deadlineS, (m) => memory.retrieve(deepFreeze({ ...step.view, iteration: step.iteration, attempts: step.attempts }), eligible, m));
      const section = retrievedSection(memory.heading, raw);
      const allowed = noteMembership(eligible); // by the notes' column slots, not a Set over every eligible note
      if (section === null || section.picked.some((p) => !p || !allowed.has(p.note) || (p.score !== undefined && !Number.isFinite(p.score)))) {
        throw new MeritError(`method "${method.name}": memory.retrieve must return notes from the memory it was given ([{ note, score? }] or { picked: [{ note, score? }], text }, finite scores), not copies or other objects`);
      }
      const log = noteRetrievalRecord(method.name, step.view.queryId, step.iteration, currentErrorType, eligible.length, section.picked, takeNoteSearch(eligible));
      return { positives: [], negatives: [], notesText: section.text, ids: section.picked.map((p) => p.note.note_id), log, queryEmbeddings: 0 };
    },
    async write(episode, source, calling) {
      const eligible = eligibleNotes(notes, source.streamPosition, source.queryId);
      const drafts: WriteResult = await callHook(calling.site("memory.write", memory.name), calling.model, calling.deadlineS, (m) => memory.write(deepFreeze(episode), m, eligible));
      return stampWrite(method.name, source, drafts, eligible, memory.replaces);
    },
  };
}

/** The retrieval_log.jsonl record of a note memory's step: the picked notes in the log's aligned arrays (no pools, filter or channels), and how nearestNotes searched (`none` when the hook ranked otherwise). */
function noteRetrievalRecord(method: string, queryId: string, iteration: number, errorType: string, eligible: number, picked: readonly { note: NoteView; score?: number }[], denseSearch: RetrievalLogRecord["dense_search"]): RetrievalLogRecord {
  const score = (p: { score?: number }) => Math.round((p.score ?? 0) * 1e12) / 1e12;
  return {
    query_id: queryId,
    repair_iteration: iteration,
    current_error_type: errorType,
    legal_pool_size: eligible,
    typed_pool_size: 0,
    fallback_used: false,
    type_filter_applied: false,
    type_match_used_as_soft_score: false,
    retrieved_entry_ids: picked.map((p) => p.note.note_id),
    retrieved_polarities: picked.map((p) => p.note.polarity),
    retrieved_error_types: picked.map((p) => p.note.kind),
    source_db_ids: picked.map((p) => p.note.source_db_id),
    source_stream_positions: picked.map((p) => p.note.source_stream_position),
    dense_scores: picked.map(() => 0),
    bm25_scores: picked.map(() => 0),
    type_match_scores: picked.map(() => 0),
    final_scores: picked.map(score),
    method_name: method,
    legal_pool_size_by_polarity: {},
    typed_pool_size_by_polarity: {},
    fallback_used_by_polarity: {},
    dense_search: denseSearch,
  };
}
