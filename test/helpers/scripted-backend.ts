/**
 * Test double of the repair stage's chat seam (lib/llm/types.ts ChatBackend; METHOD.md §6.3–6.4):
 * answers each repair prompt with SQL chosen by the test for that prompt's QUESTION and repair step,
 * wrapped as `<answer>SQL</answer>`. Stateless in the prompt (the step is read from the number of
 * attempts in LOCAL ATTEMPT HISTORY), so the same prompt always gets the same answer, as a greedy
 * model would. Token counts are derived from the text so accounting identities can be checked.
 */
import type { BackendIdentity, ChatBackend, GenerateRequest, GenerateResult } from "../../lib/llm/types.ts";

/** Per question: the SQL of repair step 1, 2, … (the last one repeats when the list runs out). */
export type Script = ReadonlyMap<string, readonly string[]>;

/** One call the backend answered. */
export interface ScriptedCall {
  kind: "repair" | "reflection";
  question: string;
  /** 1-based repair step the prompt asked for (reflections: attempts seen so far). */
  step: number;
  prompt: string;
  text: string;
}

/** The QUESTION section of a repair or reflection prompt (METHOD.md §6.3). */
export function questionOf(prompt: string): string {
  const m = /\nQUESTION:\n(.*)\n/.exec(prompt);
  if (!m) throw new Error(`scripted backend: no QUESTION section in prompt:\n${prompt.slice(0, 400)}`);
  return m[1];
}

/** Number of attempts listed in a repair prompt's LOCAL ATTEMPT HISTORY (attempt 0 included). */
export function attemptsShown(prompt: string): number {
  return (prompt.match(/^\[Attempt \d+ — observed unsuccessful\]$/gm) ?? []).length;
}

export class ScriptedBackend implements ChatBackend {
  readonly identity: BackendIdentity = { kind: "test-scripted", model: "scripted", modelHash: "none", params: {} };
  readonly calls: ScriptedCall[] = [];
  readonly #script: Script;

  constructor(script: Script) {
    this.#script = script;
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const { prompt } = request;
    const question = questionOf(prompt);
    let kind: ScriptedCall["kind"];
    let step: number;
    let text: string;
    if (prompt.startsWith("PROMPT_VERSION: spider-reflection") || prompt.startsWith("PROMPT_VERSION: bird-reflection")) {
      kind = "reflection";
      step = (prompt.match(/^\[Attempt \d+\]$/gm) ?? []).length;
      text = `<reflection>scripted reflection after ${step} attempts</reflection>`;
    } else {
      kind = "repair";
      step = attemptsShown(prompt);
      const answers = this.#script.get(question);
      if (!answers || answers.length === 0) throw new Error(`scripted backend: no script for question "${question}"`);
      text = `<answer>${answers[Math.min(step, answers.length) - 1]}</answer>`;
    }
    this.calls.push({ kind, question, step, prompt, text });
    // Deterministic stand-ins for token counts (one per whitespace-separated word).
    const words = (s: string) => s.split(/\s+/).filter(Boolean).length;
    return { text, promptTokens: words(prompt), outputTokens: words(text), truncatedPromptTokens: 0, cached: false };
  }

  async close(): Promise<void> {}
}
