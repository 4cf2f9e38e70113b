/**
 * Peer memory methods (METHOD.md §13.3): Dynamic Cheatsheet, retrieval & synthesis variant DC-RS
 * (Suzgun et al. 2025, arXiv 2504.07952) ported to the repair loop as `dynamic_cheatsheet_rs`. Each
 * finished episode stores one `experience` note: its question, its final SQL and the outcome the agent
 * was shown (no model call; its key, the question, is embedded). Before a repair the question is
 * embedded, the `top_k` earlier experiences nearest by cosine are picked, and one `synthesize` call
 * turns them, with the **previous cheatsheet** (the sheet synthesized last, at the latest earlier
 * stream position that synthesized one), into the sheet for this question, shown in the prompt
 * instead of the raw experiences — the original's curator reads the retrieved pairs, the carried
 * previous sheet and the next input. The sheet an episode synthesized is kept in its experience note
 * (`data.sheet`), so the next synthesis reads it from the eligible view and a resumed run rebuilds it.
 * The picked experiences and the previous sheet depend only on the question and the eligible view,
 * which do not change within an episode, so the sheet is synthesized once per episode — at its first
 * repair — and reused at its later repairs and by its write hook (a small cache keyed by dataset,
 * query, stream position, the previous sheet's note and the picked note ids): `synthesize` is declared at most once per
 * episode, whatever K is. A synthesis cut at its output limit keeps the previous sheet.
 * @module
 */
import type { EpisodeView, NoteDraft, NoteView, PickedNote, RetrieveRequest } from "../hooks.ts";
import { registerMethod } from "../registry.ts";
import { fromFactory, type SettingSpecs, type SettingValues } from "../settings.ts";
import type { MethodDefinition } from "../method.ts";
import { capText, finalAttempt, latestOfKindWithString, outcomeLine, questionLines, tagged } from "./episode-text.ts";
import { DC_CITATION, DC_SHEET_CAP } from "./dynamic-cheatsheet.ts";
import { nearestNotes } from "./common.ts";

/** Earlier experiences a sheet is synthesized from (the original's retrieve_top_k). */
export const DCRS_TOP_K = 3;
/** Sheets kept for reuse within an episode and by its write hook (oldest dropped first; one live episode needs one, a grid's parallel streams one each; at most 2,000 characters a sheet). */
const CACHE_SIZE = 1024;

/** DC-RS's settings (lib/methods/settings.ts), the original's values as defaults. */
export const DCRS_SETTINGS: SettingSpecs = {
  top_k: { default: DCRS_TOP_K, min: 1, max: 50, doc: "earlier experiences a sheet is synthesized from (run_benchmark.py retrieve_top_k=3)" },
  sheet_cap: { default: DC_SHEET_CAP, min: 200, max: 20_000, doc: "most characters of a sheet (the original: unbounded)" },
};

/** The note text of one finished episode. */
export function experienceText(episode: EpisodeView): string {
  const last = finalAttempt(episode);
  return [...questionLines(episode), `Final SQL: ${last.sql.trim() || "(no SQL)"}`, `Outcome: ${outcomeLine(last)}`].join("\n");
}

/** The synthesis prompt: the previous cheatsheet, the picked earlier experiences and the current question. */
export function synthesizePrompt(request: Pick<RetrieveRequest, "question" | "evidence" | "dbId">, picked: readonly PickedNote[], previous: string | null = null, cap: number = DC_SHEET_CAP): string {
  return [
    "DCRS-SYNTHESIZE v2",
    "You prepare a short cheatsheet for writing a SQLite SQL query that answers the new question below, from the previous cheatsheet and from earlier questions on other databases, the final SQL written for each and how it turned out.",
    "Keep what in the previous cheatsheet still helps, add what the earlier experiences teach for the new question (patterns to reuse, mistakes to avoid), drop what does not apply. Short bullet lines.",
    `Keep it under ${cap} characters.`,
    "",
    `Previous cheatsheet:\n${previous ?? "(empty)"}`,
    "",
    "Earlier experiences:",
    ...picked.map((p, i) => `[${i + 1}]\n${p.note.text}`),
    "",
    "New question:",
    ...questionLines(request),
    "",
    "Reply with the complete cheatsheet between <cheatsheet> and </cheatsheet>.",
  ].join("\n");
}

/** The sheet an experience note carries (`data.sheet`); null when its episode synthesized none. */
export function sheetOf(note: NoteView): string | null {
  const sheet = (note.data as { sheet?: unknown } | null)?.sheet;
  return typeof sheet === "string" ? sheet : null;
}

/** The experience carrying the latest sheet of the eligible view (latest stream position; ties: the later in memory order); null when none. */
export function previousSheetNote(memory: readonly NoteView[]): NoteView | null {
  return latestOfKindWithString(memory, "experience", "sheet");
}

function dcrsDefinition(s: SettingValues): MethodDefinition {
  // Per definition (so arms with other settings share nothing): the sheets synthesized, by the
  // retrieval's inputs — dataset, query, stream position, the previous sheet's note, the picked notes —
  // which the write hook rebuilds from the same eligible view and the ids its first repair picked, so
  // two streams in one process never take each other's sheet (equal inputs give an equal sheet).
  const sheets = new Map<string, string>();
  const sheetKey = (q: { dataset: string; queryId: string; streamPosition: number }, previous: NoteView | null, picked: readonly string[]) => [q.dataset, q.queryId, q.streamPosition, previous?.note_id ?? "-", ...picked].join("|");
  return {
    name: "dynamic_cheatsheet_rs",
    description: `Dynamic Cheatsheet DC-RS (Suzgun et al. 2025): top-${s.top_k} similar earlier (question, final SQL, outcome) and the previous sheet synthesized into a sheet once per episode by a synthesize call`,
    citation: DC_CITATION,
    hooks: {
      // The original's curator generates up to 2 × 2,048 tokens (PEERS.md).
      calls: { synthesize: { most: 1, per: "repair_episode", maxOutputTokens: 4096 } },
      memory: {
        name: "dynamic_cheatsheet_rs",
        heading: "CHEATSHEET SYNTHESIZED FROM SIMILAR EARLIER EPISODES",
        embedsNotes: true,
        write(episode: EpisodeView, _model, memory: readonly NoteView[]): NoteDraft[] {
          // The sheet this episode synthesized at its first repair (none without repairs or at position 0).
          const first = episode.retrieved[0];
          const synthesized = first !== undefined && first.length > 0 ? sheets.get(sheetKey(episode, previousSheetNote(memory), first)) : undefined;
          const sheet = synthesized === undefined || synthesized === "" ? undefined : synthesized;
          return [{ kind: "experience", text: experienceText(episode), key: episode.question, polarity: episode.success ? "positive" : "negative", data: { final_status: finalAttempt(episode).status, ...(sheet !== undefined ? { sheet } : {}) } }];
        },
        async retrieve(request, memory: readonly NoteView[], model) {
          if (memory.length === 0) return [];
          const [query] = await model.embed([request.question]);
          const picked = nearestNotes(memory, query, s.top_k);
          const previous = previousSheetNote(memory);
          const key = sheetKey(request, previous, picked.map((p) => p.note.note_id));
          // The first repair of an episode always synthesizes; later repairs reuse its sheet.
          let text = request.iteration > 1 ? sheets.get(key) : undefined;
          if (text === undefined) {
            const previousText = previous ? sheetOf(previous) : null;
            const reply = await model.reply("synthesize", synthesizePrompt(request, picked, previousText, s.sheet_cap));
            const sheet = reply.truncated ? null : tagged(reply.text, "cheatsheet");
            // No sheet in the response, or one cut at the output limit: the previous sheet stays in force.
            text = sheet === null || sheet.trim() === "" ? (previousText ?? "") : capText(sheet, s.sheet_cap);
            sheets.delete(key);
            sheets.set(key, text);
            if (sheets.size > CACHE_SIZE) sheets.delete(sheets.keys().next().value as string);
          }
          return { picked, text };
        },
      },
    },
  };
}

registerMethod(fromFactory("dynamic_cheatsheet_rs", DCRS_SETTINGS, dcrsDefinition));
