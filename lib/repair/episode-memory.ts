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

/** The stores a memory reads in an episode. */
export interface EpisodeMemoryServices {
  /** MERIT's entry store, its retriever and the run's embedder (an entry memory only). */
  store?: MemoryStore;
  retriever?: Retriever;
  embedder?: Embedder;
  /** Notes written so far in this run, a note memory's (the eligible ones are shown to its hooks). */
  notes?: readonly NoteView[];
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

/** The memory's section of one repair prompt: MERIT's entries or a note memory's notes. */
export async function retrieveForRepair(method: MethodSpec, step: RepairStep, services: EpisodeMemoryServices, calling: HookCalling): Promise<RetrievedSection> {
  const memory = method.hooks.memory!;
  const currentErrorType = step.last.errorType ?? "Unknown";
  if (isEntryMemory(memory)) {
    const { store, retriever, embedder } = services;
    if (!store || !retriever || !embedder || !method.memory) throw new MeritError(`method ${method.name} needs a memory store, a retriever and an embedder`);
    const { view } = step;
    const result = await retriever.retrieve(
      store,
      { queryId: view.queryId, dbId: view.dbId, streamPosition: view.streamPosition, repairIteration: step.iteration, currentErrorType, question: view.question, currentSql: step.last.sql, failureContext: failureContext(step.last) },
      method.memory,
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
  }
  const eligible = eligibleNotes(services.notes ?? [], step.view.streamPosition, step.view.queryId);
  takeNoteSearch(eligible); // how the hook's nearestNotes calls search, counted from here
  const raw = await callHook(calling.site("memory.retrieve", memory.name), calling.model, calling.deadlineS, (m) => memory.retrieve(deepFreeze({ ...step.view, iteration: step.iteration, attempts: step.attempts }), eligible, m));
  const section = retrievedSection(memory.heading, raw);
  const allowed = noteMembership(eligible); // by the notes' column slots, not a Set over every eligible note
  if (section === null || section.picked.some((p) => !p || !allowed.has(p.note) || (p.score !== undefined && !Number.isFinite(p.score)))) {
    throw new MeritError(`method "${method.name}": memory.retrieve must return notes from the memory it was given ([{ note, score? }] or { picked: [{ note, score? }], text }, finite scores), not copies or other objects`);
  }
  const log = noteRetrievalRecord(method.name, step.view.queryId, step.iteration, currentErrorType, eligible.length, section.picked, takeNoteSearch(eligible));
  return { positives: [], negatives: [], notesText: section.text, ids: section.picked.map((p) => p.note.note_id), log, queryEmbeddings: 0 };
}

/** A note memory's write once the episode is final: its notes stamped, the ids it retires, its own verdict. */
export async function writeNotes(method: MethodSpec, memory: MemoryHook, episode: Parameters<MemoryHook["write"]>[0], source: { queryId: string; dbId: string; streamPosition: number; episodeId: string }, notes: readonly NoteView[] | undefined, calling: HookCalling): Promise<{ notes: Note[]; retired: string[]; verdict: boolean | null }> {
  const eligible = eligibleNotes(notes ?? [], source.streamPosition, source.queryId);
  const drafts: WriteResult = await callHook(calling.site("memory.write", memory.name), calling.model, calling.deadlineS, (m) => memory.write(deepFreeze(episode), m, eligible));
  return stampWrite(method.name, source, drafts, eligible, memory.replaces);
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
