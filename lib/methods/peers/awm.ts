/**
 * Peer memory methods (METHOD.md §13.4): Agent Workflow Memory (Wang et al. 2024, arXiv 2409.07429)
 * ported to the repair loop as `awm`. Workflows are induced from successful episodes only: after a
 * successful episode one `induce` call gives the frozen model the successes so far (this one and the
 * `window` - 1 latest earlier ones, each question with its repair path — the failed attempts with
 * their DBMS messages, at most `path_attempts` of them, then the accepted SQL) and asks for the workflows
 * they share; the new set replaces the old, as one `workflows` note that also carries the successes
 * it was induced from (so the next induction needs no memory beyond the eligible view). A failed
 * episode writes nothing and makes no call. Before each repair the latest workflow set of the eligible
 * view goes into the prompt whole, capped at `cap` characters (capText). Success is the feedback's
 * verdict (EpisodeView.success), not the original's LLM autoeval: the memory relies on the oracle.
 * @module
 */
import type { EpisodeView, HookModel, NoteDraft, NoteView, PickedNote } from "../hooks.ts";
import type { JsonValue } from "../../hash.ts";
import { registerMethod } from "../registry.ts";
import { fromFactory, type SettingSpecs } from "../settings.ts";
import { capText, finalAttempt, latestOfKind, pathText, repairPath, tagged, type PathStep } from "./episode-text.ts";

export const AWM_CITATION = "Agent Workflow Memory: Wang et al. 2024, arXiv 2409.07429";
/** The most successes one induction reads (the latest ones). */
export const AWM_WINDOW = 20;
/** The most characters of a workflow set. */
export const AWM_CAP = 2000;
/** The most tokens one induction generates (the original's neural induction: 2,048). */
export const AWM_MAX_OUTPUT_TOKENS = 2048;
/** The most failed attempts a success's stored repair path keeps (the original induces from whole trajectories; K = 7 here). */
export const AWM_PATH_ATTEMPTS = 7;

/** AWM's settings (lib/methods/settings.ts), the original's values where it has one. */
export const AWM_SETTINGS: SettingSpecs = {
  window: { default: AWM_WINDOW, min: 1, max: 200, doc: "latest successes one induction reads (the original: all so far)" },
  cap: { default: AWM_CAP, min: 200, max: 20_000, doc: "most characters of a workflow set (the original: unbounded)" },
  path_attempts: { default: AWM_PATH_ATTEMPTS, min: 0, max: 50, doc: "failed attempts a success's repair path keeps (0: the accepted SQL alone)" },
};

/** The text of a workflows note before any induction gave workflows. */
export const NO_WORKFLOWS = "(no workflows induced yet)";

/** One success as an induction reads it. */
export interface Success {
  question: string;
  db_id: string;
  sql: string;
  /** The failed attempts before it (bounded), each with its feedback; absent in notes of older runs. */
  failed?: PathStep[];
  /** Earlier failed attempts left out of `failed`. */
  omitted?: number;
}

/** The successes a workflows note carries (its `data.successes`); [] for none. */
export function successesOf(note: NoteView | null): Success[] {
  const data = note?.data as { successes?: Success[] } | null | undefined;
  const list = data?.successes;
  return Array.isArray(list) ? list : [];
}

/** The induction prompt: the successes, oldest first. */
export function inducePrompt(successes: readonly Success[]): string {
  return [
    "AWM-INDUCE v2",
    "Below are questions that were answered correctly with SQLite SQL over various databases, each with the failed attempts before it (with the DBMS messages they got) and the SQL that answered it.",
    "Find the reusable workflows behind them: for each kind of question, the steps that lead from the question to a correct query (e.g. which tables to find, how to join, how to filter, group or order).",
    "Write each workflow in general terms, without the particular table, column or value names.",
    "",
    ...successes.map((s, i) => `[${i + 1}] Question: ${s.question}\nDatabase: ${s.db_id}\n${pathText({ failed: s.failed ?? [], omitted: s.omitted ?? 0, final: { sql: s.sql } }, "Correct SQL")}`),
    "",
    "Reply with the workflows between <workflows> and </workflows>, each as a title line followed by numbered steps.",
  ].join("\n");
}

registerMethod(
  fromFactory("awm", AWM_SETTINGS, (settings) => ({
  name: "awm",
  description: "Agent Workflow Memory (Wang et al. 2024): workflows re-induced by an induce call over the successes so far after each success, latest set shown whole",
  citation: AWM_CITATION,
  sight: "oracle",
  hooks: {
    // The original's neural induction generates up to 2,048 tokens (PEERS.md).
    calls: { induce: { most: 1, per: "success", maxOutputTokens: AWM_MAX_OUTPUT_TOKENS } },
    memory: {
      name: "awm",
      heading: "WORKFLOWS INDUCED FROM EARLIER SUCCESSES",
      replaces: ["workflows"],
      async write(episode: EpisodeView, model: HookModel, memory: readonly NoteView[]): Promise<NoteDraft[]> {
        if (!episode.success) return [];
        const previous = latestOfKind(memory, "workflows");
        const path = repairPath(episode, settings.path_attempts);
        const success: Success = { question: episode.question, db_id: episode.dbId, sql: finalAttempt(episode).sql.trim(), ...(path.failed.length > 0 ? { failed: path.failed } : {}), ...(path.omitted > 0 ? { omitted: path.omitted } : {}) };
        const successes = [...successesOf(previous), success].slice(-settings.window);
        const reply = await model.reply("induce", inducePrompt(successes));
        // An induction cut at its output limit may have lost workflows: the previous set stays, with
        // this success carried forward for the next induction.
        const workflows = reply.truncated ? "" : capText(tagged(reply.text, "workflows") ?? "", settings.cap);
        const kept = previous && previous.text !== NO_WORKFLOWS ? previous.text : NO_WORKFLOWS;
        // No workflows in the response: the successes are still carried forward; the text says so.
        return [{ kind: "workflows", text: workflows === "" ? kept : workflows, polarity: "positive", data: { successes: successes as unknown as JsonValue, ...(reply.truncated ? { induction_truncated: true } : {}) } }];
      },
      retrieve(_request, memory: readonly NoteView[]): PickedNote[] {
        const note = latestOfKind(memory, "workflows");
        return note ? [{ note }] : [];
      },
    },
  },
})),
);
