/**
 * Inference engine `vllm` (engine-request.ts): `POST /v1/completions` with `repetition_penalty` (HF
 * semantics already), temperature 0, `return_token_ids` (vLLM ≥ 0.10.2) for the generated ids;
 * `usage` as OpenAI defines it. Not run here (no vLLM on a CPU machine): the request and answer
 * shapes are unit-tested (test/llm/server-refusal.test.ts).
 * @module
 */
import { z } from "zod";
import { MeritError } from "../../errors.ts";
import type { JsonValue } from "../../hash.ts";
import { count, ids, parsed, type InferenceEngine } from "../engine-request.ts";

const VllmAnswer = z.object({
  choices: z.array(z.object({ token_ids: ids.nullable().optional() })).min(1),
  usage: z.object({ prompt_tokens: count, completion_tokens: count }),
});

export const vllm: InferenceEngine = {
  completion(p) {
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
  },
  chatPenalty: (p) => ({ repetition_penalty: p }),
};
