// SLOW: starts real llama-server processes; its timeouts scale with the machine (test/helpers/budget.ts, README "Slow tests").
// Parity on the realistic-size model (issue 16 §1, §4): bench/make-model.ts writes the seeded
// random-weight GGUF in the exact shape of Qwen2.5-0.5B-Instruct (24 layers, Q8_0, 531 MB, the real
// Qwen2.5 tokenizer) into a temp folder; a real llama-server (-fa off, 1 thread) serving it and the
// in-process llama backend give the same prompt and generated token ids, and the same text and counts,
// on real Spider prompts of the kit. Short outputs keep it to about a minute on one CPU thread.
// Skips when llama-server is not built.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeBenchModel } from "../../bench/make-model.ts";
import { CompletionsBackend } from "../../lib/llm/completions-backend.ts";
import { createLlamaBackend, type LlamaBackend } from "../../lib/llm/llama-backend.ts";
import { loadPromptTokenizer, type PromptTokenizer } from "../../lib/llm/prompt-tokenizer.ts";
import { initialPrompt, repairPrompt } from "../../lib/prompts.ts";
import { LLAMA_SERVER_SKIP, startLlamaServer, type LlamaServer } from "../helpers/llama-server.ts";
import { loadSpider, tempDir } from "../helpers/run-fixture.ts";
import { budget } from "../helpers/budget.ts";

const MAX_OUTPUT = 8;
const dir = tempDir("realistic-model");
const MODEL = join(dir, "qwen2.5-0.5b-shape-random-q8_0.gguf");
let server: LlamaServer;
let llama: LlamaBackend;
let tokenizer: PromptTokenizer;
let remote: CompletionsBackend;

describe.skipIf(LLAMA_SERVER_SKIP !== null)("llama-server vs in-process on the Qwen2.5-0.5B-shape model", () => {
  beforeAll(async () => {
    expect(writeBenchModel(MODEL, "0.5b", "q8_0", 42)).toBe(531_067_776);
    [server, llama, tokenizer] = await Promise.all([
      startLlamaServer({ model: MODEL }),
      createLlamaBackend({ modelPath: MODEL, threads: 1 }),
      loadPromptTokenizer({ modelPath: MODEL }),
    ]);
    remote = new CompletionsBackend({ baseUrls: [server.url], engine: "llama.cpp", model: "qwen-0.5b-shape", tokenizer, maxRetries: 0 });
  }, budget(300_000));
  afterAll(async () => {
    await server?.stop();
    await llama?.close();
    await tokenizer?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("an initial and a repair prompt from Spider dev: identical ids, text and token counts", async () => {
    const dataset = await loadSpider();
    const q = (i: number) => {
      const e = dataset.examples[i];
      return { dataset: "spider" as const, schema: dataset.schemas.get(e.dbId) ?? "", question: e.question, evidence: e.evidence };
    };
    const prompts = [
      initialPrompt(q(0)),
      repairPrompt({ ...q(500), positives: [], negatives: [], reflections: [], attempts: [{ sql: "SELECT name FROM singer_x", status: "EXECUTION_ERROR", dbError: "no such table: singer_x" }], currentErrorType: "Schema Linking" }),
    ];
    for (const prompt of prompts) {
      const request = { prompt, maxOutputTokens: MAX_OUTPUT };
      const local = await llama.generateRequestIds(request);
      const served = await remote.generateIds(request, 2);
      expect(served.prompt).toEqual(local.prompt);
      expect(served.output, `prompt of ${local.prompt.length} tokens`).toEqual(local.output);
      expect(await remote.generate(request)).toEqual(await llama.generate(request));
    }
  }, budget(600_000));
});
