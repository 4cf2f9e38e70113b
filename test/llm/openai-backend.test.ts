// Tests lib/llm/openai-backend.ts and lib/llm/endpoint-pool.ts against local HTTP servers on 127.0.0.1:
// a real model (the tiny Qwen through the llama backend) behind real HTTP, least-busy sharding over
// two URLs, retries on 429/500/timeouts/dead ports, and immediate errors on other 4xx.
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HttpStatusError, RetriesExhaustedError } from "../../lib/llm/endpoint-pool.ts";
import { createLlamaBackend, type LlamaBackend } from "../../lib/llm/llama-backend.ts";
import { createLlamaEmbedder, type LlamaEmbedder } from "../../lib/llm/llama-embedder.ts";
import { createOpenAIEmbedder, OpenAIChatBackend } from "../../lib/llm/openai-backend.ts";
import { startOpenAIServer, type Script, type TestServer } from "./fixtures/openai-server.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const servers: TestServer[] = [];
let llama: LlamaBackend;
let embedder: LlamaEmbedder;

const serve = async (opts: Parameters<typeof startOpenAIServer>[0]) => {
  const server = await startOpenAIServer(opts);
  servers.push(server);
  return server;
};
const okChat = (content: string) => JSON.stringify({ choices: [{ message: { role: "assistant", content } }], usage: { prompt_tokens: 5, completion_tokens: 2 } });
const chatOnly = (script: Script, options: Partial<ConstructorParameters<typeof OpenAIChatBackend>[0]> = {}) =>
  serve({ script }).then((s) => ({ server: s, backend: new OpenAIChatBackend({ baseUrls: [s.url], model: "m", backoffMs: 1, ...options }) }));

beforeAll(async () => {
  llama = await createLlamaBackend({
    modelPath: `${ROOT}test/fixtures/models/tiny-random-qwen2.5-instruct.gguf`,
    threads: 1,
    sequences: 2,
    modelHash: "020deda330f28dcc711bc16cb341479964b6d1850c4627c0f1ed7796cda8362f",
  });
  embedder = await createLlamaEmbedder({ modelPath: `${ROOT}test/fixtures/models/tiny-random-bert-bge.gguf`, threads: 1 });
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await llama?.close();
  await embedder?.close();
});

describe("a real model behind real HTTP", () => {
  it("chat completions return the llama backend's text and token counts", async () => {
    const server = await serve({ chat: llama });
    const remote = new OpenAIChatBackend({ baseUrls: [`${server.url}/v1/`], model: "tiny-qwen", modelRevision: "020deda3" });
    const request = { prompt: "How many singers do we have?", maxOutputTokens: 12 };
    const direct = await llama.generate(request);
    const viaHttp = await remote.generate(request);
    expect(viaHttp).toEqual(direct);
    expect(viaHttp.outputTokens).toBe(12);
    expect(remote.identity).toMatchObject({ kind: "openai-compatible", model: "tiny-qwen", modelHash: "tiny-qwen@020deda3" });
  });

  it("least-busy sharding spreads concurrent calls over two URLs, one in flight each", async () => {
    const [a, b] = [await serve({ chat: llama }), await serve({ chat: llama })];
    const remote = new OpenAIChatBackend({ baseUrls: [a.url, b.url], model: "tiny-qwen", maxConcurrencyPerUrl: 1 });
    const prompts = ["p1", "p2", "p3", "p4"];
    const results = await Promise.all(prompts.map((prompt) => remote.generate({ prompt, maxOutputTokens: 6 })));
    expect(results.map((r) => r.outputTokens)).toEqual([6, 6, 6, 6]);
    // With one slot per URL, 4 calls alternate: 2 on each server.
    expect([a.requests, b.requests]).toEqual([2, 2]);
    expect(remote.pool.served().map((s) => s.served)).toEqual([2, 2]);
  });

  it("embeddings come back in input order, L2-normalised, equal to the local embedder's", async () => {
    const server = await serve({ embedder });
    const remote = await createOpenAIEmbedder({ baseUrls: [server.url], model: "tiny-bge", batchSize: 2 });
    expect(remote.dimension).toBe(32);
    const texts = ["singer", "concert", "stadium"];
    const [viaHttp, direct] = [await remote.embed(texts), await embedder.embed(texts)];
    expect(viaHttp).toHaveLength(3);
    viaHttp.forEach((v, i) => v.forEach((x, j) => expect(x).toBeCloseTo(direct[i][j], 6)));
  });
});

describe("retries and errors", () => {
  it("retries 429 and 500, then succeeds", async () => {
    const { server, backend } = await chatOnly((n) =>
      n === 0 ? { status: 429, body: "slow down" } : n === 1 ? { status: 500, body: "oops" } : { status: 200, body: okChat("SELECT 1") },
    );
    const result = await backend.generate({ prompt: "q", maxOutputTokens: 4 });
    // The two retried failures are counted for the call and for the pool, by kind.
    expect(result).toEqual({ text: "SELECT 1", promptTokens: 5, outputTokens: 2, truncatedPromptTokens: 0, cached: false, retries: 2 });
    expect(backend.pool.transientRetries()).toEqual({ network: 0, timeout: 0, status: 2, gaveUp: 0 });
    expect(server.requests).toBe(3);
  });

  it("a 400 fails at once with status, body excerpt and URL", async () => {
    const { server, backend } = await chatOnly(() => ({ status: 400, body: '{"error":{"message":"max_tokens is too large"}}' }));
    const error = await backend.generate({ prompt: "q", maxOutputTokens: 4 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpStatusError);
    expect((error as Error).message).toContain(`${server.url}/v1/chat/completions answered HTTP 400`);
    expect((error as Error).message).toContain("max_tokens is too large");
    expect(server.requests).toBe(1);
  });

  it("gives up after maxRetries + 1 attempts of 503", async () => {
    const { server, backend } = await chatOnly(() => ({ status: 503, body: "loading model" }), { maxRetries: 2 });
    const error = await backend.generate({ prompt: "q", maxOutputTokens: 4 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetriesExhaustedError);
    expect((error as Error).message).toMatch(/after 3 attempt\(s\); last: .* answered HTTP 503: loading model/);
    expect(backend.pool.transientRetries()).toEqual({ network: 0, timeout: 0, status: 2, gaveUp: 1 });
    expect(server.requests).toBe(3);
  });

  it("a hung server times out (AbortController) and is retried", async () => {
    const { server, backend } = await chatOnly((n) => (n === 0 ? { status: 200, body: okChat("late"), delayMs: 5_000 } : { status: 200, body: okChat("on time") }), {
      timeoutMs: 200,
    });
    const result = await backend.generate({ prompt: "q", maxOutputTokens: 4 });
    expect(result.text).toBe("on time");
    expect(result.retries).toBe(1);
    expect(backend.pool.transientRetries()).toEqual({ network: 0, timeout: 1, status: 0, gaveUp: 0 });
    expect(server.requests).toBe(2);
  });

  it("a closed port is a network error, retried, then reported with the URL", async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const backend = new OpenAIChatBackend({ baseUrls: [`http://127.0.0.1:${port}`], model: "m", backoffMs: 1, maxRetries: 1 });
    await expect(backend.generate({ prompt: "q", maxOutputTokens: 4 })).rejects.toThrow(new RegExp(`after 2 attempt.*127\\.0\\.0\\.1:${port}.*network error`));
    expect(backend.pool.transientRetries()).toEqual({ network: 1, timeout: 0, status: 0, gaveUp: 1 });
  });

  it("with every URL set aside, the one set aside longest ago is asked next, and one that answers is up again", async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    // B hangs once (timed out: set aside after A), then answers; A stays dead.
    const b = await serve({ script: (n) => (n === 0 ? { status: 200, body: okChat("late"), delayMs: 5_000 } : { status: 200, body: okChat("back") }) });
    const backend = new OpenAIChatBackend({ baseUrls: [`http://127.0.0.1:${port}`, b.url], model: "m", backoffMs: 1, maxRetries: 3, timeoutMs: 200, downMs: 60_000 });
    // A refused, B timed out, A (aside longest) refused again, then B (now aside longest) answers.
    const first = await backend.generate({ prompt: "q", maxOutputTokens: 4 });
    expect(first).toMatchObject({ text: "back", retries: 3 });
    expect(backend.pool.transientRetries()).toEqual({ network: 2, timeout: 1, status: 0, gaveUp: 0 });
    // B answered, so it is up again: the next call goes there at once.
    const second = await backend.generate({ prompt: "q2", maxOutputTokens: 4 });
    expect(second.text).toBe("back");
    expect(second.retries).toBeUndefined();
    expect(b.requests).toBe(3);
  });

  it("a non-OpenAI answer is a clear error", async () => {
    const { backend } = await chatOnly(() => ({ status: 200, body: '{"choices":[]}' }));
    await expect(backend.generate({ prompt: "q", maxOutputTokens: 4 })).rejects.toThrow(/not OpenAI-shaped: choices/);
  });
});
