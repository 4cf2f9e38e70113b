/**
 * Peer memory method `expel_online` (METHOD.md §13.5): an online port of ExpeL (Zhao et al., 2024,
 * "ExpeL: LLM Agents Are Experiential Learners", AAAI; arXiv 2308.10144). ExpeL keeps a list of
 * natural-language insights, each with an importance counter, and lets the model edit the list by
 * comparing a failed and a successful trajectory of the same task. The original gathers experience
 * first and extracts insights offline; here the list is updated online, once per repaired episode,
 * from that episode's own fail→success pair (the failed attempts, then the accepted one).
 *
 * - write: every successful episode stores its trajectory (the question, its failed attempts with
 *   their DBMS messages — at most `path_attempts` — and the accepted SQL) as one `trajectory` note
 *   keyed (embedded) by its question: ExpeL's pool of successful trajectories. A repaired episode
 *   (it failed, then an attempt was accepted) also makes ONE `critique` call on the current list (the
 *   latest list in the eligible view); the first `max_operations` operations it answers (ADD +2,
 *   AGREE +1, EDIT +1, REMOVE −1, or −3 when the list is full; an insight at 0 is dropped; at most
 *   `max_rules` insights) give the new list, stored as one `insights` note. A failed episode stores
 *   nothing, and a response without a usable operation leaves the list as it was.
 * - retrieve: the latest list, every insight, most important first, and beside it the `few_shots`
 *   stored successful trajectories whose questions are nearest by cosine to this one (ExpeL's
 *   task-similarity few-shots), shown as one text under the heading.
 * @module
 */
import { type EpisodeView, type NoteDraft, type NoteView, type PickedNote } from "../hooks.ts";
import type { JsonValue } from "../../hash.ts";
import type { MethodDefinition } from "../method.ts";
import { registerMethod } from "../registry.ts";
import { fromFactory, type SettingSpecs, type SettingValues } from "../settings.ts";
import { attemptLines, latestNote, nearestNotes, notesOfKind } from "./common.ts";
import { pathText, questionLines, repairPath } from "./episode-text.ts";

/** The most insights the list holds (the original's max_num_rules; an ADD to a full list is ignored). */
export const MAX_INSIGHTS = 20;
/** The most operations one critique applies (the original's prompt: at most 4 per update). */
export const MAX_OPERATIONS = 4;
/** Successful trajectories shown beside the rules (task-similarity few-shots). */
export const FEW_SHOTS = 2;
/** The most failed attempts a stored trajectory keeps (K = 7 here: the whole repair path). */
export const EXPEL_PATH_ATTEMPTS = 7;

/** ExpeL's settings (lib/methods/settings.ts), the original's values as defaults. */
export const EXPEL_SETTINGS: SettingSpecs = {
  max_rules: { default: MAX_INSIGHTS, min: 1, max: 100, doc: "insights the list holds (configs/agent/expel.yaml max_num_rules)" },
  max_operations: { default: MAX_OPERATIONS, min: 1, max: 20, doc: "operations one critique applies (the critique prompt: at most 4)" },
  few_shots: { default: FEW_SHOTS, min: 0, max: 20, doc: "task-similar successful trajectories shown beside the rules" },
  path_attempts: { default: EXPEL_PATH_ATTEMPTS, min: 0, max: 50, doc: "failed attempts a stored trajectory keeps (0: the accepted SQL alone)" },
};
/** The longest insight kept (characters). */
export const MAX_INSIGHT_CHARS = 300;
/** Counter changes per operation; an insight whose counter reaches 0 is dropped. */
export const IMPORTANCE = { ADD: 2, AGREE: 1, EDIT: 1, REMOVE: -1 } as const;
/** A REMOVE's change when the list is full (the original: −3, so a full list makes room faster). */
export const REMOVE_WHEN_FULL = -3;

export interface Insight {
  text: string;
  importance: number;
}

export type Operation = { op: "ADD"; text: string } | { op: "AGREE" | "REMOVE"; index: number } | { op: "EDIT"; index: number; text: string };

const OPERATION = /^(ADD|AGREE|EDIT|REMOVE)\b\s*(?:#?\s*(\d+))?\s*[:.)\-–—]?\s*(.*)$/i;

const clean = (text: string) => text.replace(/\s+/g, " ").trim().slice(0, MAX_INSIGHT_CHARS);

/**
 * The operations of a critique response, one per line, in order: `ADD: text`, `AGREE n`,
 * `EDIT n: text`, `REMOVE n` (case-insensitive; a leading bullet, number or `**` is skipped). A line
 * that is none of these, or lacks its number or text, is ignored.
 */
export function parseOperations(response: string): Operation[] {
  const out: Operation[] = [];
  for (const raw of response.split(/\r?\n/)) {
    const line = raw.replace(/^\s*(?:[-*•>]+|\d+[.)])?\s*/, "").replace(/\*\*/g, "").trim();
    const m = OPERATION.exec(line);
    if (!m) continue;
    const op = m[1].toUpperCase() as Operation["op"];
    const index = m[2] === undefined ? null : Number(m[2]);
    const text = clean(m[3] ?? "");
    if (op === "ADD") {
      // "ADD 3: text" carries a number it does not need; the text is what counts.
      if (text !== "") out.push({ op, text });
    } else if (index !== null && index >= 1) {
      if (op === "EDIT") {
        if (text !== "") out.push({ op, index, text });
      } else out.push({ op, index });
    }
  }
  return out;
}

/**
 * The list after `ops`: indices are 1-based positions in `list` as the critique saw it. AGREE, EDIT
 * and REMOVE of a position outside the list, or of an insight already at 0, are ignored; an ADD of an
 * insight already in the list (same text, case and spacing aside) counts as AGREE; an ADD when the
 * list is full is ignored. Insights at 0 are dropped; the rest are ordered by importance, most
 * first (ties keep their order, additions last). `applied` counts the operations that changed something.
 * Only the first `maxOps` operations are applied; a REMOVE while the list is full counts REMOVE_WHEN_FULL.
 */
export function applyOperations(list: readonly Insight[], allOps: readonly Operation[], cap = MAX_INSIGHTS, maxOps = MAX_OPERATIONS): { insights: Insight[]; applied: number } {
  const ops = allOps.slice(0, maxOps);
  const work = list.map((i) => ({ ...i }));
  let applied = 0;
  const key = (t: string) => t.toLowerCase().replace(/\s+/g, " ").trim();
  const alive = () => work.filter((i) => i.importance > 0).length;
  for (const op of ops) {
    if (op.op === "ADD") {
      const same = work.find((i) => i.importance > 0 && key(i.text) === key(op.text));
      if (same) same.importance += IMPORTANCE.AGREE;
      else if (alive() < cap) work.push({ text: op.text, importance: IMPORTANCE.ADD });
      else continue;
      applied += 1;
      continue;
    }
    const target = op.index <= list.length ? work[op.index - 1] : undefined;
    if (!target || target.importance <= 0) continue;
    if (op.op === "EDIT") target.text = op.text;
    target.importance += op.op === "REMOVE" && alive() >= cap ? REMOVE_WHEN_FULL : IMPORTANCE[op.op];
    applied += 1;
  }
  const insights = work
    .map((i, n) => ({ i, n }))
    .filter(({ i }) => i.importance > 0)
    .sort((a, b) => b.i.importance - a.i.importance || a.n - b.n)
    .map(({ i }) => i);
  return { insights, applied };
}

/** The insight list a note holds ([] for anything else). */
export function insightsOf(note: NoteView | null): Insight[] {
  const data = note?.data as { insights?: unknown } | null | undefined;
  if (!data || !Array.isArray(data.insights)) return [];
  return data.insights.flatMap((i) => {
    const x = i as Partial<Insight> | null;
    return x && typeof x.text === "string" && typeof x.importance === "number" && x.importance > 0 ? [{ text: x.text, importance: x.importance }] : [];
  });
}

/** The list as the prompts show it: `n. [importance] text`, one per line. */
export function renderInsights(list: readonly Insight[]): string {
  return list.length === 0 ? "(none yet)" : list.map((i, n) => `${n + 1}. [${i.importance}] ${i.text}`).join("\n");
}

/** The critique prompt: the episode's failed attempts, the accepted query and the current list; never the gold. */
export function critiquePrompt(episode: EpisodeView, list: readonly Insight[], maxRules: number = MAX_INSIGHTS, maxOps: number = MAX_OPERATIONS): string {
  const failed = episode.attempts.slice(0, -1);
  const accepted = episode.attempts[episode.attempts.length - 1];
  return [
    "EXPEL-CRITIQUE v2",
    "You keep a short list of general insights that help fix wrong SQLite queries, for questions on any database.",
    "Below, earlier queries for one question failed and a later query was accepted as correct.",
    "",
    `QUESTION:\n${episode.question}`,
    ...(episode.evidence.trim() !== "" ? ["", `EVIDENCE:\n${episode.evidence}`] : []),
    "",
    `DATABASE: ${episode.dbId}`,
    "",
    `FAILED ATTEMPTS:\n${failed.map((a, i) => attemptLines(a, `[Failed ${i + 1}]`)).join("\n")}`,
    "",
    `ACCEPTED QUERY:\n${accepted.sql.trim()}`,
    "",
    `CURRENT INSIGHTS ([importance]):\n${renderInsights(list)}`,
    "",
    "Find what the accepted query does right that the failed ones did not, and update the list.",
    `Answer with at most ${maxOps} operations, one per line, in these forms:`,
    "ADD: <a new general insight>",
    "AGREE <number>",
    "EDIT <number>: <the insight, rewritten>",
    "REMOVE <number>",
    `The list holds at most ${maxRules} insights; when it is full, edit or remove rather than add.`,
  ].join("\n");
}

/** The insights note an episode stores: the whole new list. */
function insightsNote(list: readonly Insight[], ops: readonly Operation[]): NoteDraft {
  return {
    kind: "insights",
    text: list.length === 0 ? "(the insight list is empty)" : renderInsights(list),
    polarity: "neutral",
    data: { insights: list.map((i) => ({ text: i.text, importance: i.importance })), operations: ops.map((o) => ({ ...o })) },
  };
}

/** The trajectory note of a successful episode: its question, its repair path (bounded), the accepted SQL; keyed by the question. */
export function trajectoryNote(episode: EpisodeView, pathAttempts: number = EXPEL_PATH_ATTEMPTS): NoteDraft {
  const path = repairPath(episode, pathAttempts);
  return {
    kind: "trajectory",
    text: [...questionLines(episode), pathText(path, "Accepted SQL")].join("\n"),
    key: episode.question,
    polarity: "positive",
    data: { question: episode.question, path: path as unknown as JsonValue },
  };
}

/** What a repair reads: the rules, most important first, then the few-shot trajectories. */
export function expelText(list: readonly Insight[], shots: readonly PickedNote[]): string {
  return [
    ...(list.length > 0 ? [`Insights (most important first, [importance]):\n${renderInsights(list)}`] : []),
    ...(shots.length > 0 ? [`Successful attempts at similar earlier questions:\n${shots.map((p, i) => `[example ${i + 1}]\n${p.note.text}`).join("\n\n")}`] : []),
  ].join("\n\n");
}

function expelDefinition(s: SettingValues): MethodDefinition {
  return {
    name: "expel_online",
    description: `ExpeL, online (Zhao et al. 2024, AAAI; arXiv 2308.10144): one critique call per repaired episode edits an insight list (at most ${s.max_operations} ADD/AGREE/EDIT/REMOVE, importance counters, at most ${s.max_rules}); every repair sees the list and the ${s.few_shots} most similar successful trajectories`,
    citation: "Zhao et al. ExpeL: LLM Agents Are Experiential Learners. AAAI 2024. arXiv:2308.10144",
    sight: "oracle",
    hooks: {
      calls: { critique: { most: 1, per: "repaired", maxOutputTokens: 2048 } },
      memory: {
        name: "expel_insights",
        heading: "INSIGHTS AND SIMILAR SUCCESSES FROM EARLIER EPISODES",
        // a new insight list retires the one before (only the latest list is in force); trajectories accumulate
        replaces: ["insights"],
        // The trajectories are retrieved by their questions' vectors (the insights note's key is a constant).
        embedsNotes: true,
        async write(episode, model, memory): Promise<NoteDraft[]> {
          if (!episode.success) return [];
          const trajectory = trajectoryNote(episode, s.path_attempts);
          // A fail→success pair of the same query: the episode failed at first and ended accepted.
          if (episode.attempts.length < 2) return [trajectory];
          const list = insightsOf(latestNote(notesOfKind(memory, "insights")));
          const reply = await model.reply("critique", critiquePrompt(episode, list, s.max_rules, s.max_operations));
          // A critique cut at its output limit may end mid-operation: the list stays as it was.
          if (reply.truncated) return [trajectory];
          const ops = parseOperations(reply.text).slice(0, s.max_operations);
          const { insights, applied } = applyOperations(list, ops, s.max_rules, s.max_operations);
          return applied === 0 ? [trajectory] : [trajectory, { ...insightsNote(insights, ops), key: "insights" }];
        },
        async retrieve(request, memory, model) {
          const latest = latestNote(notesOfKind(memory, "insights"));
          const list = insightsOf(latest);
          const pool = notesOfKind(memory, "trajectory");
          let shots: PickedNote[] = [];
          if (s.few_shots > 0 && pool.length > 0) {
            const [query] = await model.embed([request.question]);
            shots = nearestNotes(pool, query, s.few_shots);
          }
          const picked = [...(latest && list.length > 0 ? [{ note: latest }] : []), ...shots];
          return picked.length === 0 ? [] : { picked, text: expelText(list, shots) };
        },
      },
    },
  };
}

registerMethod(fromFactory("expel_online", EXPEL_SETTINGS, expelDefinition));
