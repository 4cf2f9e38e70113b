/**
 * The two model seams (DESIGN.md §1): a chat backend that answers one user message greedily, and an
 * embedder that turns texts into L2-normalised vectors. Implementations live beside this file; the
 * call cache and tests wrap or replace them without touching callers (STYLE.md §2.2, §2.6).
 * @module
 */

/** What identifies a backend for cache keys and manifests (STYLE.md §2.7–2.8). */
export interface BackendIdentity {
  /** `llama.cpp`, `openai-compatible`, or a test double's name. */
  kind: string;
  /** Model name (file name or served model id). */
  model: string;
  /** SHA-256 of the model file, or endpoint + revision for remote models. */
  modelHash: string;
  /** Every parameter that changes outputs (decoding, penalties, context size, seed). */
  params: Record<string, string | number | boolean | null>;
}

export interface GenerateRequest {
  /** The single user message (rendered prompt text, before chat templating). */
  prompt: string;
  /** Maximum generated tokens (METHOD.md §6.4: 512). */
  maxOutputTokens: number;
  /**
   * Absent (every kit call): greedy decoding, as METHOD.md §6.4 fixes it. Present: one sampled
   * generation at this temperature with this seed (a method's call kind that declares `temperature`,
   * lib/methods/hooks.ts), part of the call cache key, so a replay answers the same sample.
   */
  sampling?: Sampling;
}

/** A sampled generation's decoding: the same (prompt, temperature, seed) gives the same text on one backend. */
export interface Sampling {
  /** > 0 and at most {@link MAX_SAMPLING_TEMPERATURE}. */
  temperature: number;
  /** A non-negative 31-bit integer. */
  seed: number;
}

/** The highest sampling temperature a call may ask for. */
export const MAX_SAMPLING_TEMPERATURE = 2;

export interface GenerateResult {
  text: string;
  /** Prompt tokens after chat templating and left truncation, counted from token ids. */
  promptTokens: number;
  /** Generated token ids, including EOS when emitted. */
  outputTokens: number;
  /** Tokens dropped from the start of an over-long prompt (0 when none). */
  truncatedPromptTokens: number;
  /** true when served from the call cache (no model computation). */
  cached: boolean;
  /**
   * Transient server failures retried before this answer (remote backends; absent when none). An
   * execution fact for the run's manifest (`transport`), never cached, hashed or part of an output.
   */
  retries?: number;
}

export interface ChatBackend {
  readonly identity: BackendIdentity;
  /** One generation for one user message: greedy, or sampled where the request says (`sampling`). */
  generate(request: GenerateRequest): Promise<GenerateResult>;
  /** Releases models, contexts and connections. */
  close(): Promise<void>;
}

export interface Embedder {
  readonly identity: BackendIdentity;
  /** Vector length. */
  readonly dimension: number;
  /** One L2-normalised vector per text, in input order. */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
  /**
   * The tokens each text is embedded with (METHOD.md §12.1, "Cost": embedding tokens), the same whether its
   * vector is computed or cached; null, or no method, when this embedder cannot count them.
   */
  tokenCounts?(texts: readonly string[]): Promise<number[] | null>;
  close(): Promise<void>;
}
