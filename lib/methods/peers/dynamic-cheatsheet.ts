/**
 * Peer memory methods (METHOD.md §13.2): Dynamic Cheatsheet, cumulative variant DC-Cu (Suzgun et al.
 * 2025, arXiv 2504.07952) ported to the repair loop as `dynamic_cheatsheet`. The memory is one
 * free-text cheatsheet. Once an episode is final, one `curate` call gives the frozen model the
 * previous sheet (the latest sheet of the eligible view: written at a strictly earlier stream
 * position) and the episode as the agent saw it, and asks for the whole revised sheet; that sheet is
 * the episode's one note (kind `cheatsheet`). Before each repair the latest sheet of the eligible view
 * goes into the prompt whole. The original curates within the query, after each generation round; the
 * kit curates once, at episode end, so memory is written only after the episode (METHOD.md §4.7). The
 * sheet is capped at DC_SHEET_CAP characters, cut deterministically (capText: whole lines).
 * @module
 */
import type { EpisodeView, HookModel, NoteDraft, NoteView, PickedNote } from "../hooks.ts";
import { registerMethod } from "../registry.ts";
import { fromFactory, type SettingSpecs } from "../settings.ts";
import { attemptsBlock, capText, latestOfKind, questionLines, tagged } from "./episode-text.ts";

export const DC_CITATION = "Dynamic Cheatsheet: Suzgun et al. 2025, arXiv 2504.07952";
/** The most characters of a sheet (about 500 tokens at 4 characters a token). */
export const DC_SHEET_CAP = 2000;

/** Dynamic Cheatsheet's settings (lib/methods/settings.ts). The original's sheet is unbounded; the cap keeps a prompt inside the context. */
export const DC_SETTINGS: SettingSpecs = {
  sheet_cap: { default: DC_SHEET_CAP, min: 200, max: 20_000, doc: "most characters of a sheet (the original: unbounded)" },
};

/** The curator's prompt: the previous sheet, then the finished episode; asks for the whole new sheet. */
export function curatePrompt(episode: EpisodeView, previous: string | null, cap: number = DC_SHEET_CAP): string {
  return [
    "DC-CURATE v1",
    "You keep a short cheatsheet of reusable advice for writing and fixing SQLite SQL queries over many different databases.",
    "Below are the current cheatsheet and one more finished attempt to answer a question. Revise the cheatsheet: keep what is still useful, add what this attempt teaches (a pattern that worked, a mistake to avoid), merge repeats, drop what is wrong.",
    `Keep it under ${cap} characters, as short bullet lines.`,
    "",
    `Current cheatsheet:\n${previous ?? "(empty)"}`,
    "",
    ...questionLines(episode),
    "",
    `Attempts (initial SQL first):\n${attemptsBlock(episode.attempts)}`,
    "",
    "Reply with the complete revised cheatsheet between <cheatsheet> and </cheatsheet>.",
  ].join("\n");
}

/** The sheet of a curator's response, capped; null when the response holds none (the previous sheet then stays). */
export function parseSheet(response: string, cap: number = DC_SHEET_CAP): string | null {
  const sheet = tagged(response, "cheatsheet");
  return sheet === null || sheet.trim() === "" ? null : capText(sheet, cap);
}

registerMethod(
  fromFactory("dynamic_cheatsheet", DC_SETTINGS, (s) => ({
  name: "dynamic_cheatsheet",
  description: `Dynamic Cheatsheet DC-Cu (Suzgun et al. 2025): one cheatsheet rewritten by a curate call at each episode end, shown whole (capped at ${s.sheet_cap.toLocaleString("en-US")} characters)`,
  citation: DC_CITATION,
  hooks: {
    // The original's curator generates up to 2 × 2,048 tokens (PEERS.md): room to re-emit a full sheet.
    calls: { curate: { most: 1, maxOutputTokens: 4096 } },
    memory: {
      name: "dynamic_cheatsheet",
      heading: "CHEATSHEET FROM EARLIER EPISODES",
      replaces: ["cheatsheet"],
      async write(episode: EpisodeView, model: HookModel, memory: readonly NoteView[]): Promise<NoteDraft[]> {
        const previous = latestOfKind(memory, "cheatsheet");
        const reply = await model.reply("curate", curatePrompt(episode, previous?.text ?? null, s.sheet_cap));
        const sheet = reply.truncated ? null : parseSheet(reply.text, s.sheet_cap);
        // No sheet in the response, or one cut at the output limit: nothing is written, so the previous sheet stays the latest.
        if (sheet === null) return [];
        return [{ kind: "cheatsheet", text: sheet, data: { previous_note_id: previous?.note_id ?? null, chars: sheet.length } }];
      },
      retrieve(_request, memory: readonly NoteView[]): PickedNote[] {
        const sheet = latestOfKind(memory, "cheatsheet");
        return sheet ? [{ note: sheet }] : [];
      },
    },
  },
})),
);
