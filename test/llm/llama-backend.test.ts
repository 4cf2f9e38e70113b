// Tests lib/llm/llama-backend.ts on the tiny random-weight Qwen2.5 GGUF (real tokenizer and template):
// exact prompt rendering, token accounting, left truncation, and greedy determinism (METHOD.md §6.4–6.5).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LlamaModel, Token } from "node-llama-cpp";
import { createLlamaBackend, loadLlamaModel, PromptTooLongError, type LlamaBackend, type LlamaBackendOptions } from "../../lib/llm/llama-backend.ts";
import { ModelFileError } from "../../lib/llm/model-file.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const QWEN = `${ROOT}test/fixtures/models/tiny-random-qwen2.5-instruct.gguf`;
const VOCAB_ONLY = `${ROOT}test/fixtures/models/ggml-vocab-bert-bge.gguf`;
// PROVENANCE.md records this hash; passing it skips re-hashing the file in every load.
const QWEN_SHA = "020deda330f28dcc711bc16cb341479964b6d1850c4627c0f1ed7796cda8362f";
const PROMPTS = ["How many singers do we have?", "List the names of all stadiums.", "SELECT 1"];
// Two demo repair prompts whose output, with CPU flash attention on, changes with the thread count
// within the first 24 tokens (see the fixture's provenance).
const THREAD_SENSITIVE: string[] = JSON.parse(readFileSync(`${ROOT}test/fixtures/llm/thread-sensitive-prompts.json`, "utf8")).prompts;
const MAX_OUT = 24;

let model: LlamaModel; // loaded once; backends with other options share it
let backend: LlamaBackend; // 1 thread, 2 sequences
const shared = (options: Partial<LlamaBackendOptions>) =>
  createLlamaBackend({ modelPath: QWEN, threads: 1, modelHash: QWEN_SHA, loadedModel: model, ...options });

beforeAll(async () => {
  model = await loadLlamaModel(QWEN);
  backend = await shared({ sequences: 2 });
});
afterAll(async () => {
  await backend?.close();
  await model?.dispose();
});

describe("prompt rendering (GGUF's own Qwen2.5 template, one user message, add_generation_prompt)", () => {
  it("equals the Qwen2.5 template's output character for character", () => {
    const msg = "How many singers do we have?";
    // Written by hand from the Qwen2.5-Instruct template: no tools and messages[0] is not a system
    // message ⇒ the default system block; then the user turn; then the generation prompt.
    const expected =
      "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n" +
      "<|im_start|>user\nHow many singers do we have?<|im_end|>\n" +
      "<|im_start|>assistant\n";
    expect(backend.renderPrompt(msg)).toBe(expected);
  });

  it("never contains node-llama-cpp's default system prompt", () => {
    const rendered = backend.renderPrompt("hi");
    expect(rendered).not.toContain("You are a helpful, respectful and honest assistant");
    expect(rendered.match(/<\|im_start\|>system/g)).toHaveLength(1);
  });

  it("keeps multi-line user text verbatim", () => {
    const msg = "line one\nline two\n\n  indented";
    expect(backend.renderPrompt(msg)).toContain(`<|im_start|>user\n${msg}<|im_end|>\n`);
  });
});

describe("token accounting", () => {
  it("promptTokens equals model.tokenize(rendered, specials parsed).length; specials are single ids", async () => {
    const rendered = backend.renderPrompt(PROMPTS[0]);
    const ids = backend.model.tokenize(rendered, true);
    // The rendered text holds 5 ChatML control tokens: <|im_start|> (151644) opens system, user and
    // assistant (3); <|im_end|> (151645) closes system and user (2). Each must be ONE id, not text pieces.
    expect(ids.filter((t) => t === 151644)).toHaveLength(3);
    expect(ids.filter((t) => t === 151645)).toHaveLength(2);
    const result = await backend.generate({ prompt: PROMPTS[0], maxOutputTokens: MAX_OUT });
    expect(result.promptTokens).toBe(ids.length);
    expect(result.truncatedPromptTokens).toBe(0);
    expect(result.cached).toBe(false);
    // Random weights never emit <|im_end|> this early, so decoding runs to the limit.
    expect(result.outputTokens).toBe(MAX_OUT);
    expect(result.text).not.toContain("<|im_end|>");
    // Decoding skips special tokens (METHOD.md §6.4), so an emitted EOS adds no text.
    const imEnd = 151645 as Token;
    expect(backend.model.detokenize([imEnd], false)).toBe("");
    expect(backend.model.isEogToken(imEnd)).toBe(true);
  });

  it("left-truncates to maxInputTokens and counts the dropped tokens", async () => {
    const small = await shared({ maxInputTokens: 12 });
    try {
      const full = small.model.tokenize(small.renderPrompt(PROMPTS[1]), true);
      expect(full.length).toBeGreaterThan(12);
      const { tokens, truncated } = small.promptTokens(PROMPTS[1]);
      expect(truncated).toBe(full.length - 12);
      // The BEGINNING is dropped: the kept ids are the tail, ending with "<|im_start|>assistant\n".
      expect(tokens).toEqual(full.slice(full.length - 12));
      expect(tokens.slice(-3)).toEqual(small.model.tokenize("<|im_start|>assistant\n", true));
      const result = await small.generate({ prompt: PROMPTS[1], maxOutputTokens: 4 });
      expect(result.promptTokens).toBe(12);
      expect(result.truncatedPromptTokens).toBe(full.length - 12);
    } finally {
      await small.close();
    }
  });

  it('truncate: "error" refuses an over-long prompt', async () => {
    const strict = await shared({ maxInputTokens: 12, truncate: "error" });
    try {
      await expect(strict.generate({ prompt: PROMPTS[1], maxOutputTokens: 4 })).rejects.toBeInstanceOf(PromptTooLongError);
    } finally {
      await strict.close();
    }
  });

  it("rejects maxOutputTokens beyond the context it was sized for", async () => {
    await expect(backend.generate({ prompt: "x", maxOutputTokens: 513 })).rejects.toThrow(/maxOutputTokens must be an integer in 1\.\.512/);
  });
});

describe("greedy determinism", () => {
  const generateAll = (b: LlamaBackend) => Promise.all(PROMPTS.map((prompt) => b.generate({ prompt, maxOutputTokens: MAX_OUT })));

  it("same outputs sequentially and with 2 parallel sequences", async () => {
    const sequential = [];
    for (const prompt of PROMPTS) sequential.push(await backend.generate({ prompt, maxOutputTokens: MAX_OUT }));
    const parallel = await generateAll(backend);
    expect(parallel).toEqual(sequential);
    expect(new Set(sequential.map((r) => r.text)).size).toBe(PROMPTS.length); // prompts really differ
  });

  it("same outputs from a second, independent load of the file", async () => {
    const first = await generateAll(backend);
    const reloaded = await createLlamaBackend({ modelPath: QWEN, threads: 1, modelHash: QWEN_SHA });
    try {
      expect(reloaded.model).not.toBe(model);
      expect(await generateAll(reloaded)).toEqual(first);
    } finally {
      await reloaded.close();
    }
  });

  it("same outputs with 4 parallel slots as sequentially, on prompts of very different lengths", async () => {
    const prompts = [...PROMPTS, ...THREAD_SENSITIVE, "Why?", `${PROMPTS[1]} ${PROMPTS[0]}`, THREAD_SENSITIVE[0].slice(0, 900)];
    const sequential = [];
    for (const prompt of prompts) sequential.push(await backend.generate({ prompt, maxOutputTokens: MAX_OUT }));
    const four = await shared({ sequences: 4 });
    try {
      expect(await Promise.all(prompts.map((prompt) => four.generate({ prompt, maxOutputTokens: MAX_OUT })))).toEqual(sequential);
    } finally {
      await four.close();
    }
  });

  it("same outputs with 2 threads as with 1, on prompts whose output flash attention makes thread-dependent", async () => {
    // Few prompts: 2 spinning threads on a busy 2-core machine are slow per token.
    const requests = THREAD_SENSITIVE.map((prompt) => ({ prompt, maxOutputTokens: MAX_OUT }));
    const first = [];
    for (const request of requests) first.push(await backend.generate(request));
    const twoThreads = await shared({ threads: 2 });
    try {
      expect(twoThreads.threads).toBe(2);
      for (const [i, request] of requests.entries()) expect(await twoThreads.generate(request)).toEqual(first[i]);
      expect(twoThreads.identity).toEqual(backend.identity); // same outputs, so the same cache keys
    } finally {
      await twoThreads.close();
    }
  });

  it("the repetition penalty changes the output (it is applied)", async () => {
    const off = await shared({ repetitionPenalty: 1 });
    try {
      const a = await off.generate({ prompt: PROMPTS[0], maxOutputTokens: 64 });
      const b = await backend.generate({ prompt: PROMPTS[0], maxOutputTokens: 64 });
      expect(a.text).not.toBe(b.text);
      expect(off.identity.params.repetitionPenalty).toBe(1);
      expect(backend.identity.params.repetitionPenalty).toBe(1.05);
    } finally {
      await off.close();
    }
  });
});

describe("identity and bad models", () => {
  it("identity names the file, its sha256 and the decoding parameters", () => {
    expect(backend.identity).toMatchObject({ kind: "llama.cpp", model: "tiny-random-qwen2.5-instruct.gguf", modelHash: QWEN_SHA });
    expect(backend.identity.params).toMatchObject({ decoding: "greedy", maxInputTokens: 4096, seed: 42, flashAttention: false });
    expect(backend.identity.params).not.toHaveProperty("threads");
  });

  it("a vocab-only GGUF fails with llama.cpp's reason, the file and `make models`", async () => {
    const error = await createLlamaBackend({ modelPath: VOCAB_ONLY, threads: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelFileError);
    const message = (error as Error).message;
    expect(message).toContain(VOCAB_ONLY);
    expect(message).toContain("missing tensor 'token_embd.weight'");
    expect(message).toContain("make models");
  });
});

describe("EOS accounting (METHOD.md §6.5)", () => {
  // Random weights never emit EOS, so this uses stories260K (real weights) with its EOS id rewritten in
  // the GGUF header to a token the model does emit: the patched model computes the same logits, so
  // its greedy output equals the original's until that token, where it must stop.
  it("stops at EOS, counts it in outputTokens, and keeps it out of the text", async () => {
    const original = `${ROOT}test/fixtures/models/stories260K.gguf`;
    const bytes = readFileSync(original);
    const key = Buffer.from("tokenizer.ggml.eos_token_id");
    const at = bytes.indexOf(key) + key.length; // then: u32 value type (4 = UINT32), u32 value
    expect([bytes.readUInt32LE(at), bytes.readUInt32LE(at + 4)]).toEqual([4, 2]);

    const stories = await loadLlamaModel(original);
    const template = "{{ bos_token }}{% for message in messages %}{{ message['content'] }}{% endfor %}";
    const probe = await createLlamaBackend({ modelPath: original, loadedModel: stories, threads: 1, chatTemplate: template, repetitionPenalty: 1, modelHash: "stories" });
    const prompt = "Once upon a time";
    expect(probe.renderPrompt(prompt)).toBe("<s>Once upon a time"); // bos_token spelled with the model's text
    // Reference: a bare node-llama-cpp greedy loop on the original model (its EOS, id 2, never comes).
    const context = await stories.createContext({ contextSize: 256, threads: 1 });
    const reference: Token[] = [];
    for await (const token of context.getSequence().evaluate(probe.promptTokens(prompt).tokens, { temperature: 0 })) {
      reference.push(token);
      if (reference.length >= 24) break;
    }
    const newEos = reference[5];
    const stop = reference.indexOf(newEos); // first time the model emits it (≤ 5)
    expect(stop).toBeGreaterThan(0); // a non-empty text before the EOS
    await context.dispose();
    await probe.close();
    await stories.dispose();

    const dir = mkdtempSync(join(tmpdir(), "merit-eos-"));
    try {
      const patched = Buffer.from(bytes);
      patched.writeUInt32LE(newEos, at + 4);
      writeFileSync(join(dir, "stories-eos.gguf"), patched);
      const backend = await createLlamaBackend({ modelPath: join(dir, "stories-eos.gguf"), threads: 1, chatTemplate: template, repetitionPenalty: 1 });
      try {
        const result = await backend.generate({ prompt, maxOutputTokens: 24 });
        expect(result.outputTokens).toBe(stop + 1); // the EOS token itself is counted
        expect(result.text).toBe(backend.model.detokenize(reference.slice(0, stop), false));
      } finally {
        await backend.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
