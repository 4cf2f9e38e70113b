// The kit's prompt for remote engines (lib/llm/prompt-tokenizer.ts): loaded from the GGUF's
// vocabulary only, it gives the same prompt ids and the same left truncation as the in-process llama
// backend, decodes generated ids to the backend's text (special tokens skipped, final EOG dropped),
// and refuses over-long prompts under truncate "error".
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLlamaBackend, PromptTooLongError, type LlamaBackend } from "../../lib/llm/llama-backend.ts";
import { loadPromptTokenizer, type PromptTokenizer } from "../../lib/llm/prompt-tokenizer.ts";
import { TINY_QWEN } from "../helpers/run-fixture.ts";

let llama: LlamaBackend;
let tokenizer: PromptTokenizer;
beforeAll(async () => {
  [llama, tokenizer] = await Promise.all([createLlamaBackend({ modelPath: TINY_QWEN, threads: 1, maxInputTokens: 40 }), loadPromptTokenizer({ modelPath: TINY_QWEN, maxInputTokens: 40 })]);
});
afterAll(async () => {
  await llama?.close();
  await tokenizer?.close();
});

describe("PromptTokenizer (vocabulary-only GGUF)", () => {
  it("prompt ids and left truncation equal the llama backend's", () => {
    for (const message of ["How many singers do we have?", "List every stadium. ".repeat(8)]) {
      const { tokens, truncated } = llama.promptTokens(message);
      expect(tokenizer.encode(message)).toEqual({ tokens, truncated });
    }
    expect(tokenizer.encode("List every stadium. ".repeat(8)).truncated).toBeGreaterThan(0);
    expect(tokenizer.modelHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it("decodes generated ids to the llama backend's text", async () => {
    const request = { prompt: "Show the names of all singers.", maxOutputTokens: 12 };
    const { output } = await llama.generateRequestIds(request);
    expect(tokenizer.decode(output)).toBe((await llama.generate(request)).text);
    const eog = llama.model.tokens.eos;
    expect(eog).not.toBeNull();
    expect(tokenizer.decode([...output, eog!])).toBe(tokenizer.decode(output));
  });

  it("truncate: error refuses an over-long prompt with both counts", async () => {
    const strict = await loadPromptTokenizer({ modelPath: TINY_QWEN, maxInputTokens: 10, truncate: "error" });
    try {
      expect(() => strict.encode("How many singers do we have in every concert of 2014?")).toThrow(PromptTooLongError);
      expect(() => strict.encode("How many singers do we have in every concert of 2014?")).toThrow(/more than maxInputTokens 10/);
    } finally {
      await strict.close();
    }
  });
});
