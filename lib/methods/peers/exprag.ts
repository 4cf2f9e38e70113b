/**
 * Peer memory methods `exprag` and `exprecent` (METHOD.md §13.6): the two experience-replay
 * baselines of Evo-Memory (arXiv 2511.20857). After every episode the experience — the question, its
 * repair path (the failed attempts with their DBMS messages, at most `path_attempts`; the original
 * keeps the trajectory by default), the final attempt and the feedback it got — is stored as one
 * plain-text note, with no LLM call. `exprag` embeds the question before each repair and shows the
 * `top_k` ({@link EXPERIENCES_SHOWN}) stored experiences whose questions are nearest by cosine;
 * `exprecent` shows the `top_k` most recent ones (no embedding).
 * @module
 */
import { type EpisodeView, type NoteDraft, type NoteView } from "../hooks.ts";
import type { JsonValue } from "../../hash.ts";
import type { MethodDefinition } from "../method.ts";
import { registerMethod } from "../registry.ts";
import { fromFactory, type SettingSpecs, type SettingValues } from "../settings.ts";
import { describedNotes } from "../note-columns.ts";
import { feedbackLine, nearestNotes, notesOfKind } from "./common.ts";
import { failedPathLines, repairPath } from "./episode-text.ts";

/** Experiences shown before a repair (Evo-Memory's default top-k). */
export const EXPERIENCES_SHOWN = 4;

/** The most failed attempts an experience's repair path keeps (K = 7 here: the whole path). */
export const EXPRAG_PATH_ATTEMPTS = 7;

/** ExpRAG's and ExpRecent's settings (lib/methods/settings.ts), the original's values as defaults. */
export const EXPRAG_SETTINGS: SettingSpecs = {
  top_k: { default: EXPERIENCES_SHOWN, min: 1, max: 50, doc: "experiences shown before a repair (Evo-Memory: top-4)" },
  path_attempts: { default: EXPRAG_PATH_ATTEMPTS, min: 0, max: 50, doc: "failed attempts an experience's repair path keeps (0: the final attempt alone)" },
};

const CITATION = "Evo-Memory, its ExpRAG and ExpRecent baselines (UIUC and Google DeepMind). arXiv:2511.20857";

/** The experience note of a finished episode: (question, repair path, final attempt, feedback); the path keeps at most `pathAttempts` failed attempts. */
export function experienceNote(episode: EpisodeView, pathAttempts: number = EXPRAG_PATH_ATTEMPTS): NoteDraft {
  const last = episode.attempts[episode.attempts.length - 1];
  const outcome = episode.success ? "accepted" : "not accepted";
  const path = repairPath(episode, pathAttempts);
  return {
    kind: "experience",
    text: [`Question: ${episode.question}`, `Database: ${episode.dbId}`, ...failedPathLines(path), `Final SQL: ${last.sql.trim() || "(no SQL)"}`, `Feedback: ${outcome} (${feedbackLine(last)})`].join("\n"),
    key: episode.question,
    polarity: episode.success ? "positive" : "negative",
    data: { question: episode.question, final_sql: last.sql, status: last.status, success: episode.success, ...(path.failed.length > 0 || path.omitted > 0 ? { path: { failed: path.failed, omitted: path.omitted } as unknown as JsonValue } : {}) },
  };
}

/** The `k` latest experiences, most recent first. */
export function mostRecent(memory: readonly NoteView[], k: number): NoteView[] {
  // the notes a NoteMemory hands out: a selection over its columns (note-columns.ts), the sort's answer
  const d = describedNotes(memory);
  const byColumns = d === null ? null : d.table.mostRecent(memory, d.slots, "experience", k);
  if (byColumns !== null) return byColumns;
  return notesOfKind(memory, "experience")
    .map((note, i) => ({ note, i }))
    .sort((a, b) => b.note.source_stream_position - a.note.source_stream_position || b.i - a.i)
    .slice(0, k)
    .map(({ note }) => note);
}

function expragDefinition(s: SettingValues): MethodDefinition {
  return {
    name: "exprag",
    description: `Evo-Memory ExpRAG (arXiv 2511.20857): every episode stores (question, repair path, final SQL, feedback); the ${s.top_k} experiences whose questions are nearest by embedding before each repair`,
    citation: CITATION,
    sight: "oracle",
    hooks: {
      memory: {
        name: "experience_rag",
        heading: "EXPERIENCES FROM EARLIER EPISODES",
        embedsNotes: true,
        write: (episode) => [experienceNote(episode, s.path_attempts)],
        async retrieve(request, memory, model) {
          const pool = notesOfKind(memory, "experience");
          if (pool.length === 0) return [];
          const [query] = await model.embed([request.question]);
          return nearestNotes(pool, query, s.top_k);
        },
      },
    },
  };
}

function exprecentDefinition(s: SettingValues): MethodDefinition {
  return {
    name: "exprecent",
    description: `Evo-Memory ExpRecent (arXiv 2511.20857): every episode stores (question, repair path, final SQL, feedback); the ${s.top_k} most recent experiences before each repair, no embedding`,
    citation: CITATION,
    sight: "oracle",
    hooks: {
      memory: {
        name: "experience_recent",
        heading: "RECENT EXPERIENCES",
        write: (episode) => [experienceNote(episode, s.path_attempts)],
        retrieve(_request, memory) {
          return mostRecent(memory, s.top_k).map((note) => ({ note }));
        },
      },
    },
  };
}

registerMethod(fromFactory("exprag", EXPRAG_SETTINGS, expragDefinition));
registerMethod(fromFactory("exprecent", EXPRAG_SETTINGS, exprecentDefinition));
