/**
 * Experiment runs, the quick demo's config (DESIGN.md §4, README "Set up"): any experiment config
 * turned onto the tiny random test models of test/fixtures/models and the demo's working call
 * cache, as `merit demo` and the notebooks that run streams (06, 08) use it. Numbers produced with
 * these models are meaningless; they exercise the mechanics.
 * @module
 */
import type { ExperimentConfig } from "./config.ts";

/** The quick demo's working call cache (git-ignored); notebooks 06 and 08 use the same file. */
export const TINY_CACHE = "runs/demo/llm-call-cache-tiny.sqlite";
/** The random-weight Qwen2.5-architecture chat model (test/fixtures/models/PROVENANCE.md). */
export const TINY_CHAT = "test/fixtures/models/tiny-random-qwen2.5-instruct.gguf";
/** The random-weight BGE embedder. */
export const TINY_EMBEDDER = "test/fixtures/models/tiny-random-bert-bge.gguf";

/**
 * `config` on the tiny test models and the working replay cache, whatever models/ holds. `threads`
 * pins the CPU threads per context (the notebooks pass 1; outputs do not depend on it).
 */
export function quickConfig(config: ExperimentConfig, threads?: number): ExperimentConfig {
  return {
    ...config,
    call_cache: TINY_CACHE,
    model: { ...config.model, path: TINY_CHAT, gpu: false, ...(threads === undefined ? {} : { threads }) },
    embedder: { ...config.embedder, path: TINY_EMBEDDER },
    // The random model never stops by itself; shorter outputs keep the smoke run inside minutes.
    decoding: { ...config.decoding, max_output_tokens: 64 },
  };
}
