/**
 * Peer memory methods `exprag` and `exprecent` (METHOD.md §13.6): the two experience-replay
 * baselines of Evo-Memory (arXiv 2511.20857). After every episode the experience — the question, the
 * final attempt and the feedback it got — is stored as one plain-text note, with no LLM call.
 * `exprag` embeds the question before each repair and shows the {@link EXPERIENCES_SHOWN} stored
 * experiences whose questions are nearest by cosine; `exprecent` shows the
 * {@link EXPERIENCES_SHOWN} most recent ones (no embedding).
 * @module
 */
import { topByCosine, type EpisodeView, type MemoryHook, type NoteDraft, type NoteView } from "../hooks.ts";
import { registerMethod } from "../registry.ts";
import { feedbackLine, notesOfKind } from "./common.ts";

/** Experiences shown before a repair (Evo-Memory's default top-k). */
export const EXPERIENCES_SHOWN = 4;

const CITATION = "Evo-Memory, its ExpRAG and ExpRecent baselines (UIUC and Google DeepMind). arXiv:2511.20857";

/** The experience note of a finished episode: (question, final attempt, feedback). */
export function experienceNote(episode: EpisodeView): NoteDraft {
  const last = episode.attempts[episode.attempts.length - 1];
  const outcome = episode.success ? "accepted" : "not accepted";
  return {
    kind: "experience",
    text: [`Question: ${episode.question}`, `Database: ${episode.dbId}`, `Final SQL: ${last.sql.trim() || "(no SQL)"}`, `Feedback: ${outcome} (${feedbackLine(last)})`].join("\n"),
    key: episode.question,
    polarity: episode.success ? "positive" : "negative",
    data: { question: episode.question, final_sql: last.sql, status: last.status, success: episode.success },
  };
}

/** The `k` latest experiences, most recent first. */
export function mostRecent(memory: readonly NoteView[], k: number): NoteView[] {
  return notesOfKind(memory, "experience")
    .map((note, i) => ({ note, i }))
    .sort((a, b) => b.note.source_stream_position - a.note.source_stream_position || b.i - a.i)
    .slice(0, k)
    .map(({ note }) => note);
}

const write: MemoryHook["write"] = (episode) => [experienceNote(episode)];

registerMethod({
  name: "exprag",
  description: "Evo-Memory ExpRAG (arXiv 2511.20857): every episode stores (question, final SQL, feedback); the 4 experiences whose questions are nearest by embedding before each repair",
  citation: CITATION,
  sight: "oracle",
  parts: {},
  hooks: {
    memory: {
      name: "experience_rag",
      heading: "EXPERIENCES FROM EARLIER EPISODES",
      embedsNotes: true,
      write,
      async retrieve(request, memory, model) {
        const pool = notesOfKind(memory, "experience");
        if (pool.length === 0) return [];
        const [query] = await model.embed([request.question]);
        return topByCosine(pool, query, EXPERIENCES_SHOWN);
      },
    },
  },
});

registerMethod({
  name: "exprecent",
  description: "Evo-Memory ExpRecent (arXiv 2511.20857): every episode stores (question, final SQL, feedback); the 4 most recent experiences before each repair, no embedding",
  citation: CITATION,
  sight: "oracle",
  parts: {},
  hooks: {
    memory: {
      name: "experience_recent",
      heading: "RECENT EXPERIENCES",
      write,
      retrieve(_request, memory) {
        return mostRecent(memory, EXPERIENCES_SHOWN).map((note) => ({ note }));
      },
    },
  },
});
