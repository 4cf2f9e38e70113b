/**
 * Peer memory method `expel_online` (METHOD.md §13.5): an online port of ExpeL (Zhao et al., 2024,
 * "ExpeL: LLM Agents Are Experiential Learners", AAAI; arXiv 2308.10144). ExpeL keeps a list of
 * natural-language insights, each with an importance counter, and lets the model edit the list by
 * comparing a failed and a successful trajectory of the same task. The original gathers experience
 * first and extracts insights offline; here the list is updated online, once per repaired episode,
 * from that episode's own fail→success pair (the failed attempts, then the accepted one).
 *
 * - write: only a repaired episode (it failed, then an attempt was accepted) makes ONE `critique`
 *   call on the current list (the latest list in the eligible view); the operations it answers
 *   (ADD +2, AGREE +1, EDIT +1, REMOVE −1; an insight at 0 is dropped; at most
 *   {@link MAX_INSIGHTS}) give the new list, stored as one `insights` note. Other episodes store
 *   nothing, and a response without a usable operation leaves the list as it was.
 * - retrieve: the latest list, every insight, most important first.
 * @module
 */
import type { EpisodeView, NoteDraft, NoteView } from "../hooks.ts";
import { registerMethod } from "../registry.ts";
import { attemptLines, latestNote, notesOfKind } from "./common.ts";

/** The most insights the list holds (an ADD to a full list is ignored). */
export const MAX_INSIGHTS = 10;
/** The longest insight kept (characters). */
export const MAX_INSIGHT_CHARS = 300;
/** Counter changes per operation; an insight whose counter reaches 0 is dropped. */
export const IMPORTANCE = { ADD: 2, AGREE: 1, EDIT: 1, REMOVE: -1 } as const;

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
 */
export function applyOperations(list: readonly Insight[], ops: readonly Operation[], cap = MAX_INSIGHTS): { insights: Insight[]; applied: number } {
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
    target.importance += IMPORTANCE[op.op];
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
export function critiquePrompt(episode: EpisodeView, list: readonly Insight[]): string {
  const failed = episode.attempts.slice(0, -1);
  const accepted = episode.attempts[episode.attempts.length - 1];
  return [
    "EXPEL-CRITIQUE v1",
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
    "Answer with operations only, one per line, in these forms:",
    "ADD: <a new general insight>",
    "AGREE <number>",
    "EDIT <number>: <the insight, rewritten>",
    "REMOVE <number>",
    `The list holds at most ${MAX_INSIGHTS} insights; when it is full, edit or remove rather than add.`,
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

registerMethod({
  name: "expel_online",
  description: "ExpeL, online (Zhao et al. 2024, AAAI; arXiv 2308.10144): one critique call per repaired episode edits an insight list (ADD/AGREE/EDIT/REMOVE, importance counters, at most 10); every repair sees the latest list",
  citation: "Zhao et al. ExpeL: LLM Agents Are Experiential Learners. AAAI 2024. arXiv:2308.10144",
  sight: "oracle",
  parts: {},
  hooks: {
    calls: { critique: { most: 1, per: "repaired", maxOutputTokens: 2048 } },
    memory: {
      name: "expel_insights",
      heading: "INSIGHTS FROM EARLIER EPISODES",
      replaces: ["insights"],
      async write(episode, model, memory): Promise<NoteDraft[]> {
        // A fail→success pair of the same query: the episode failed at first and ended accepted.
        if (!episode.success || episode.attempts.length < 2) return [];
        const list = insightsOf(latestNote(notesOfKind(memory, "insights")));
        const reply = await model.reply("critique", critiquePrompt(episode, list));
        // A critique cut at its output limit may end mid-operation: the list stays as it was.
        if (reply.truncated) return [];
        const ops = parseOperations(reply.text);
        const { insights, applied } = applyOperations(list, ops);
        return applied === 0 ? [] : [insightsNote(insights, ops)];
      },
      retrieve(_request, memory) {
        const latest = latestNote(notesOfKind(memory, "insights"));
        return latest && insightsOf(latest).length > 0 ? [{ note: latest }] : [];
      },
    },
  },
});
