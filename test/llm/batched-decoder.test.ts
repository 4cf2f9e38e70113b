// Stress test of throughput mode (lib/llm/batched-decoder.ts) on the tiny random-weight Qwen2.5 GGUF:
// 8 sequences of one context, 216 prompts of very different lengths (Spider dev questions with a
// predicted SQL, and two ~700-token repair prompts) with different output caps, so sequences join
// and leave mid-batch and long prompts are split across steps. Every output must equal what the
// prompt gets alone on the deterministic path, except at a documented near-tie (each printed with
// its logit gap); no output may be another prompt's.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LlamaModel, Token } from "node-llama-cpp";
import { createLlamaBackend, loadLlamaModel, type LlamaBackend } from "../../lib/llm/llama-backend.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const QWEN = `${ROOT}test/fixtures/models/tiny-random-qwen2.5-instruct.gguf`;
const QWEN_SHA = "020deda330f28dcc711bc16cb341479964b6d1850c4627c0f1ed7796cda8362f";
const SLOTS = 8;
/** A divergence counts as a near-tie when the top-2 logits at the first differing step differ by less than this. */
const NEAR_TIE = 1e-3;

const questions: Array<{ question: string }> = JSON.parse(readFileSync(`${ROOT}data/spider/dev.json`, "utf8"));
const predictions = readFileSync(`${ROOT}data/predictions/spider_dev__Deepseek-Coder-7B.sql`, "utf8").split("\n");
const long: string[] = JSON.parse(readFileSync(`${ROOT}test/fixtures/llm/thread-sensitive-prompts.json`, "utf8")).prompts;
const PROMPTS: string[] = [];
for (let i = 0; i < 212; i++) {
  PROMPTS.push(`Question: ${questions[i].question}\nPredicted SQL: ${predictions[i] ?? ""}\nIs the SQL right? Answer with SQL only.`);
  if (i % 53 === 0) PROMPTS.push(long[(i / 53) % 2]);
}
const maxOut = (i: number) => 6 + ((i * 7) % 19); // 6..24 tokens: sequences finish at different steps

let model: LlamaModel;
let alone: LlamaBackend; // deterministic: one context, one sequence
let batched: LlamaBackend; // throughput: one context, 8 sequences
const quiet = () => {};

beforeAll(async () => {
  model = await loadLlamaModel(QWEN);
  const common = { modelPath: QWEN, modelHash: QWEN_SHA, loadedModel: model, threads: 1, maxInputTokens: 1024, maxOutputTokensLimit: 32, log: quiet };
  alone = await createLlamaBackend({ ...common, sequences: 1 });
  batched = await createLlamaBackend({ ...common, sequences: SLOTS, mode: "throughput" });
});
afterAll(async () => {
  await alone?.close();
  await batched?.close();
  await model?.dispose();
});

/** The top-2 logit gap after `prefix` (prompt + shared output), with the backend's repetition penalty applied. */
async function logitGap(prompt: Token[], prefix: Token[]): Promise<number> {
  const context = await model.createContext({ contextSize: 1024 + 32, threads: 1, flashAttention: false });
  try {
    const sequence = context.getSequence();
    const input = [...prompt, ...prefix];
    const result = await sequence.controlledEvaluate([
      ...input.slice(0, -1),
      [input[input.length - 1], { generateNext: { probabilities: true, options: { temperature: 1, topK: 0, topP: 1, minP: 0, repeatPenalty: { punishTokens: input, maxPunishTokens: 1056, penalty: 1.05, frequencyPenalty: 0, presencePenalty: 0 } } } }],
    ]);
    const probabilities = [...(result[input.length - 1]?.next.probabilities?.values() ?? [])];
    return Math.log(probabilities[0]) - Math.log(probabilities[1]);
  } finally {
    await context.dispose();
  }
}

describe("throughput mode: 8 sequences in one batched context", () => {
  it("gives every one of 216 prompts its own output, equal to its output alone except at near-ties", async () => {
    expect(PROMPTS.length).toBeGreaterThanOrEqual(200);
    const prompts = PROMPTS.map((prompt) => alone.promptTokens(prompt).tokens);
    const expectedIds: Token[][] = [];
    for (let i = 0; i < prompts.length; i++) expectedIds.push(await alone.generateIds(prompts[i], maxOut(i)));
    const gotIds = await Promise.all(prompts.map((prompt, i) => batched.generateIds(prompt, maxOut(i))));
    const expected = expectedIds.map((ids) => ids.join(","));
    const got = gotIds.map((ids) => ({ text: ids.join(",") }));
    // The test means something only if prompts get different outputs.
    expect(new Set(expected).size).toBeGreaterThan(PROMPTS.length / 2);
    expect(batched.batched!.stats.batches).toBeLessThan(expected.length * 10); // steps were shared

    const divergent: number[] = [];
    for (let i = 0; i < PROMPTS.length; i++) {
      if (got[i].text === expected[i]) continue;
      divergent.push(i);
      // Another prompt's output would be a mix-up, never a near-tie.
      const other = expected.findIndex((text, j) => j !== i && text === got[i].text && text !== expected[i]);
      expect(other, `prompt ${i} got prompt ${other}'s output`).toBe(-1);
      const a = expectedIds[i];
      const b = gotIds[i];
      let k = 0;
      while (k < a.length && k < b.length && a[k] === b[k]) k++;
      const gap = await logitGap(prompts[i], a.slice(0, k));
      console.log(`near-tie check: prompt ${i} differs at output token ${k}; top-2 logit gap there ${gap.toExponential(3)}`);
      expect(gap, `prompt ${i}: divergence at token ${k} is not a near-tie`).toBeLessThan(NEAR_TIE);
    }
    console.log(`throughput mode: ${PROMPTS.length - divergent.length}/${PROMPTS.length} outputs identical to the prompt alone; ${batched.batched!.stats.batches} batches`);
  });

  it("records the mode in the backend identity (cache key); deterministic mode's identity is unchanged", () => {
    expect(batched.identity.params.mode).toBe("throughput");
    expect("mode" in alone.identity.params).toBe(false);
    expect({ ...batched.identity.params, mode: undefined }).toEqual({ ...alone.identity.params, mode: undefined });
  });

  it("a prompt longer than a sequence's context fails alone, and the other sequences go on", async () => {
    const tooLong = Array.from({ length: 900 }, (_, i) => `w${i}`).join(" ");
    const small = await createLlamaBackend({ modelPath: QWEN, modelHash: QWEN_SHA, loadedModel: model, threads: 1, maxInputTokens: 64, maxOutputTokensLimit: 8, sequences: 2, mode: "throughput", truncate: "error", log: quiet });
    try {
      const long = small.model.tokenize(tooLong);
    const [bad, good] = await Promise.allSettled([small.generateIds(long, 8), small.generateIds(long.slice(0, 30), 8)]);
      expect(bad.status).toBe("rejected");
      expect(good.status).toBe("fulfilled");
    } finally {
      await small.close();
    }
  });
});
