/**
 * Peer memory method `error_fix_memory` (METHOD.md §13.7): a Memo-SQL-style memory (error→fix memory
 * for Text-to-SQL; Yang et al., "Memo-SQL: Structured Decomposition and Experience-Driven
 * Self-Correction for Training-Free NL2SQL", arXiv 2601.10011), the closest Text-to-SQL peer. It
 * keeps two kinds of note:
 *
 * - `solved`: a question the stream solved and its final (accepted) SQL, from every successful episode;
 * - `error_fix`: from a repaired episode, for each failure type it went through, its last failing
 *   attempt s⁻ (SQL, status, DBMS message), the SQL that fixed it s⁺ (the accepted one), the type E
 *   and correction advice δ: ONE declared `advise` call per repaired episode writes the advice of
 *   every pair (Memo-SQL's ⟨q, s⁺, s⁻, E, δ⟩). Each pair's key is the question and the skeleton of
 *   its failing SQL (sql-skeleton.ts).
 *
 * Before each repair: up to `fixes_shown` error→fix pairs whose failure type is the current
 * attempt's, nearest by the cosine of their keys to this question plus the skeleton of the failing
 * SQL being repaired, then up to `solved_shown` solved questions nearest by the question alone. A
 * failed episode stores nothing.
 * @module
 */
import { type EpisodeView, type HookModel, type NoteDraft } from "../hooks.ts";
import type { MethodDefinition } from "../method.ts";
import { registerMethod } from "../registry.ts";
import { fromFactory, type SettingSpecs, type SettingValues } from "../settings.ts";
import { feedbackLine, nearestNotes, notesOfKind, notesOfKindWith } from "./common.ts";
import { questionLines } from "./episode-text.ts";
import { sqlSkeleton } from "./sql-skeleton.ts";

/** Error→fix pairs of the current failure type shown before a repair. */
export const FIXES_SHOWN = 2;
/** Solved questions shown before a repair. */
export const SOLVED_SHOWN = 2;
/** The longest advice kept (characters). */
export const MAX_ADVICE_CHARS = 600;
/** The most tokens the advice call generates (a few sentences per pair). */
export const ADVISE_MAX_OUTPUT_TOKENS = 512;

/** error_fix_memory's settings (lib/methods/settings.ts). */
export const ERROR_FIX_SETTINGS: SettingSpecs = {
  fixes_shown: { default: FIXES_SHOWN, min: 0, max: 20, doc: "error→fix pairs of the current failure type shown before a repair" },
  solved_shown: { default: SOLVED_SHOWN, min: 0, max: 20, doc: "solved questions shown before a repair" },
};

/** A retrieval key of an error→fix pair: the question, then the skeleton of the failing SQL (Memo-SQL: q ⊕ skeleton(s⁻)). */
export function fixKey(question: string, failingSql: string): string {
  return `${question}\n${sqlSkeleton(failingSql)}`;
}

/** The advice prompt: the question, then each pair (failing SQL, its feedback, the fix), numbered. */
export function advisePrompt(episode: EpisodeView, pairs: readonly { type: string; failed: EpisodeView["attempts"][number] }[]): string {
  const fixed = episode.attempts[episode.attempts.length - 1];
  return [
    "ERRFIX-ADVISE v1",
    "A SQLite query for the question below failed and was then fixed. For each numbered failure, write correction advice: one or two general sentences saying what was wrong and how to fix that kind of mistake, for later questions on other databases (no table or value names unless they are the point).",
    "",
    ...questionLines(episode),
    "",
    ...pairs.map((p, i) => `[${i + 1}] Failure type: ${p.type}\nFailing SQL: ${p.failed.sql.trim() || "(no SQL)"}\nFeedback: ${feedbackLine(p.failed)}`),
    "",
    `Fixed SQL: ${fixed.sql.trim()}`,
    "",
    `Reply with one <advice n="NUMBER">…</advice> block per failure, for ${pairs.map((_, i) => i + 1).join(", ")}.`,
  ].join("\n");
}

/** The advice of each pair (index 0 = pair 1) from an advice response; "" where it gave none. Numbered blocks go to their pair, unnumbered ones fill in order. */
export function parseAdvice(response: string, pairs: number): string[] {
  const out = Array.from({ length: pairs }, () => "");
  let next = 0;
  for (const m of response.matchAll(/<advice(?:\s+n\s*=\s*"?(\d+)"?)?\s*>([\s\S]*?)<\/advice>/gi)) {
    const text = m[2].replace(/\s+/g, " ").trim().slice(0, MAX_ADVICE_CHARS);
    const i = m[1] !== undefined ? Number(m[1]) - 1 : next;
    if (i >= 0 && i < pairs && out[i] === "" && text !== "") out[i] = text;
    next = Math.max(next, i + 1);
  }
  return out;
}

/** The notes a finished episode stores: nothing for a failure; its solved question; one error→fix pair per failure type it repaired, with the advice one `advise` call wrote (none without a model). */
export async function errorFixNotes(episode: EpisodeView, model: HookModel | null): Promise<NoteDraft[]> {
  if (!episode.success) return [];
  const fixed = episode.attempts[episode.attempts.length - 1];
  const notes: NoteDraft[] = [
    {
      kind: "solved",
      text: `Question: ${episode.question}\nDatabase: ${episode.dbId}\nAccepted SQL: ${fixed.sql.trim()}`,
      key: episode.question,
      polarity: "positive",
      data: { question: episode.question, sql: fixed.sql },
    },
  ];
  // The last failing attempt of each failure type, in the order the types first appeared.
  const lastOfType = new Map<string, EpisodeView["attempts"][number]>();
  for (const a of episode.attempts.slice(0, -1)) {
    if (a.errorType !== null) lastOfType.set(a.errorType, a); // a Map keeps the first insertion's order
  }
  const pairs = [...lastOfType].map(([type, failed]) => ({ type, failed }));
  if (pairs.length === 0) return notes;
  // One call writes the advice of every pair; a reply cut at its limit keeps its complete blocks.
  const advice = model ? parseAdvice(await model.generate("advise", advisePrompt(episode, pairs)), pairs.length) : pairs.map(() => "");
  pairs.forEach(({ type, failed }, i) => {
    notes.push({
      kind: "error_fix",
      text: [`Question: ${episode.question}`, `Database: ${episode.dbId}`, `Failing SQL: ${failed.sql.trim() || "(no SQL)"}`, `Feedback: ${feedbackLine(failed)}`, `Fixed SQL: ${fixed.sql.trim()}`, ...(advice[i] ? [`Advice: ${advice[i]}`] : [])].join("\n"),
      key: fixKey(episode.question, failed.sql),
      polarity: "negative",
      data: { error_type: type, failed_sql: failed.sql, status: failed.status, db_error: failed.dbError, fixed_sql: fixed.sql, skeleton: sqlSkeleton(failed.sql), advice: advice[i] },
    });
  });
  return notes;
}

function errorFixDefinition(s: SettingValues): MethodDefinition {
  return {
    name: "error_fix_memory",
    description: `Memo-SQL-style (error→fix memory for Text-to-SQL; arXiv 2601.10011): stores solved questions and error→fix pairs with advice from one advise call; before each repair ${s.fixes_shown} pairs of the current failure type nearest by question + failing-SQL skeleton and ${s.solved_shown} solved questions nearest by question`,
    citation: "Memo-SQL-style (error→fix memory for Text-to-SQL): Yang et al., Memo-SQL: Structured Decomposition and Experience-Driven Self-Correction for Training-Free NL2SQL. arXiv:2601.10011",
    sight: "oracle",
    hooks: {
      calls: { advise: { most: 1, per: "repaired", maxOutputTokens: ADVISE_MAX_OUTPUT_TOKENS } },
      memory: {
        name: "error_fix_pairs",
        heading: "ERROR FIXES AND SOLVED QUESTIONS FROM EARLIER EPISODES",
        embedsNotes: true,
        write: (episode, model) => errorFixNotes(episode, model),
        async retrieve(request, memory, model) {
          const current = request.attempts[request.attempts.length - 1];
          const type = current?.errorType ?? null;
          const fixes = s.fixes_shown > 0 ? notesOfKindWith(memory, "error_fix", "error_type", type) : [];
          const solved = s.solved_shown > 0 ? notesOfKind(memory, "solved") : [];
          if (fixes.length === 0 && solved.length === 0) return [];
          const texts = [...(solved.length > 0 ? [request.question] : []), ...(fixes.length > 0 ? [fixKey(request.question, current?.sql ?? "")] : [])];
          const vectors = await model.embed(texts);
          const byQuestion = solved.length > 0 ? vectors[0] : null;
          const byFix = fixes.length > 0 ? vectors[vectors.length - 1] : null;
          return [...(byFix ? nearestNotes(fixes, byFix, s.fixes_shown) : []), ...(byQuestion ? nearestNotes(solved, byQuestion, s.solved_shown) : [])];
        },
      },
    },
  };
}

registerMethod(fromFactory("error_fix_memory", ERROR_FIX_SETTINGS, errorFixDefinition));
