// SLOW: starts real llama-server processes; its timeouts scale with the machine (test/helpers/budget.ts, README "Slow tests").
// Parity of a real llama-server (built by `make llama-server` from the llama.cpp release node-llama-cpp
// bundles; -fa off, 1 thread) with the in-process llama backend (issue 16 §2): 24 prompts built from
// real Spider dev questions (12 initial, 12 repair prompts of the kit, lib/prompts.ts), sent as the
// kit's token ids to /completion, give the same prompt ids, the same generated ids, the same text and
// the same counts. On a difference the test prints the first differing position and the server's
// top-2 log-probability gap there (n_probs). A 4-slot server answering the same prompts concurrently
// (batched decoding on the server) gives the same outputs. Skips when llama-server is not built.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Dataset } from "../../lib/data/index.ts";
import { CompletionsBackend, type CompletionIds } from "../../lib/llm/completions-backend.ts";
import { createLlamaBackend, type LlamaBackend } from "../../lib/llm/llama-backend.ts";
import { loadPromptTokenizer, type PromptTokenizer } from "../../lib/llm/prompt-tokenizer.ts";
import { initialPrompt, repairPrompt } from "../../lib/prompts.ts";
import { LLAMA_SERVER_SKIP, startLlamaServer, type LlamaServer } from "../helpers/llama-server.ts";
import { DEEPSEEK_PREDICTIONS, loadSpider, TINY_QWEN } from "../helpers/run-fixture.ts";
import { budget } from "../helpers/budget.ts";

const MAX_OUTPUT = 48;
let server: LlamaServer;
let llama: LlamaBackend;
let tokenizer: PromptTokenizer;
let remote: CompletionsBackend;
let dataset: Dataset;

/** 12 initial and 12 repair prompts over questions spread through Spider dev (several databases). */
function spiderPrompts(): string[] {
  const predictions = readFileSync(DEEPSEEK_PREDICTIONS, "utf8").split("\n");
  const pick = (i: number) => dataset.examples[(i * 83) % dataset.examples.length];
  const question = (i: number) => {
    const e = pick(i);
    return { dataset: "spider" as const, schema: dataset.schemas.get(e.dbId) ?? "", question: e.question, evidence: e.evidence, index: e.sourceIndex };
  };
  const initial = Array.from({ length: 12 }, (_, i) => initialPrompt(question(i)));
  const repair = Array.from({ length: 12 }, (_, j) => {
    const q = question(12 + j);
    const sql = predictions[q.index] ?? "SELECT 1";
    const failed = j % 2 === 0
      ? { sql, status: "DENOTATION_MISMATCH" as const, dbError: null }
      : { sql: sql.replace(/\bFROM\s+(\w+)/i, "FROM $1_x"), status: "EXECUTION_ERROR" as const, dbError: "no such table: the_table_x" };
    return repairPrompt({ ...q, positives: [], negatives: [], reflections: [], attempts: [failed], currentErrorType: j % 2 === 0 ? "Result Mismatch" : "Schema Linking" });
  });
  return [...initial, ...repair];
}

describe.skipIf(LLAMA_SERVER_SKIP !== null)("llama-server -fa off vs the in-process llama backend", () => {
  beforeAll(async () => {
    dataset = await loadSpider();
    [server, llama, tokenizer] = await Promise.all([
      startLlamaServer({ model: TINY_QWEN }),
      createLlamaBackend({ modelPath: TINY_QWEN, threads: 1 }),
      loadPromptTokenizer({ modelPath: TINY_QWEN }),
    ]);
    remote = new CompletionsBackend({ baseUrls: [server.url], engine: "llama.cpp", model: "tiny-qwen", tokenizer, maxRetries: 0 });
  }, budget(180_000));
  afterAll(async () => {
    await server?.stop();
    await llama?.close();
    await tokenizer?.close();
  });

  it("24 Spider prompts: identical prompt ids, generated ids, text and token counts", async () => {
    const prompts = spiderPrompts();
    expect(prompts).toHaveLength(24);
    let identical = 0;
    const differences: string[] = [];
    for (const [i, prompt] of prompts.entries()) {
      const request = { prompt, maxOutputTokens: MAX_OUTPUT };
      const local = await llama.generateRequestIds(request);
      const served = await remote.generateIds(request, 2);
      expect(served.prompt).toEqual(local.prompt);
      const first = local.output.findIndex((id, k) => served.output[k] !== id);
      const diverged = first >= 0 || served.output.length !== local.output.length;
      if (!diverged) {
        identical++;
        continue;
      }
      const at = first >= 0 ? first : Math.min(local.output.length, served.output.length);
      const top = served.probs?.[at]?.top ?? [];
      const gap = top.length >= 2 ? (top[0].logprob - top[1].logprob).toExponential(3) : "n/a";
      differences.push(`prompt ${i} (${local.prompt.length} tokens): first differing output position ${at}: in-process ${local.output[at]}, server ${served.output[at]}; server top-2 logit gap ${gap}`);
    }
    console.log(`llama-server parity: ${identical}/${prompts.length} prompts identical token for token`);
    for (const line of differences) console.log(line);
    expect(differences).toEqual([]);

    // The product path: text and counts equal the in-process backend's (server usage = kit's ids).
    for (const prompt of [prompts[0], prompts[12]]) {
      const request = { prompt, maxOutputTokens: MAX_OUTPUT };
      expect(await remote.generate(request)).toEqual(await llama.generate(request));
    }
  }, budget(600_000));

  it("4 server slots with 4 requests in flight (batched on the server): the same 24 outputs", async () => {
    const batched = await startLlamaServer({ model: TINY_QWEN, parallel: 4 });
    try {
      const concurrent = new CompletionsBackend({ baseUrls: [batched.url], engine: "llama.cpp", model: "tiny-qwen", tokenizer, maxRetries: 0, maxConcurrencyPerUrl: 4 });
      const prompts = spiderPrompts();
      const served = await Promise.all(prompts.map((prompt) => concurrent.generateIds({ prompt, maxOutputTokens: MAX_OUTPUT })));
      const alone: CompletionIds[] = [];
      for (const prompt of prompts) alone.push(await remote.generateIds({ prompt, maxOutputTokens: MAX_OUTPUT }));
      const same = served.filter((s, i) => JSON.stringify(s.output) === JSON.stringify(alone[i].output)).length;
      console.log(`llama-server -np 4, concurrent: ${same}/${prompts.length} outputs equal the one-slot server's`);
      expect(same).toBe(prompts.length);
    } finally {
      await batched.stop();
    }
  }, budget(600_000));
});
