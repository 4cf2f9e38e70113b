/**
 * Inference engine `llama.cpp` (`llama-server`, tools/server of the bundled release; engine-request.ts):
 * `POST /completion`. The server accepts every prompt token into the penalties sampler before
 * generating, so `repeat_last_n` = the context size punishes prompt + generated tokens;
 * `repeat_penalty` rescales each distinct token once (HF rule); presence/frequency 0 (no HF
 * counterpart); the sampler chain is cut to penalties → temperature 0 (arg-max). `return_tokens` asks
 * for the generated ids and `response_fields` keeps only ids and counts, so the server never returns
 * text (the kit decodes); `cache_prompt: false` evaluates every prompt afresh, like the in-process
 * backend's cleared sequence. The server runs its chat-output parser on the generated text of EVERY
 * endpoint (server-queue.cpp → common_chat_parse) and answers HTTP 500 "does not match the expected
 * Content-only format" when that text is not valid UTF-8 (a byte-level token cut mid-character,
 * common with small or random models); `chat_parser` replaces it with a parser that accepts the
 * empty prefix, so the parse cannot fail — the kit reads only the ids, never the server's text.
 * `tokens_evaluated` / `tokens_predicted` are its usage (EOS counted when emitted).
 * @module
 */
import { z } from "zod";
import { MeritError } from "../../errors.ts";
import type { JsonValue } from "../../hash.ts";
import { count, ids, parsed, type InferenceEngine } from "../engine-request.ts";

const LlamaCppAnswer = z.object({
  tokens: ids,
  tokens_evaluated: count,
  tokens_predicted: count,
  truncated: z.boolean().optional(),
  completion_probabilities: z
    .array(z.object({ id: z.number().int(), top_logprobs: z.array(z.object({ id: z.number().int(), logprob: z.number() })) }))
    .optional(),
});

/** A llama.cpp PEG parser arena (common/peg-parser.cpp `from_json`) whose root is epsilon: it always succeeds. */
const ACCEPT_ANYTHING_PARSER = JSON.stringify({ parsers: [{ type: "epsilon" }], rules: {}, root: 0 });

export const llamaCpp: InferenceEngine = {
  completion(p) {
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
  },
  chatPenalty: (p, contextSize) => ({ repeat_penalty: p, repeat_last_n: contextSize, presence_penalty: 0, frequency_penalty: 0 }),
};
