/**
 * Example plugin, a method as behaviour (issue 29 §6): `lesson_memory`, an LLM-distilled memory in
 * the spirit of ReasoningBank (Ouyang et al., 2025) — after each episode ONE `distill` call asks the
 * frozen model for up to 3 short lessons (title, content) from what happened, a success *or* a
 * failure; before each repair the 2 lessons whose text is nearest the question (cosine of the run's
 * embedder) go into the prompt under "LESSONS FROM EARLIER EPISODES". Nothing in lib/ is changed:
 * the kit stamps each lesson with its source episode, stores it only after that episode is committed,
 * shows `retrieve` only lessons of strictly earlier stream positions (never the current query's),
 * accounts the `distill` calls and the embeddings, and `merit audit` checks the lessons for gold SQL.
 *
 * Run: `merit methods --plugin examples/lesson-memory.ts`; `merit grid --config configs/spider.json
 * --plugin examples/lesson-memory.ts --methods iterative,lesson_memory,merit --seeds 0,1,2 --plan`.
 * Test: `npx vitest run examples/lesson-memory.test.ts`.
 * @module
 */
import { registerMethod, topByCosine, type EpisodeView, type NoteDraft } from "../lib/plugin.ts";

/** Lessons shown before a repair, and the most one episode may write. */
export const LESSONS_SHOWN = 2;
export const MAX_LESSONS = 3;

/** The distillation prompt: the question and what the episode tried, never the gold. */
export function distillPrompt(episode: EpisodeView): string {
  const attempts = episode.attempts
    .map((a, i) => `[Attempt ${i + 1}] ${a.sql || "(no SQL)"}\nOutcome: ${a.status}${a.dbError ? `; error: ${a.dbError}` : ""}${a.errorType ? `; type: ${a.errorType}` : ""}`)
    .join("\n");
  return [
    "LESSON-DISTILL v1",
    "You review one finished attempt to answer a question with SQLite SQL.",
    `It ended in ${episode.success ? "SUCCESS: the last query was accepted" : "FAILURE: no query was accepted"}.`,
    "",
    `QUESTION:\n${episode.question}`,
    "",
    `DATABASE: ${episode.dbId}`,
    "",
    `ATTEMPTS:\n${attempts}`,
    "",
    `Write at most ${MAX_LESSONS} short, general lessons for future questions on other databases: what to do (from a success) or what to avoid (from a failure).`,
    "Use exactly this form for each lesson:",
    "<lesson><title>a few words</title><content>one or two sentences</content></lesson>",
  ].join("\n");
}

/** The lessons of a distillation response: well-formed `<lesson>` blocks with a title and content, at most MAX_LESSONS. */
export function parseLessons(response: string): { title: string; content: string }[] {
  const out: { title: string; content: string }[] = [];
  for (const m of response.matchAll(/<lesson>\s*<title>([\s\S]*?)<\/title>\s*<content>([\s\S]*?)<\/content>\s*<\/lesson>/gi)) {
    const title = m[1].replace(/\s+/g, " ").trim();
    const content = m[2].replace(/\s+/g, " ").trim();
    if (title !== "" && content !== "") out.push({ title: title.slice(0, 120), content: content.slice(0, 600) });
    if (out.length === MAX_LESSONS) break;
  }
  return out;
}

registerMethod({
  name: "lesson_memory",
  description: "LLM-distilled lessons (up to 3 per episode, success or failure), top 2 by embedding similarity before each repair",
  hooks: {
    calls: { distill: { most: 1 } },
    memory: {
      name: "distilled_lessons",
      heading: "LESSONS FROM EARLIER EPISODES",
      embedsNotes: true,
      async write(episode, model): Promise<NoteDraft[]> {
        const response = await model.generate("distill", distillPrompt(episode));
        return parseLessons(response).map((l) => ({
          kind: "lesson",
          text: `${l.title}: ${l.content}`,
          key: `${l.title}. ${l.content}`,
          polarity: episode.success ? "positive" : "negative",
          data: { title: l.title, content: l.content, from: episode.success ? "success" : "failure" },
        }));
      },
      async retrieve(request, memory, model) {
        if (memory.length === 0) return [];
        const [query] = await model.embed([request.question]);
        return topByCosine(memory, query, LESSONS_SHOWN);
      },
    },
  },
});
