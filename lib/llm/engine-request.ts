/**
 * Decoding parameters translated per inference engine (METHOD.md §6.4, §11.9; issue 16 §2): the same
 * greedy decoding with the Hugging Face repetition penalty that LlamaBackend runs in process
 * (llama-backend.ts, "Repetition penalty"), spelled as each server's completions endpoint wants it,
 * with the prompt given as token ids. The fixed fields (everything but the prompt and the token
 * budget) are the backend identity's `request`, so a cache key records what was actually sent.
 *
 * - llama.cpp (`llama-server`, tools/server of the bundled release): `POST /completion`. The server
 *   accepts every prompt token into the penalties sampler before generating, so `repeat_last_n` =
 *   the context size punishes prompt + generated tokens; `repeat_penalty` rescales each distinct
 *   token once (HF rule); presence/frequency 0 (no HF counterpart); the sampler chain is cut to
 *   penalties → temperature 0 (arg-max). `return_tokens` asks for the generated ids and
 *   `response_fields` keeps only ids and counts, so the server never returns text (the kit decodes);
 *   `cache_prompt: false` evaluates every prompt afresh, like the in-process backend's cleared
 *   sequence. The server runs its chat-output parser on the generated text of EVERY endpoint
 *   (server-queue.cpp → common_chat_parse) and answers HTTP 500 "does not match the expected
 *   Content-only format" when that text is not valid UTF-8 (a byte-level token cut mid-character,
 *   common with small or random models); `chat_parser` replaces it with a parser that accepts the
 *   empty prefix, so the parse cannot fail — the kit reads only the ids, never the server's text. `tokens_evaluated` / `tokens_predicted` are its usage (EOS counted when emitted).
 * - vLLM: `POST /v1/completions` with `repetition_penalty` (HF semantics already), temperature 0,
 *   `return_token_ids` (vLLM ≥ 0.10.2) for the generated ids; `usage` as OpenAI defines it.
 * @module
 */
import { z } from "zod";
import type { JsonValue } from "../hash.ts";
import { MeritError } from "../errors.ts";

export const ENGINES = ["llama.cpp", "vllm"] as const;
export type Engine = (typeof ENGINES)[number];

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

const ids = z.array(z.number().int().nonnegative());
const count = z.number().int().nonnegative();
const LlamaCppAnswer = z.object({
  tokens: ids,
  tokens_evaluated: count,
  tokens_predicted: count,
  truncated: z.boolean().optional(),
  completion_probabilities: z
    .array(z.object({ id: z.number().int(), top_logprobs: z.array(z.object({ id: z.number().int(), logprob: z.number() })) }))
    .optional(),
});
const VllmAnswer = z.object({
  choices: z.array(z.object({ token_ids: ids.nullable().optional() })).min(1),
  usage: z.object({ prompt_tokens: count, completion_tokens: count }),
});

function parsed<T>(schema: z.ZodType<T>, json: unknown, what: string, fix: string): T {
  const result = schema.safeParse(json);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw new MeritError(`${what} answer is not shaped as expected: ${issue.path.join(".") || "(root)"}: ${issue.message}; ${fix}`);
}

/** A llama.cpp PEG parser arena (common/peg-parser.cpp `from_json`) whose root is epsilon: it always succeeds. */
const ACCEPT_ANYTHING_PARSER = JSON.stringify({ parsers: [{ type: "epsilon" }], rules: {}, root: 0 });

/** The request form of `engine` for these decoding parameters. */
export function engineRequest(engine: Engine, p: DecodingParams): EngineRequest {
  if (!(p.repetitionPenalty > 0)) throw new MeritError(`repetition penalty must be > 0, got ${p.repetitionPenalty}; use 1 to disable it`);
  if (engine === "llama.cpp") {
    const fixed: Record<string, JsonValue> = {
      temperature: 0,
      seed: p.seed,
      repeat_penalty: p.repetitionPenalty,
      repeat_last_n: p.contextSize,
      presence_penalty: 0,
      frequency_penalty: 0,
      samplers: ["penalties", "temperature"],
      cache_prompt: false,
      return_tokens: true,
      stream: false,
      chat_parser: ACCEPT_ANYTHING_PARSER,
      response_fields: ["tokens", "tokens_evaluated", "tokens_predicted", "truncated", "completion_probabilities"],
    };
    return {
      path: "/completion",
      fixed,
      body: (prompt, maxOutputTokens, extra) => ({ ...fixed, ...extra, prompt: [...prompt], n_predict: maxOutputTokens }),
      parse(json) {
        const a = parsed(LlamaCppAnswer, json, "llama-server /completion", "the server must be llama.cpp's llama-server (scripts/build-llama-server.sh builds the matching release)");
        if (a.truncated) throw new MeritError("llama-server truncated the prompt: its context per slot is smaller than max_input_tokens + max_output_tokens; start it with a larger -c (or fewer --parallel slots)");
        const probs = a.completion_probabilities?.map((p) => ({ id: p.id, top: p.top_logprobs })) ?? null;
        return { output: a.tokens, promptTokens: a.tokens_evaluated, outputTokens: a.tokens_predicted, probs };
      },
    };
  }
  const fixed: Record<string, JsonValue> = {
    model: p.model,
    temperature: 0,
    seed: p.seed,
    repetition_penalty: p.repetitionPenalty,
    presence_penalty: 0,
    frequency_penalty: 0,
    return_token_ids: true,
    skip_special_tokens: true,
    stream: false,
  };
  return {
    path: "/v1/completions",
    fixed,
    body: (prompt, maxOutputTokens, extra) => ({ ...fixed, ...extra, prompt: [...prompt], max_tokens: maxOutputTokens }),
    parse(json) {
      const a = parsed(VllmAnswer, json, "vLLM /v1/completions", "the server must be vLLM ≥ 0.10.2 (choices[].token_ids needs return_token_ids)");
      const output = a.choices[0].token_ids;
      if (!output) throw new MeritError("vLLM /v1/completions answered without choices[0].token_ids; upgrade vLLM to ≥ 0.10.2 (return_token_ids) or set model.prompt_format: \"chat\"");
      return { output, promptTokens: a.usage.prompt_tokens, outputTokens: a.usage.completion_tokens, probs: null };
    },
  };
}
