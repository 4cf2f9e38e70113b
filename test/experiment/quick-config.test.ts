// Tests lib/experiment/quick-config.ts: the quick demo's config keeps everything but the models, the call cache and the output cap; threads only when asked.
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../lib/experiment/config.ts";
import { quickConfig, TINY_CACHE, TINY_CHAT, TINY_EMBEDDER } from "../../lib/experiment/quick-config.ts";

describe("quickConfig", () => {
  const base = loadConfig("configs/demo.json");
  it("swaps in the tiny models, the working cache and 64 output tokens", () => {
    const quick = quickConfig(base);
    expect(quick).toEqual({
      ...base,
      call_cache: TINY_CACHE,
      model: { ...base.model, path: TINY_CHAT, gpu: false },
      embedder: { ...base.embedder, path: TINY_EMBEDDER },
      decoding: { ...base.decoding, max_output_tokens: 64 },
    });
    expect(quick.model.threads).toBe(base.model.threads);
  });
  it("pins the thread count when given (the notebooks pass 1)", () => {
    expect(quickConfig(base, 1).model.threads).toBe(1);
    expect(base.model.threads).not.toBe(1);
  });
});
