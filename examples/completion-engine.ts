/**
 * Example plugin, the inference-engine seam (issue 21 §1): engine `llama.cpp-oai`, llama-server's
 * OpenAI-style `POST /v1/completions` with token-id prompts, instead of the bundled `llama.cpp`
 * engine's native `/completion`, with nothing in lib/ changed. It proves that an engine is one
 * `registerEngine` call: a request form (path, fixed fields, body) and an answer parser. Its test
 * runs it against a real llama-server and gets the bundled engine's outputs token for token.
 *
 * The request is the bundled engine's decoding, spelled for the OpenAI route (llama-server copies
 * every field it does not know as OpenAI's into its own parameters, server-common.cpp
 * `oaicompat_completion_params_parse`): `max_tokens` for the budget; temperature 0 and the sampler
 * chain cut to penalties → temperature (arg-max); `repeat_penalty` over `repeat_last_n` = the context
 * size (prompt + generated, the HF rule); no prompt cache; the accept-anything `chat_parser`, because
 * the server parses the generated text of every endpoint and would answer HTTP 500 on a token cut
 * mid-character (lib/llm/engines/llama-cpp.ts). The OpenAI answer (`choices[0].text`, `usage`)
 * carries no token ids, and its per-token `logprobs` skip tokens that end inside a UTF-8 character,
 * so the ids come from llama-server's own result, which `return_tokens` fills and the per-request
 * `verbose` flag attaches as `__verbose` (server-schema.cpp: "Include __verbose field in the response
 * with additional debug information"); the usage counts are OpenAI's `usage`.
 *
 * Use: `merit run --plugin examples/completion-engine.ts --config C` with `model: {backend: "openai",
 * engine: "llama.cpp-oai", base_urls: [...]}` (plugins load before the config is parsed).
 * Test: `npx vitest run examples/completion-engine.test.ts` (skips when llama-server is not built:
 * `make llama-server`).
 * @module
 */
import { z } from "zod";
import { getEngine, MeritError, registerEngine, type EngineRequest, type InferenceEngine } from "../lib/plugin.ts";

const ids = z.array(z.number().int().nonnegative());
const count = z.number().int().nonnegative();

const OaiAnswer = z.object({
  choices: z
    .array(
      z.object({
        text: z.string(),
        logprobs: z.object({ content: z.array(z.object({ id: z.number().int(), top_logprobs: z.array(z.object({ id: z.number().int(), logprob: z.number() })) })) }).nullable().optional(),
      }),
    )
    .min(1),
  usage: z.object({ prompt_tokens: count, completion_tokens: count }),
  __verbose: z.object({ tokens: ids, truncated: z.boolean().optional() }),
});

export const llamaCppOai: InferenceEngine = {
  completion(p): EngineRequest {
    // The bundled llama.cpp engine's sampling fields (greedy, HF-scope penalty, the accept-anything
    // chat parser), without its /completion-only response_fields, plus `verbose` for the token ids.
    const { response_fields: _completionOnly, ...sampling } = getEngine("llama.cpp").completion(p).fixed;
    const fixed: EngineRequest["fixed"] = { ...sampling, verbose: true };
    return {
      path: "/v1/completions",
      fixed,
      body: (prompt, maxOutputTokens, extra) => ({ ...fixed, ...extra, prompt: [...prompt], max_tokens: maxOutputTokens }),
      parse(json) {
        const result = OaiAnswer.safeParse(json);
        if (!result.success) {
          const issue = result.error.issues[0];
          throw new MeritError(`llama-server /v1/completions answer is not shaped as expected: ${issue.path.join(".") || "(root)"}: ${issue.message}; the server must be llama.cpp's llama-server, which adds __verbose.tokens for return_tokens + verbose (scripts/build-llama-server.sh builds the matching release)`);
        }
        const a = result.data;
        if (a.__verbose.truncated) throw new MeritError("llama-server truncated the prompt: its context per slot is smaller than max_input_tokens + max_output_tokens; start it with a larger -c (or fewer --parallel slots)");
        const probs = a.choices[0].logprobs?.content.map((c) => ({ id: c.id, top: c.top_logprobs })) ?? null;
        return { output: a.__verbose.tokens, promptTokens: a.usage.prompt_tokens, outputTokens: a.usage.completion_tokens, probs };
      },
    };
  },
  chatPenalty: (p, contextSize) => ({ repeat_penalty: p, repeat_last_n: contextSize, presence_penalty: 0, frequency_penalty: 0 }),
};

registerEngine("llama.cpp-oai", llamaCppOai);
