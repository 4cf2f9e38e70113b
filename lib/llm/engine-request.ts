/**
 * Inference engines behind the completions endpoint (METHOD.md §6.4, §11.9; issue 16 §2): the same
 * greedy decoding with the Hugging Face repetition penalty that LlamaBackend runs in process
 * (llama-backend.ts, "Repetition penalty"), spelled as each server's completions endpoint wants it,
 * with the prompt given as token ids. The fixed fields (everything but the prompt and the token
 * budget) are the backend identity's `request`, so a cache key records what was actually sent.
 *
 * An engine is one file of lib/llm/engines/ (llama-cpp.ts, vllm.ts) implementing `InferenceEngine`,
 * and one line of lib/llm/engines/index.ts registering it; config `model.engine` names it.
 * @module
 */
import { z } from "zod";
import type { JsonValue } from "../hash.ts";
import { MeritError } from "../errors.ts";

/** An engine's name as config `model.engine` spells it (a key of the ENGINES registry, engines/index.ts). */
export type Engine = string;

export interface DecodingParams {
  /** HF-semantics repetition penalty; 1 disables. */
  repetitionPenalty: number;
  seed: number;
  /** Prompt budget + largest output budget: the span the penalty looks back over. */
  contextSize: number;
  /** Served model id (vLLM routes by it; llama-server ignores it). */
  model: string;
}

/** One engine's request form. */
export interface EngineRequest {
  path: string;
  /** The fixed body fields (identity). */
  fixed: Record<string, JsonValue>;
  /** The full body for one prompt. */
  body(promptIds: readonly number[], maxOutputTokens: number, extra?: Record<string, JsonValue>): Record<string, JsonValue>;
  /** Generated ids and the server's usage from its answer. @throws MeritError when it is not shaped as expected */
  parse(json: unknown): { output: number[]; promptTokens: number; outputTokens: number; probs: TokenProbs[] | null };
}

/** Top candidates the server saw at one generated position (llama.cpp `n_probs`, pre-sampling log-probs). */
export interface TokenProbs {
  id: number;
  top: Array<{ id: number; logprob: number }>;
}

/** One inference engine: how its completions endpoint and its chat endpoint spell greedy HF-penalty decoding. */
export interface InferenceEngine {
  /** The request form of the completions endpoint for these decoding parameters (penalty already checked > 0). */
  completion(p: DecodingParams): EngineRequest;
  /** The repetition penalty `p` (≠ 1) as a chat-completions request spells it (openai-backend.ts, the chat fallback). */
  chatPenalty(p: number, contextSize: number): Record<string, JsonValue>;
}

export const ids = z.array(z.number().int().nonnegative());
export const count = z.number().int().nonnegative();

/** `json` parsed with `schema`, or a MeritError naming the endpoint, the first mismatch and `fix`. */
export function parsed<T>(schema: z.ZodType<T>, json: unknown, what: string, fix: string): T {
  const result = schema.safeParse(json);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw new MeritError(`${what} answer is not shaped as expected: ${issue.path.join(".") || "(root)"}: ${issue.message}; ${fix}`);
}
