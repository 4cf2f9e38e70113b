// Tests a sampled generation request (GenerateRequest.sampling; issue 36 §6, a method's declared
// sampling): the call cache keys its temperature and seed (a greedy request keeps the key it always
// had), the remote backends send them in place of their greedy temperature 0 and fixed seed, and the
// in-process llama backend samples reproducibly per seed in deterministic mode and refuses in
// throughput mode.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { contentHash } from "../../lib/hash.ts";
import { CallCache, callKey, identityJson } from "../../lib/llm/call-cache.ts";
import { CompletionsBackend } from "../../lib/llm/completions-backend.ts";
import { createLlamaBackend } from "../../lib/llm/llama-backend.ts";
import { OpenAIChatBackend } from "../../lib/llm/openai-backend.ts";
import type { PromptTokenizer } from "../../lib/llm/prompt-tokenizer.ts";
import type { ChatBackend, GenerateRequest, GenerateResult } from "../../lib/llm/types.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const MODEL = `${ROOT}test/fixtures/models/tiny-random-qwen2.5-instruct.gguf`;
const MODEL_HASH = "020deda330f28dcc711bc16cb341479964b6d1850c4627c0f1ed7796cda8362f";
const greedy: GenerateRequest = { prompt: "List the singers.", maxOutputTokens: 8 };
const sampled = (seed: number, temperature = 0.7): GenerateRequest => ({ ...greedy, sampling: { temperature, seed } });

const servers: Server[] = [];
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A server that records every JSON body it is sent and answers with `answer(path)`. */
async function recording(answer: (path: string) => unknown): Promise<{ url: string; bodies: Record<string, unknown>[] }> {
  const bodies: Record<string, unknown>[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    bodies.push(JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>);
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer(req.url ?? "")));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies };
}

describe("the call cache", () => {
  const identity = { kind: "test", model: "m", modelHash: "h", params: {} };

  it("keys a greedy request as it always did, and a sampled one by its temperature and seed", () => {
    expect(callKey(identity, greedy)).toBe(contentHash({ backend: identityJson(identity), request: { prompt: greedy.prompt, maxOutputTokens: greedy.maxOutputTokens } }));
    const keys = [callKey(identity, greedy), callKey(identity, sampled(1)), callKey(identity, sampled(2)), callKey(identity, sampled(1, 1.0))];
    expect(new Set(keys).size).toBe(4);
    expect(callKey(identity, sampled(1))).toBe(callKey(identity, sampled(1)));
  });

  it("answers a sampled request again from the file, and computes another seed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "merit-sampling-"));
    dirs.push(dir);
    let computed = 0;
    const inner: ChatBackend = {
      identity,
      async generate(request): Promise<GenerateResult> {
        computed += 1;
        return { text: `seed ${request.sampling?.seed ?? "greedy"}`, promptTokens: 3, outputTokens: 2, truncatedPromptTokens: 0, cached: false };
      },
      close: async () => {},
    };
    const cache = new CallCache(inner, join(dir, "calls.sqlite"));
    expect((await cache.generate(sampled(7))).text).toBe("seed 7");
    const again = await cache.generate(sampled(7));
    expect([again.text, again.cached]).toEqual(["seed 7", true]);
    expect((await cache.generate(sampled(8))).text).toBe("seed 8");
    expect((await cache.generate(greedy)).text).toBe("seed greedy");
    expect(computed).toBe(3);
    await cache.close();
  });
});

describe("remote backends", () => {
  it("the chat backend sends the request's temperature and seed, and temperature 0 with its fixed seed for a greedy one", async () => {
    const server = await recording(() => ({ choices: [{ message: { role: "assistant", content: "ok" } }], usage: { prompt_tokens: 3, completion_tokens: 1 } }));
    const backend = new OpenAIChatBackend({ baseUrls: [server.url], model: "m", backoffMs: 1 });
    await backend.generate(greedy);
    await backend.generate(sampled(1234, 0.9));
    expect(server.bodies.map((b) => [b.temperature, b.seed])).toEqual([
      [0, 42],
      [0.9, 1234],
    ]);
  });

  it.each([
    ["llama.cpp", { tokens: [5, 6], tokens_evaluated: 3, tokens_predicted: 2 }],
    ["vllm", { choices: [{ token_ids: [5, 6] }], usage: { prompt_tokens: 3, completion_tokens: 2 } }],
  ])("the %s completions body carries the sample's temperature and seed over the fixed greedy ones", async (engine, answer) => {
    const server = await recording(() => answer);
    const tokenizer = { encode: () => ({ tokens: [1, 2, 3], truncated: 0 }), decode: (ids: readonly number[]) => ids.join(" "), maxInputTokens: 64, truncate: "left", modelHash: "tok", ggufTemplate: true, close: async () => {} } as unknown as PromptTokenizer;
    const backend = new CompletionsBackend({ baseUrls: [server.url], engine, model: "m", tokenizer, backoffMs: 1 });
    await backend.generate(greedy);
    await backend.generate(sampled(99, 0.7));
    expect(server.bodies.map((b) => [b.temperature, b.seed])).toEqual([
      [0, 42],
      [0.7, 99],
    ]);
  });
});

describe("the llama.cpp backend in process", () => {
  it("deterministic mode: a seed gives the same sample every time; greedy calls are unchanged", async () => {
    const llama = await createLlamaBackend({ modelPath: MODEL, modelHash: MODEL_HASH, threads: 1, log: () => undefined });
    try {
      const g1 = await llama.generate(greedy);
      const s1 = await llama.generate(sampled(1, 1.5));
      const s1again = await llama.generate(sampled(1, 1.5));
      const others = await Promise.all([2, 3, 4, 5].map(async (seed) => (await llama.generate(sampled(seed, 1.5))).text));
      expect(s1again).toEqual(s1);
      expect(await llama.generate(greedy)).toEqual(g1);
      // a random tiny model at temperature 1.5: the seeds do not all agree
      expect(new Set([s1.text, ...others]).size).toBeGreaterThan(1);
    } finally {
      await llama.close();
    }
  });

  it("throughput mode refuses a sampled call in one line", async () => {
    const llama = await createLlamaBackend({ modelPath: MODEL, modelHash: MODEL_HASH, threads: 1, mode: "throughput", log: () => undefined });
    try {
      await expect(llama.generate(sampled(1))).rejects.toThrow(/a sampled call \(temperature 0\.7, a method's declared sampling\) needs the llama\.cpp backend's deterministic mode; set model\.mode: "deterministic"/);
    } finally {
      await llama.close();
    }
  });
});
