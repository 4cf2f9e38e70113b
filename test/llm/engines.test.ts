import { describe, expect, it } from "vitest";
import { parseConfig } from "../../lib/experiment/config.ts";
import type { InferenceEngine } from "../../lib/llm/engine-request.ts";
import { ENGINES, engineRequest } from "../../lib/llm/engines/index.ts";

const base = { dataset: "spider", data_dir: "data/spider", initial_cache: "runs/initial.jsonl" };
const params = { repetitionPenalty: 1.1, seed: 42, contextSize: 4608, model: "m" };

describe("inference-engine registry", () => {
  it("holds llama.cpp and vllm, and the config accepts exactly its names", () => {
    expect(ENGINES.names()).toEqual(["llama.cpp", "vllm"]);
    expect(engineRequest("llama.cpp", params).path).toBe("/completion");
    expect(engineRequest("vllm", params).path).toBe("/v1/completions");
    expect(parseConfig({ ...base, model: { backend: "openai", engine: "vllm" } }, "c.json").model.engine).toBe("vllm");
    expect(() => parseConfig({ ...base, model: { backend: "openai", engine: "llamacpp" } }, "c.json")).toThrow(
      'c.json: invalid config — model.engine: unknown inference engine "llamacpp". Did you mean "llama.cpp"? Known inference engines: llama.cpp, vllm',
    );
  });

  it("a registered engine is usable from the config and the request builder without other edits", () => {
    const sglang: InferenceEngine = {
      completion: (p) => ({
        path: "/generate",
        fixed: { temperature: 0, seed: p.seed },
        body: (prompt, max) => ({ input_ids: [...prompt], max_new_tokens: max }),
        parse: () => ({ output: [], promptTokens: 0, outputTokens: 0, probs: null }),
      }),
      chatPenalty: (p) => ({ repetition_penalty: p }),
    };
    ENGINES.register("sglang", sglang);
    expect(parseConfig({ ...base, model: { backend: "openai", engine: "sglang" } }, "c.json").model.engine).toBe("sglang");
    const request = engineRequest("sglang", params);
    expect(request.body([1, 2], 8)).toEqual({ input_ids: [1, 2], max_new_tokens: 8 });
    expect(() => engineRequest("sglang", { ...params, repetitionPenalty: 0 })).toThrow(/repetition penalty must be > 0/);
  });
});
