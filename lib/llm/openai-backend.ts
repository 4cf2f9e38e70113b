/**
 * Remote embeddings, and the chat-completions FALLBACK for generation, over OpenAI-compatible HTTP
 * (METHOD.md §6.4–6.5). The default remote generation path is completions-backend.ts (the kit's own
 * template and token ids, issue 16 §2); this one is for a server whose tokenizer cannot be loaded
 * locally (config `model.prompt_format: "chat"`, recorded as `promptFormat: "chat"` in the identity):
 * one user message to `/v1/chat/completions` with temperature 0, `max_tokens`, a fixed `seed` and the
 * repetition penalty spelled for the engine (engine-request.ts); token counts from the server's
 * `usage` (never re-tokenised here); a deterministic refusal becomes GenerationRefusedError.
 * The SERVER applies the chat template and any truncation: `truncatedPromptTokens` is always 0 here,
 * so serve with a context ≥ maxInputTokens + max_tokens and compare `usage.prompt_tokens`.
 * `/v1/embeddings` vectors are L2-normalised.
 * @module
 */
import { z } from "zod";
import { canonicalJson, type JsonValue } from "../hash.ts";
import { MeritError } from "../errors.ts";
import { EndpointPool, GenerationRefusedError, HttpStatusError, type EndpointPoolOptions } from "./endpoint-pool.ts";
import type { Engine } from "./engine-request.ts";
import { ENGINES } from "./engines/index.ts";
import { l2Normalize } from "../vector.ts";
import type { BackendIdentity, ChatBackend, Embedder, GenerateRequest, GenerateResult } from "./types.ts";

export interface OpenAIOptions extends EndpointPoolOptions {
  /** The served model id sent as `model`. */
  model: string;
  /** Revision or file hash of the served weights, recorded in the identity (cache keys). @default "unpinned" */
  modelRevision?: string;
  /** Seed sent with every chat request. @default 42 */
  seed?: number;
  /** Extra body fields some servers accept — part of the identity. */
  extraBody?: Record<string, JsonValue>;
}

export interface OpenAIChatOptions extends OpenAIOptions {
  /** Spells the repetition penalty for this engine; without it only `extraBody` carries penalties. */
  engine?: Engine;
  /** HF-semantics repetition penalty (needs `engine`). @default 1 (none sent) */
  repetitionPenalty?: number;
  /** Context span the llama.cpp penalty looks back over (llama-server `repeat_last_n`). @default 4608 */
  contextSize?: number;
}

/** The repetition penalty as `engine` names it in a chat request (engine-request.ts). */
function chatPenalty(options: OpenAIChatOptions): Record<string, JsonValue> {
  const p = options.repetitionPenalty ?? 1;
  if (!options.engine || p === 1) return {};
  return ENGINES.get(options.engine).chatPenalty(p, options.contextSize ?? 4608);
}

const ChatResponse = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string().nullable() }) })).min(1),
  usage: z.object({ prompt_tokens: z.number().int().nonnegative(), completion_tokens: z.number().int().nonnegative() }),
});

const EmbeddingResponse = z.object({
  data: z.array(z.object({ index: z.number().int().nonnegative(), embedding: z.array(z.number()) })),
});

function parseAnswer<T>(schema: z.ZodType<T>, json: unknown, what: string): T {
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new MeritError(`${what} answer is not OpenAI-shaped: ${issue.path.join(".") || "(root)"}: ${issue.message}; the server must return choices/usage (chat) or data[].embedding (embeddings)`);
}

function remoteIdentity(kind: string, options: OpenAIOptions, params: BackendIdentity["params"]): BackendIdentity {
  return {
    kind,
    model: options.model,
    modelHash: `${options.model}@${options.modelRevision ?? "unpinned"}`,
    params: { ...params, extraBody: options.extraBody ? canonicalJson(options.extraBody) : null },
  };
}

/** A ChatBackend over one or more OpenAI-compatible servers. */
export class OpenAIChatBackend implements ChatBackend {
  readonly identity: BackendIdentity;
  /** The transport (exposes per-URL counts). */
  readonly pool: EndpointPool;
  readonly #options: OpenAIChatOptions;
  readonly #penalty: Record<string, JsonValue>;

  constructor(options: OpenAIChatOptions) {
    this.#options = options;
    this.#penalty = chatPenalty(options);
    this.pool = new EndpointPool(options);
    this.identity = remoteIdentity("openai-compatible", options, {
      decoding: "greedy",
      temperature: 0,
      seed: options.seed ?? 42,
      promptFormat: "chat",
      engine: options.engine ?? null,
      penalty: Object.keys(this.#penalty).length > 0 ? canonicalJson(this.#penalty) : null,
    });
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    let json: unknown;
    let retries: number;
    try {
      ({ answer: json, retries } = await this.pool.post("/v1/chat/completions", {
        ...this.#options.extraBody,
        ...this.#penalty,
        model: this.#options.model,
        messages: [{ role: "user", content: request.prompt }],
        // greedy unless the request is a declared sample (its own temperature and seed)
        temperature: request.sampling?.temperature ?? 0,
        max_tokens: request.maxOutputTokens,
        seed: request.sampling?.seed ?? this.#options.seed ?? 42,
      }));
    } catch (error) {
      // The server templates, so the kit does not know the prompt's token count: 0 is recorded.
      if (error instanceof HttpStatusError) throw new GenerationRefusedError(error, 0, 0);
      throw error;
    }
    const answer = parseAnswer(ChatResponse, json, "chat completion");
    return {
      text: answer.choices[0].message.content ?? "",
      promptTokens: answer.usage.prompt_tokens,
      outputTokens: answer.usage.completion_tokens,
      truncatedPromptTokens: 0,
      cached: false,
      ...(retries > 0 ? { retries } : {}),
    };
  }

  async close(): Promise<void> {}
}

/** Creates an embedder, asking the server once for the vector length unless `dimension` is given. */
export async function createOpenAIEmbedder(options: OpenAIOptions & { dimension?: number; batchSize?: number }): Promise<OpenAIEmbedder> {
  const pool = new EndpointPool(options);
  const dimension = options.dimension ?? (await embedBatch(pool, options.model, ["dimension probe"]))[0].length;
  return new OpenAIEmbedder(options, pool, dimension);
}

async function embedBatch(pool: EndpointPool, model: string, texts: readonly string[]): Promise<Float32Array[]> {
  const answer = parseAnswer(EmbeddingResponse, await pool.postJson("/v1/embeddings", { model, input: texts }), "embeddings");
  if (answer.data.length !== texts.length) throw new MeritError(`embeddings answer has ${answer.data.length} vectors for ${texts.length} inputs; the server dropped inputs`);
  const byIndex = [...answer.data].sort((a, b) => a.index - b.index);
  return byIndex.map((d, i) => l2Normalize(d.embedding, texts[i]));
}

/** An Embedder over OpenAI-compatible `/v1/embeddings`; build it with `createOpenAIEmbedder`. */
export class OpenAIEmbedder implements Embedder {
  readonly identity: BackendIdentity;
  readonly dimension: number;
  readonly #pool: EndpointPool;
  readonly #model: string;
  readonly #batchSize: number;

  constructor(options: OpenAIOptions & { batchSize?: number }, pool: EndpointPool, dimension: number) {
    this.#pool = pool;
    this.#model = options.model;
    this.#batchSize = options.batchSize ?? 64;
    this.dimension = dimension;
    this.identity = remoteIdentity("openai-compatible-embedding", options, { normalize: "l2" });
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const batches: Array<Promise<Float32Array[]>> = [];
    for (let i = 0; i < texts.length; i += this.#batchSize) batches.push(embedBatch(this.#pool, this.#model, texts.slice(i, i + this.#batchSize)));
    const vectors = (await Promise.all(batches)).flat();
    for (const v of vectors) {
      if (v.length !== this.dimension) throw new MeritError(`embedding has ${v.length} dimensions, expected ${this.dimension}; the server changed models`);
    }
    return vectors;
  }

  async close(): Promise<void> {}
}
