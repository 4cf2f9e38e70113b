/**
 * Remote generation with the kit's own prompt (METHOD.md §6.4–6.5; issue 16 §2): a ChatBackend over
 * the completions endpoints of llama-server or vLLM that sends what LlamaBackend would evaluate — the
 * GGUF's chat template rendered by the kit, tokenised and left-truncated to `maxInputTokens` here —
 * as token ids, and decodes the generated ids with the same tokenizer, so text and token counts
 * equal the in-process backend's when the server computes the same logits (llama-server `-fa off`,
 * test/llm/server-parity.test.ts). The server neither templates nor truncates nor detokenises.
 * The counts recorded are the server's usage, checked against the ids sent and received.
 * Deterministic refusals become GenerationRefusedError (a recorded failed generation,
 * lib/repair/episode.ts); transient failures are retried by the EndpointPool.
 * @module
 */
import { canonicalJson, type JsonValue } from "../hash.ts";
import { MeritError } from "../errors.ts";
import { EndpointPool, GenerationRefusedError, HttpStatusError, type EndpointPoolOptions } from "./endpoint-pool.ts";
import type { Engine, EngineRequest, TokenProbs } from "./engine-request.ts";
import { engineRequest } from "./engines/index.ts";
import type { PromptTokenizer } from "./prompt-tokenizer.ts";
import type { BackendIdentity, ChatBackend, GenerateRequest, GenerateResult } from "./types.ts";

export interface CompletionsBackendOptions extends EndpointPoolOptions {
  engine: Engine;
  /** The served model id (`model` in vLLM requests). */
  model: string;
  /** Revision or file hash of the served weights, recorded in the identity. @default "unpinned" */
  modelRevision?: string;
  /** Template + tokenizer of the served model (its GGUF, vocabulary only). */
  tokenizer: PromptTokenizer;
  /** HF-semantics repetition penalty over prompt + generated tokens. @default 1.05 (METHOD.md §11.9) */
  repetitionPenalty?: number;
  /** @default 42 */
  seed?: number;
  /** Largest maxOutputTokens a request may ask for. @default 512 */
  maxOutputTokensLimit?: number;
  /** Output tokens of the repetition penalty's span (with maxInputTokens), kept at the config's max_output_tokens when a call kind may generate more, so repairs see the same penalty. @default maxOutputTokensLimit */
  penaltyOutputTokens?: number;
  /** `close()` also closes the tokenizer. @default false */
  ownsTokenizer?: boolean;
}

/** Generated ids of one call, with the server's top candidates per position when asked for. */
export interface CompletionIds {
  prompt: number[];
  output: number[];
  probs: TokenProbs[] | null;
}

/** A ChatBackend over OpenAI-compatible completions endpoints, prompting with token ids. */
export class CompletionsBackend implements ChatBackend {
  readonly identity: BackendIdentity;
  /** The transport (exposes per-URL counts). */
  readonly pool: EndpointPool;
  readonly #tokenizer: PromptTokenizer;
  readonly #request: EngineRequest;
  readonly #maxOutputTokensLimit: number;
  readonly #ownsTokenizer: boolean;

  constructor(options: CompletionsBackendOptions) {
    const t = options.tokenizer;
    this.#ownsTokenizer = options.ownsTokenizer ?? false;
    this.#tokenizer = t;
    this.#maxOutputTokensLimit = options.maxOutputTokensLimit ?? 512;
    const repetitionPenalty = options.repetitionPenalty ?? 1.05;
    const seed = options.seed ?? 42;
    this.#request = engineRequest(options.engine, { repetitionPenalty, seed, contextSize: t.maxInputTokens + (options.penaltyOutputTokens ?? this.#maxOutputTokensLimit), model: options.model });
    this.pool = new EndpointPool(options);
    this.identity = {
      kind: "openai-compatible",
      model: options.model,
      modelHash: `${options.model}@${options.modelRevision ?? "unpinned"}`,
      params: {
        engine: options.engine,
        promptFormat: "token-ids",
        decoding: "greedy",
        tokenizer: t.modelHash,
        chatTemplate: t.ggufTemplate ? "gguf" : "custom",
        maxInputTokens: t.maxInputTokens,
        truncation: t.truncate,
        repetitionPenalty,
        repetitionPenaltyScope: "hf-all-previous-tokens",
        seed,
        endpoint: this.#request.path,
        request: canonicalJson(this.#request.fixed),
      },
    };
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const { tokens, truncated } = this.#tokenizer.encode(request.prompt);
    // A declared sample overrides the fixed greedy temperature and seed (both engines' body fields).
    const sampling: Record<string, JsonValue> | undefined = request.sampling ? { temperature: request.sampling.temperature, seed: request.sampling.seed } : undefined;
    const { output, promptTokens, outputTokens, retries } = await this.#call(tokens, truncated, request.maxOutputTokens, sampling);
    return { text: this.#tokenizer.decode(output), promptTokens, outputTokens, truncatedPromptTokens: truncated, cached: false, ...(retries > 0 ? { retries } : {}) };
  }

  /**
   * The prompt ids sent and the generated ids, with the server's top `nProbs` pre-sampling
   * candidates per position (llama.cpp only; for parity diagnostics — not cached).
   */
  async generateIds(request: GenerateRequest, nProbs = 0): Promise<CompletionIds> {
    const { tokens, truncated } = this.#tokenizer.encode(request.prompt);
    const extra: Record<string, JsonValue> = nProbs > 0 ? { n_probs: nProbs } : {};
    const { output, probs } = await this.#call(tokens, truncated, request.maxOutputTokens, extra);
    return { prompt: tokens, output, probs };
  }

  async #call(tokens: number[], truncated: number, maxOutputTokens: number, extra?: Record<string, JsonValue>) {
    if (!Number.isInteger(maxOutputTokens) || maxOutputTokens < 1 || maxOutputTokens > this.#maxOutputTokensLimit) {
      throw new MeritError(`maxOutputTokens must be an integer in 1..${this.#maxOutputTokensLimit}, got ${maxOutputTokens}; raise maxOutputTokensLimit when creating the backend`);
    }
    let json: unknown;
    let retries: number;
    try {
      ({ answer: json, retries } = await this.pool.post(this.#request.path, this.#request.body(tokens, maxOutputTokens, extra)));
    } catch (error) {
      if (error instanceof HttpStatusError) throw new GenerationRefusedError(error, tokens.length, truncated);
      throw error;
    }
    const answer = this.#request.parse(json);
    if (answer.promptTokens !== tokens.length) {
      throw new MeritError(`the server counted ${answer.promptTokens} prompt tokens for the ${tokens.length} token ids sent; it must evaluate the ids as given (no added BOS, no truncation)`);
    }
    if (answer.outputTokens !== answer.output.length || answer.output.length > maxOutputTokens) {
      throw new MeritError(`the server reported ${answer.outputTokens} generated tokens but returned ${answer.output.length} ids (limit ${maxOutputTokens}); is it an engine this kit supports (llama.cpp, vllm)?`);
    }
    return { ...answer, retries };
  }

  /** Closes the tokenizer when this backend owns it (`ownsTokenizer`). */
  async close(): Promise<void> {
    if (this.#ownsTokenizer) await this.#tokenizer.close();
  }
}
