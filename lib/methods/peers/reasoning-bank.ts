/**
 * Peer memory methods (METHOD.md §13.1): ReasoningBank (Ouyang et al. 2025, arXiv 2509.25140) ported
 * to the repair loop, and its oracle variant.
 *
 * - `reasoning_bank`: once an episode is final, the frozen model first judges from what the agent
 *   observed — the question, the schema, the final SQL and its result rows (or the DBMS message when it
 *   did not run); never a status, a verdict or the gold — whether the episode succeeded, reasoning
 *   before its verdict (one `judge` call); then one `distill` call writes at most `max_items` (3)
 *   memory items (title, description, content), with instructions that differ for a judged success
 *   (what worked) and a judged failure (what to avoid). The items of one episode are one note (kind
 *   `memory_items`, key = the question, embedded once), as the original keeps one record per task;
 *   notes are appended, never merged or removed. Before each repair the current question is embedded
 *   and the `top_k` (1, as the original) earlier episodes whose questions are nearest by cosine give
 *   their items to the prompt. Each note also keeps the episode's repair path (bounded:
 *   `path_attempts`), as the original's bank keeps the trajectory.
 * - `reasoning_bank_oracle`: the same, with the oracle's verdict of the final attempt in place of the
 *   judge (it declares `sight: "oracle"`, so its views carry it): no `judge` call.
 * @module
 */
import type { EpisodeView, HookModel, MethodHooks, NoteDraft, NoteView, PickedNote, WriteResult } from "../hooks.ts";
import { registerMethod } from "../registry.ts";
import { fromFactory, type SettingSpecs, type SettingValues } from "../settings.ts";
import { MeritError } from "../../errors.ts";
import type { JsonValue } from "../../hash.ts";
import { attemptsBlock, finalAttempt, questionLines, repairPath, tagged } from "./episode-text.ts";
import { nearestNotes } from "./common.ts";

export const RB_CITATION = "ReasoningBank: Ouyang et al. 2025, arXiv 2509.25140";
/** The most items one episode writes, and the earlier episodes whose items reach a prompt. */
export const RB_MAX_ITEMS = 3;
export const RB_EPISODES_SHOWN = 1;
/** The most failed attempts a stored repair path keeps (the original keeps the whole trajectory; K = 7 here). */
export const RB_PATH_ATTEMPTS = 7;

/** ReasoningBank's settings (lib/methods/settings.ts), the original's values as defaults. */
export const RB_SETTINGS: SettingSpecs = {
  top_k: { default: RB_EPISODES_SHOWN, min: 1, max: 50, doc: "earlier episodes whose items reach a prompt (run.py select_memory(n=1))" },
  max_items: { default: RB_MAX_ITEMS, min: 1, max: 10, doc: "items one distillation keeps (memory_instruction.py: at most 3)" },
  path_attempts: { default: RB_PATH_ATTEMPTS, min: 0, max: 50, doc: "failed attempts a stored repair path keeps (0: the final attempt alone)" },
};

/**
 * The judge prompt: the question, the schema, the final SQL and what running it gave — its first
 * result rows, or the DBMS message when it did not run. Never a status or a verdict (the feedback's
 * would be echoed), never the gold. The judge reasons before its verdict, as the original's does.
 */
export function judgePrompt(episode: EpisodeView): string {
  const last = finalAttempt(episode);
  const result = last.executed ? `Result (first rows, one JSON array per row):\n${last.rowsPreview || "(no rows)"}` : `The query did not run. DBMS message: ${last.dbError ?? "(none)"}`;
  return [
    "RB-JUDGE v2",
    "You check whether an attempt to answer a question with one SQL query over the database below succeeded.",
    "You see the question, the schema, the last SQL query written and what running it gave.",
    "",
    ...questionLines(episode),
    "",
    `Schema:\n${episode.schema}`,
    "",
    `Last SQL query: ${last.sql.trim() || "(no SQL)"}`,
    result,
    "",
    "Does the last query answer the question correctly? First reason briefly between <reasoning> and </reasoning> (does it read the right tables, filter and aggregate as asked, and do the rows look like the answer?), then reply with <verdict>success</verdict> or <verdict>failure</verdict>.",
  ].join("\n");
}

/** The oracle's verdict of the final attempt, which a method declaring `sight: "oracle"` is given. */
function oracleVerdict(episode: EpisodeView): boolean {
  const verdict = finalAttempt(episode).oracleCorrect;
  if (typeof verdict !== "boolean") throw new MeritError(`method "reasoning_bank_oracle": its episode view has no oracle verdict; the method must declare sight: "oracle"`);
  return verdict;
}

/** The judge's verdict: true for success; anything but a clear success counts as a failure. */
export function parseVerdict(response: string): boolean {
  return (tagged(response, "verdict") ?? response).trim().toLowerCase().startsWith("success");
}

/** The distill prompt: the episode's attempts and its (judged or fed-back) outcome; its instructions differ for a success and a failure. */
export function rbDistillPrompt(episode: EpisodeView, success: boolean, maxItems: number = RB_MAX_ITEMS): string {
  const task = success
    ? "The episode is taken to have SUCCEEDED. Extract the reasoning that made it work: how the question was read, which schema facts mattered, which SQL pattern solved it."
    : "The episode is taken to have FAILED. Analyse why it went wrong and state what to check or avoid next time, so that a later attempt does not repeat the mistake.";
  return [
    "RB-DISTILL v1",
    "You turn one finished attempt at writing SQLite SQL for a question into reusable memory items for later questions on other databases.",
    task,
    "",
    ...questionLines(episode),
    "",
    `Attempts (initial SQL first):\n${attemptsBlock(episode.attempts)}`,
    "",
    `Write at most ${maxItems} items, each general (no table or value names unless they are the point), in this form:`,
    "<item><title>a short name</title><description>one sentence: when it applies</description><content>one to three sentences: what to do or avoid</content></item>",
  ].join("\n");
}

/** The well-formed items of a distill response, at most `maxItems`, whitespace folded. */
export function parseItems(response: string, maxItems: number = RB_MAX_ITEMS): { title: string; description: string; content: string }[] {
  const fold = (s: string) => s.replace(/\s+/g, " ").trim();
  const out: { title: string; description: string; content: string }[] = [];
  for (const m of response.matchAll(/<item>([\s\S]*?)<\/item>/gi)) {
    const [title, description, content] = ["title", "description", "content"].map((t) => fold(tagged(m[1], t) ?? ""));
    if (title !== "" && content !== "") out.push({ title: title.slice(0, 120), description: description.slice(0, 300), content: content.slice(0, 600) });
    if (out.length === maxItems) break;
  }
  return out;
}

/** ReasoningBank's hooks: `judged` = the judge call decides the outcome, else the oracle's verdict of the final attempt (sight: "oracle"). */
function reasoningBankHooks(judged: boolean, s: SettingValues): MethodHooks {
  return {
    // The judge reasons before its verdict, the distiller writes up to 3 items: 1,024 and 2,048 tokens.
    calls: judged ? { judge: { most: 1, maxOutputTokens: 1024 }, distill: { most: 1, maxOutputTokens: 2048 } } : { distill: { most: 1, maxOutputTokens: 2048 } },
    memory: {
      name: judged ? "reasoning_bank" : "reasoning_bank_oracle",
      heading: "MEMORY ITEMS FROM A SIMILAR EARLIER QUESTION",
      embedsNotes: true,
      async write(episode: EpisodeView, model: HookModel): Promise<WriteResult> {
        const success = judged ? parseVerdict(await model.generate("judge", judgePrompt(episode))) : oracleVerdict(episode);
        const items = parseItems(await model.generate("distill", rbDistillPrompt(episode, success, s.max_items)), s.max_items);
        // The judge's verdict goes to the trajectory (judged_success) whether or not items came of it;
        // the oracle variant's is the oracle's, so it records none.
        const verdict = judged ? { verdict: success } : {};
        if (items.length === 0) return { notes: [], ...verdict };
        // One note per episode holding its items, as the original keeps one record per task: the
        // question (its key) is embedded once, and retrieval picks episodes, all their items together.
        const notes: NoteDraft[] = [
          {
            kind: "memory_items",
            text: items.map((item) => `${item.title} — ${item.description}\n${item.content}`).join("\n\n"),
            // Retrieval matches the source question (the original embeds the task query).
            key: episode.question,
            polarity: success ? "positive" : "negative",
            data: { items, judged_success: success, verdict_from: judged ? "judge" : "oracle", path: repairPath(episode, s.path_attempts) as unknown as JsonValue },
          },
        ];
        return { notes, ...verdict };
      },
      async retrieve(request, memory: readonly NoteView[], model): Promise<PickedNote[]> {
        if (memory.length === 0) return [];
        const [query] = await model.embed([request.question]);
        // The notes (episodes) of the top_k nearest source questions, nearest first.
        return nearestNotes(memory, query, s.top_k);
      },
    },
  };
}

registerMethod(
  fromFactory("reasoning_bank", RB_SETTINGS, (s) => ({
    name: "reasoning_bank",
    description: `ReasoningBank (Ouyang et al. 2025): LLM judge + up to ${s.max_items} distilled items per episode, items of the top-${s.top_k} similar earlier question${s.top_k === 1 ? "" : "s"} before each repair`,
    citation: RB_CITATION,
    hooks: reasoningBankHooks(true, s),
  })),
);

registerMethod(
  fromFactory("reasoning_bank_oracle", RB_SETTINGS, (s) => ({
    name: "reasoning_bank_oracle",
    description: `ReasoningBank (Ouyang et al. 2025) with the oracle's verdict instead of the judge: up to ${s.max_items} distilled items per episode, top-${s.top_k} similar earlier question${s.top_k === 1 ? "" : "s"}`,
    citation: RB_CITATION,
    sight: "oracle",
    hooks: reasoningBankHooks(false, s),
  })),
);
