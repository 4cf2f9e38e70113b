/**
 * Peer memory methods (METHOD.md §13.3): Dynamic Cheatsheet, retrieval & synthesis variant DC-RS
 * (Suzgun et al. 2025, arXiv 2504.07952) ported to the repair loop as `dynamic_cheatsheet_rs`. Each
 * finished episode stores one `experience` note: its question, its final SQL and the outcome the agent
 * was shown (no model call; its key, the question, is embedded). Before a repair the question is
 * embedded, the DCRS_TOP_K earlier experiences nearest by cosine are picked, and one `synthesize` call
 * turns them into a short sheet of advice for this question, shown in the prompt instead of the raw
 * experiences. The picked experiences depend only on the question and the eligible view, which do
 * not change within an episode, so the sheet is synthesized once per episode — at its first repair —
 * and reused at its later repairs (a small cache keyed by dataset, query, stream position and the
 * picked note ids): `synthesize` is declared at most once per episode, whatever K is.
 * @module
 */
import type { EpisodeView, NoteDraft, NoteView, PickedNote, RetrieveRequest } from "../hooks.ts";
import { topByCosine } from "../hooks.ts";
import { registerMethod } from "../registry.ts";
import { capText, finalAttempt, outcomeLine, questionLines, tagged } from "./episode-text.ts";
import { DC_CITATION, DC_SHEET_CAP } from "./dynamic-cheatsheet.ts";

/** Earlier experiences a sheet is synthesized from (the original's retrieve_top_k). */
export const DCRS_TOP_K = 3;
/** Sheets kept for reuse within an episode (oldest dropped first; one live episode needs one). */
const CACHE_SIZE = 64;

/** The note text of one finished episode. */
export function experienceText(episode: EpisodeView): string {
  const last = finalAttempt(episode);
  return [...questionLines(episode), `Final SQL: ${last.sql.trim() || "(no SQL)"}`, `Outcome: ${outcomeLine(last)}`].join("\n");
}

/** The synthesis prompt: the current question and the picked earlier experiences. */
export function synthesizePrompt(request: Pick<RetrieveRequest, "question" | "evidence" | "dbId">, picked: readonly PickedNote[]): string {
  return [
    "DCRS-SYNTHESIZE v1",
    "You prepare a short cheatsheet for writing a SQLite SQL query that answers the new question below, from earlier questions on other databases, the final SQL written for each and how it turned out.",
    "Keep only advice that helps with the new question: patterns to reuse, mistakes to avoid. Short bullet lines.",
    "",
    "Earlier experiences:",
    ...picked.map((p, i) => `[${i + 1}]\n${p.note.text}`),
    "",
    "New question:",
    ...questionLines(request),
    "",
    "Reply with the cheatsheet between <cheatsheet> and </cheatsheet>.",
  ].join("\n");
}

const sheets = new Map<string, string>();

registerMethod({
  name: "dynamic_cheatsheet_rs",
  description: "Dynamic Cheatsheet DC-RS (Suzgun et al. 2025): top-3 similar earlier (question, final SQL, outcome) synthesized into a sheet once per episode by a synthesize call",
  citation: DC_CITATION,
  parts: {},
  hooks: {
    // The original's curator generates up to 2 × 2,048 tokens (PEERS.md).
    calls: { synthesize: { most: 1, per: "repair_episode", maxOutputTokens: 4096 } },
    memory: {
      name: "dynamic_cheatsheet_rs",
      heading: "CHEATSHEET SYNTHESIZED FROM SIMILAR EARLIER EPISODES",
      embedsNotes: true,
      write(episode: EpisodeView): NoteDraft[] {
        return [{ kind: "experience", text: experienceText(episode), key: episode.question, polarity: episode.success ? "positive" : "negative", data: { final_status: finalAttempt(episode).status } }];
      },
      async retrieve(request, memory: readonly NoteView[], model) {
        if (memory.length === 0) return [];
        const [query] = await model.embed([request.question]);
        const picked = topByCosine(memory, query, DCRS_TOP_K);
        const key = [request.dataset, request.queryId, request.streamPosition, ...picked.map((p) => p.note.note_id)].join("|");
        // The first repair of an episode always synthesizes; later repairs reuse its sheet.
        let text = request.iteration > 1 ? sheets.get(key) : undefined;
        if (text === undefined) {
          text = capText(tagged(await model.generate("synthesize", synthesizePrompt(request, picked)), "cheatsheet") ?? "", DC_SHEET_CAP);
          sheets.delete(key);
          sheets.set(key, text);
          if (sheets.size > CACHE_SIZE) sheets.delete(sheets.keys().next().value as string);
        }
        return { picked, text };
      },
    },
  },
});
