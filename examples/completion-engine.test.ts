// SLOW: starts real llama-server processes; its timeouts scale with the machine (test/helpers/budget.ts, README "Slow tests").
// Tests examples/completion-engine.ts from outside lib/: the `llama.cpp-oai` engine is selectable by
// config `model.engine` once loaded, refuses a malformed answer with one line, and — against a real
// llama-server with the tiny Qwen GGUF — gives the bundled `llama.cpp` engine's prompt ids, generated
// ids, text and token counts on 8 Spider prompts (initial and repair), token for token, and a
// `merit grid --plugin` run whose config names it (`model.engine`) repairs through it. The server
// part skips when llama-server is not built (`make llama-server`).
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gridCommand } from "../lib/cli/run.ts";
import type { Dataset } from "../lib/data/index.ts";
import { parseConfig } from "../lib/experiment/config.ts";
import { CompletionsBackend } from "../lib/llm/completions-backend.ts";
import { engineRequest } from "../lib/llm/engines/index.ts";
import { loadPromptTokenizer, type PromptTokenizer } from "../lib/llm/prompt-tokenizer.ts";
import { initialPrompt, repairPrompt } from "../lib/prompts.ts";
import { LLAMA_SERVER_SKIP, startLlamaServer, type LlamaServer } from "../test/helpers/llama-server.ts";
import { DEEPSEEK_PREDICTIONS, loadSpider, readJsonl, SPIDER_DIR, tempDir, TINY_BGE, TINY_QWEN, writeLlama3InitialCache } from "../test/helpers/run-fixture.ts";
import "./completion-engine.ts";
import { budget } from "../test/helpers/budget.ts";

const MAX_OUTPUT = 48;
const DECODING = { repetitionPenalty: 1.1, seed: 0, contextSize: 4096, model: "tiny-qwen" };

describe("the llama.cpp-oai engine", () => {
  it("is a registered engine the config can name", () => {
    const config = parseConfig({ dataset: "spider", data_dir: "data/spider", initial_cache: "initial.json", model: { backend: "openai", engine: "llama.cpp-oai", base_urls: ["http://127.0.0.1:1"] } });
    expect(config.model.engine).toBe("llama.cpp-oai");
    const request = engineRequest("llama.cpp-oai", DECODING);
    expect(request.path).toBe("/v1/completions");
    expect(request.body([1, 2, 3], 7)).toMatchObject({ prompt: [1, 2, 3], max_tokens: 7, return_tokens: true, verbose: true, repeat_last_n: 4096 });
  });

  it("refuses an answer without llama-server's token ids, naming the endpoint and the fix", () => {
    const request = engineRequest("llama.cpp-oai", DECODING);
    expect(() => request.parse({ choices: [{ text: "x" }], usage: { prompt_tokens: 3, completion_tokens: 1 } })).toThrow(/\/v1\/completions answer is not shaped as expected: __verbose: .*llama-server/);
    expect(request.parse({ choices: [{ text: "x" }], usage: { prompt_tokens: 3, completion_tokens: 1 }, __verbose: { tokens: [87], truncated: false } })).toEqual({ output: [87], promptTokens: 3, outputTokens: 1, probs: null });
  });
});

describe.skipIf(LLAMA_SERVER_SKIP !== null)("llama.cpp-oai vs the bundled llama.cpp engine on a real llama-server", () => {
  let server: LlamaServer;
  let tokenizer: PromptTokenizer;
  let dataset: Dataset;
  beforeAll(async () => {
    [server, tokenizer, dataset] = await Promise.all([startLlamaServer({ model: TINY_QWEN }), loadPromptTokenizer({ modelPath: TINY_QWEN }), loadSpider()]);
  }, budget(180_000));
  afterAll(async () => {
    await server?.stop();
    await tokenizer?.close();
  });

  /** 4 initial and 4 repair prompts over questions spread through Spider dev. */
  function prompts(): string[] {
    const predictions = readFileSync(DEEPSEEK_PREDICTIONS, "utf8").split("\n");
    const question = (i: number) => {
      const e = dataset.examples[(i * 131) % dataset.examples.length];
      return { dataset: "spider" as const, schema: dataset.schemas.get(e.dbId) ?? "", question: e.question, evidence: e.evidence, index: e.sourceIndex };
    };
    const initial = Array.from({ length: 4 }, (_, i) => initialPrompt(question(i)));
    const repair = Array.from({ length: 4 }, (_, j) => {
      const q = question(4 + j);
      return repairPrompt({ ...q, positives: [], negatives: [], reflections: [], attempts: [{ sql: predictions[q.index] ?? "SELECT 1", status: "DENOTATION_MISMATCH" as const, dbError: null }], currentErrorType: "Result Mismatch" });
    });
    return [...initial, ...repair];
  }

  it("8 Spider prompts: the same prompt ids, generated ids, text and token counts", async () => {
    const backend = (engine: string) => new CompletionsBackend({ baseUrls: [server.url], engine, model: "tiny-qwen", tokenizer, maxRetries: 0 });
    const [bundled, plugin] = [backend("llama.cpp"), backend("llama.cpp-oai")];
    let generated = 0;
    for (const prompt of prompts()) {
      const request = { prompt, maxOutputTokens: MAX_OUTPUT };
      const [a, b] = [await bundled.generateIds(request), await plugin.generateIds(request)];
      expect(b.prompt).toEqual(a.prompt);
      expect(b.output).toEqual(a.output);
      expect(await plugin.generate(request)).toEqual(await bundled.generate(request));
      generated += a.output.length;
    }
    console.log(`llama.cpp-oai vs llama.cpp: 8/8 prompts identical, ${generated} generated tokens`);
    expect(generated).toBeGreaterThan(8 * 8); // real generations, not empty answers
    expect(plugin.identity.params.engine).toBe("llama.cpp-oai");
  }, budget(600_000));

  it("a config naming model.engine \"llama.cpp-oai\" runs through merit grid --plugin", async () => {
    const root = tempDir("oai-engine");
    try {
      const initialCache = join(root, "initial.json");
      await writeLlama3InitialCache(initialCache);
      const config = join(root, "config.json");
      const model = { backend: "openai", engine: "llama.cpp-oai", base_urls: [server.url], model_name: "tiny-qwen", path: TINY_QWEN, requests_per_url: 1 };
      writeFileSync(config, JSON.stringify({ dataset: "spider", data_dir: SPIDER_DIR, initial_cache: initialCache, call_cache: join(root, "calls.sqlite"), protocol: "merit", max_repair_steps: 1, model, embedder: { backend: "llama", path: TINY_BGE } }));
      const err: string[] = [];
      const dir = join(root, "runs");
      expect(await gridCommand.run(["--config", config, "--plugin", "examples/completion-engine.ts", "--methods", "iterative", "--seeds", "0", "--limit", "4", "--out", dir], { out: () => {}, err: (l) => err.push(l) }), err.join("\n")).toBe(0);
      const manifest = JSON.parse(readFileSync(join(dir, "iterative-s0", "manifest.json"), "utf8"));
      expect(JSON.stringify(manifest)).toContain("llama.cpp-oai");
      const prompts = readJsonl(join(dir, "iterative-s0", "prompts.jsonl"));
      expect(prompts.length).toBeGreaterThan(0); // repairs were generated by the server through the plugin's engine
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, budget(300_000));
});
