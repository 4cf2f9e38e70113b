/**
 * The llama.cpp backend's identity (METHOD.md §6.4; the call cache's keys, lib/llm/call-cache.ts),
 * in a module of its own so that `merit grid --plan` can compute the cache keys of planned calls
 * without loading node-llama-cpp or the model: the GGUF's file name and SHA-256 and every
 * output-changing parameter. `LlamaBackend` builds its identity here.
 * @module
 */
import { basename } from "node:path";
import type { BackendIdentity } from "./types.ts";

/** What the identity records of a llama.cpp backend. */
export interface LlamaIdentityOptions {
  modelPath: string;
  /** SHA-256 of the GGUF file. */
  modelHash: string;
  maxInputTokens: number;
  truncate: "left" | "error";
  repetitionPenalty: number;
  seed: number;
  /** A custom Jinja template given (else the GGUF's own). */
  customTemplate: boolean;
  mode: "deterministic" | "throughput";
}

/** The identity of a llama.cpp backend with these settings (key order as the cache has always stored it). */
export function llamaIdentity(o: LlamaIdentityOptions): BackendIdentity {
  return {
    kind: "llama.cpp",
    model: basename(o.modelPath),
    modelHash: o.modelHash,
    params: {
      decoding: "greedy",
      chatTemplate: o.customTemplate ? "custom" : "gguf",
      maxInputTokens: o.maxInputTokens,
      truncation: o.truncate,
      repetitionPenalty: o.repetitionPenalty,
      repetitionPenaltyScope: "hf-all-previous-tokens",
      seed: o.seed,
      // Outputs do not depend on the thread count or the number of slots (llama-backend.ts), so
      // neither is part of the identity or of cache keys; flash attention would change them.
      flashAttention: false,
      // Absent in deterministic mode, so caches and run identities made before the mode existed
      // stay valid; throughput mode's outputs can differ at near-ties, so it keys its own calls.
      ...(o.mode === "throughput" ? { mode: "throughput" } : {}),
    },
  };
}
