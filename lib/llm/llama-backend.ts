/**
 * The local generation backend (METHOD.md §6.4–6.5, §11.8–11.9): a GGUF served by node-llama-cpp,
 * prompted through the GGUF's own chat template, left-truncated, greedy, with token counts taken
 * from token ids. N contexts over one loaded model let N `generate()` calls run in parallel.
 *
 * Determinism (greedy outputs identical across runs, processes, CPU thread counts, and sequential
 * vs parallel calls; test/llm/llama-backend.test.ts): two llama.cpp behaviours break it and are
 * avoided here.
 * - Flash attention is off. llama.cpp's CPU flash attention splits the KV cache into one chunk per
 *   thread once it holds ≥ 512 cells and merges the partial results in f16, so logits depend on the
 *   thread count (and on how the prompt is split into batches); at near-tied logits the greedy token
 *   flips. node-llama-cpp's default ("auto") turns it on for CPU. Without it, the top-3
 *   probabilities of the tiny test model were bit-identical for 1 and 2 threads at every step.
 * - Each parallel slot is its own context with one sequence, not one context with N sequences.
 *   With several sequences in one batch, llama.cpp reorders output rows lazily on the first logits
 *   read, and node-llama-cpp samples sequences concurrently on libuv worker threads, so sequences
 *   can read each other's logits (observed: two prompts' first tokens swapped; 154 of 240 outputs
 *   wrong in a 4-sequence stress run). Separate contexts share the loaded weights but never a
 *   batch, which also keeps every call's computation independent of what else runs (batch
 *   invariance), on GPUs too. Cost: one KV cache and compute buffer per slot — the same KV memory
 *   as N sequences, plus N − 1 compute buffers.
 *
 * Repetition penalty — Hugging Face vs node-llama-cpp:
 * - HF `repetition_penalty` (Qwen2.5-7B-Instruct's generation_config: 1.05) rescales, at every step,
 *   the logit of every distinct token id already in `input_ids` — the whole (truncated) prompt plus
 *   everything generated so far — once per token regardless of count: logit / p when positive,
 *   logit · p when negative.
 * - node-llama-cpp's `repeatPenalty` feeds llama.cpp's penalties sampler: `penalty` does the same
 *   rescale (logit ≤ 0 → ·p, else /p; they differ only at logit exactly 0, where both leave 0), but
 *   only over the `punishTokens` it is given, capped to the last `maxPunishTokens` (default 64),
 *   and `LlamaChatSession` by default punishes only recent *generated* tokens. Its extra
 *   `frequencyPenalty` (−n·f for a token seen n times) and `presencePenalty` (−p once) have no HF
 *   counterpart.
 * - Here: punishTokens = the entire context (prompt tokens + generated tokens), maxPunishTokens =
 *   the context size, frequency and presence penalties 0 — the same set and the same rule as HF.
 *   Penalty 1 disables it.
 *
 * Throughput mode (`mode: "throughput"`, lib/llm/batched-decoder.ts): the slots are the N sequences
 * of ONE context and every decoding step evaluates all active sequences in one batch; the decoder
 * drives llama.cpp itself and samples each sequence from its own output row, one read at a time, so
 * the mix-up above cannot occur. Batch composition can change floating-point reduction order, so
 * recomputation is bit-exact only in the default deterministic mode; the mode is part of the
 * identity (cache keys) when it is not the default.
 *
 * KV prefix reuse across calls is deliberately off (every call clears its sequence): reusing a
 * cached prefix would make an output depend on which prompt a sequence served before.
 * @module
 */
import os from "node:os";
import type { LlamaContext, LlamaContextSequence, LlamaModel, Token } from "node-llama-cpp";
import { MeritError } from "../errors.ts";
import { jinjaChatTemplate, modelChatTemplate, type ChatTemplate } from "./chat-template.ts";
import { sha256File } from "../file-hash.ts";
import { BatchedDecoder } from "./batched-decoder.ts";
import { llamaIdentity } from "./llama-identity.ts";
import { chooseThreads, llamaRuntime, type GpuSetting, type ThreadChoice } from "./llama-runtime.ts";
import { loadModelChecked } from "./model-file.ts";
import { SlotPool } from "./slot-pool.ts";
import type { BackendIdentity, ChatBackend, GenerateRequest, GenerateResult, Sampling } from "./types.ts";

export interface LlamaBackendOptions {
  /** Path of the GGUF file. */
  modelPath: string;
  /** @default false (CPU). `"auto"` uses a GPU when node-llama-cpp finds one. */
  gpu?: GpuSetting;
  /** CPU threads per context. @default env MERIT_THREADS, else available cores ÷ contexts (`chooseThreads`) */
  threads?: number;
  /** Parallel slots (concurrent generate() calls): one context each, or the sequences of one context in throughput mode. @default 1 */
  sequences?: number;
  /** `"deterministic"`: one context per slot, bit-exact recomputation; `"throughput"`: one batched context. @default "deterministic" */
  mode?: LlamaMode;
  /** Prints the thread choice (default: one line on stderr); pass `() => {}` to silence it. */
  log?: (line: string) => void;
  /** Prompt tokens kept after left truncation (METHOD.md §6.4). @default 4096 */
  maxInputTokens?: number;
  /** Largest maxOutputTokens a request may ask for; sizes the context. @default 512 */
  maxOutputTokensLimit?: number;
  /** HF-semantics repetition penalty over prompt + generated tokens; 1 disables. @default 1.05 (METHOD.md §11.9) */
  repetitionPenalty?: number;
  /** Sampler seed; irrelevant under greedy decoding but fixed and recorded. @default 42 */
  seed?: number;
  /** `"left"` drops the prompt's beginning (reference behaviour); `"error"` refuses (METHOD.md §11.5). @default "left" */
  truncate?: "left" | "error";
  /** SHA-256 of the model file when already known (e.g. verified by `merit models`); computed otherwise. */
  modelHash?: string;
  /** Jinja template overriding the GGUF's own (for studies of other templates). */
  chatTemplate?: string;
  /**
   * An already loaded model of `modelPath` to share (several backends, one copy of the weights);
   * the caller keeps ownership and `close()` leaves it loaded.
   */
  loadedModel?: LlamaModel;
}

/** How parallel slots decode (README, "Reproducibility, and its known limits"). */
export type LlamaMode = "deterministic" | "throughput";

/** Prompt tokens that exceed maxInputTokens when `truncate: "error"`. */
export class PromptTooLongError extends MeritError {
  readonly promptTokens: number;
  readonly maxInputTokens: number;
  constructor(promptTokens: number, maxInputTokens: number) {
    super(`prompt has ${promptTokens} tokens after chat templating, more than maxInputTokens ${maxInputTokens}; shorten the prompt, raise maxInputTokens, or set truncate: "left"`);
    this.name = "PromptTooLongError";
    this.promptTokens = promptTokens;
    this.maxInputTokens = maxInputTokens;
  }
}

/**
 * Left truncation of templated prompt ids to `maxInputTokens` (METHOD.md §6.4), shared by the
 * in-process backend and the server path's tokenizer. @throws PromptTooLongError under `truncate: "error"`
 */
export function truncatePrompt(all: Token[], maxInputTokens: number, truncate: "left" | "error"): { tokens: Token[]; truncated: number } {
  const truncated = Math.max(0, all.length - maxInputTokens);
  if (truncated > 0 && truncate === "error") throw new PromptTooLongError(all.length, maxInputTokens);
  return { tokens: truncated > 0 ? all.slice(truncated) : all, truncated };
}

/**
 * Text of generated ids (METHOD.md §6.4): special tokens skipped, and a final end-of-generation token
 * never adds text, even when a model's EOS id is an ordinary token.
 */
export function decodeOutput(model: LlamaModel, output: readonly Token[]): string {
  const ended = output.length > 0 && model.isEogToken(output[output.length - 1]);
  return model.detokenize(ended ? output.slice(0, -1) : [...output], false);
}

/** Loads the model and returns a ready backend. @throws ModelFileError when the GGUF cannot be used */
export async function createLlamaBackend(options: LlamaBackendOptions): Promise<LlamaBackend> {
  const llama = await llamaRuntime(options.gpu ?? false);
  const owned = options.loadedModel === undefined;
  const model = options.loadedModel ?? (await loadLlamaModel(options.modelPath, options.gpu));
  try {
    const maxInputTokens = options.maxInputTokens ?? 4096;
    const maxOutputTokensLimit = options.maxOutputTokensLimit ?? 512;
    const slots = options.sequences ?? 1;
    if (!Number.isInteger(slots) || slots < 1) throw new MeritError(`sequences must be a positive integer, got ${slots}`);
    const mode = options.mode ?? "deterministic";
    if (mode !== "deterministic" && mode !== "throughput") throw new MeritError(`mode must be "deterministic" or "throughput", got ${String(mode)}`);
    // Physical cores (llama.cpp's count) when fewer than the logical CPUs this process may use.
    const cores = Math.max(1, Math.min(os.availableParallelism(), llama.cpuMathCores || os.availableParallelism()));
    const choice = chooseThreads(mode === "throughput" ? 1 : slots, options.threads, cores);
    const threads = choice.threads;
    (options.log ?? ((line: string) => process.stderr.write(line + "\n")))(describeThreads(mode, slots, choice));
    const contexts: LlamaContext[] = [];
    try {
      // Throughput mode: one context whose sequences are the slots (batched-decoder.ts).
      for (let i = 0; i < (mode === "throughput" ? 1 : slots); i++) {
        contexts.push(
          await model.createContext({
            contextSize: maxInputTokens + maxOutputTokensLimit,
            sequences: mode === "throughput" ? slots : 1,
            threads,
            flashAttention: false,
            failedCreationRemedy: false,
          }),
        );
      }
      const template = options.chatTemplate === undefined ? await modelChatTemplate(model, options.modelPath) : await jinjaChatTemplate(options.chatTemplate, model);
      const modelHash = options.modelHash ?? (await sha256File(options.modelPath));
      return new LlamaBackend({ ...options, mode, maxInputTokens, maxOutputTokensLimit, model, owned, contexts, template, modelHash, threads });
    } catch (error) {
      for (const context of contexts) await context.dispose();
      throw error;
    }
  } catch (error) {
    if (owned) await model.dispose();
    throw error;
  }
}

/** The one stderr line saying how many threads each context got, and why. */
export function describeThreads(mode: LlamaMode, slots: number, choice: ThreadChoice): string {
  const contexts = mode === "throughput" ? `1 context × ${slots} sequences` : `${slots} context${slots === 1 ? "" : "s"}`;
  const why = choice.source === "cores / contexts" ? `${choice.cores} cores available ÷ ${choice.contexts}` : `set by ${choice.source === "option" ? "threads" : "MERIT_THREADS"}`;
  return `llama.cpp ${mode} mode: ${contexts}, ${choice.threads} thread${choice.threads === 1 ? "" : "s"} per context (${why})`;
}

/** Loads a GGUF on the shared runtime (for `loadedModel`). @throws ModelFileError */
export async function loadLlamaModel(modelPath: string, gpu: GpuSetting = false): Promise<LlamaModel> {
  const llama = await llamaRuntime(gpu);
  return loadModelChecked(llama, modelPath, gpu === false ? { gpuLayers: 0 } : {});
}

interface Resolved extends LlamaBackendOptions {
  mode: LlamaMode;
  maxInputTokens: number;
  maxOutputTokensLimit: number;
  model: LlamaModel;
  owned: boolean;
  contexts: LlamaContext[];
  template: ChatTemplate;
  modelHash: string;
  threads: number;
}

/** A ChatBackend over one loaded GGUF; build it with `createLlamaBackend`. */
export class LlamaBackend implements ChatBackend {
  readonly identity: BackendIdentity;
  /** The loaded model (tokenizer access for callers that count tokens). */
  readonly model: LlamaModel;
  /** Threads each context evaluation uses. */
  readonly threads: number;
  readonly mode: LlamaMode;
  /** Throughput mode's decoder (null in deterministic mode). */
  readonly batched: BatchedDecoder | null;
  readonly #contexts: LlamaContext[];
  readonly #ownsModel: boolean;
  readonly #template: ChatTemplate;
  readonly #pool: SlotPool<LlamaContextSequence>;
  readonly #maxInputTokens: number;
  readonly #maxOutputTokensLimit: number;
  readonly #penalty: number;
  readonly #seed: number;
  readonly #truncate: "left" | "error";

  constructor(r: Resolved) {
    this.model = r.model;
    this.threads = r.threads;
    this.#contexts = r.contexts;
    this.#ownsModel = r.owned;
    this.#template = r.template;
    this.#maxInputTokens = r.maxInputTokens;
    this.#maxOutputTokensLimit = r.maxOutputTokensLimit;
    this.#penalty = r.repetitionPenalty ?? 1.05;
    this.#seed = r.seed ?? 42;
    this.#truncate = r.truncate ?? "left";
    if (!(this.#penalty > 0)) throw new MeritError(`repetitionPenalty must be > 0, got ${this.#penalty}; use 1 to disable it`);
    this.mode = r.mode;
    this.batched = r.mode === "throughput" ? new BatchedDecoder(r.contexts[0], r.model, { repetitionPenalty: this.#penalty, seed: this.#seed }) : null;
    this.#pool = new SlotPool(r.mode === "throughput" ? [] : r.contexts.map((context) => context.getSequence()));
    this.identity = llamaIdentity({
      modelPath: r.modelPath,
      modelHash: r.modelHash,
      maxInputTokens: this.#maxInputTokens,
      truncate: this.#truncate,
      repetitionPenalty: this.#penalty,
      seed: this.#seed,
      customTemplate: r.chatTemplate !== undefined,
      mode: r.mode,
    });
  }

  /** The exact prompt text given to the tokenizer: the chat template applied to one user message. */
  renderPrompt(userMessage: string): string {
    return this.#template.render(userMessage);
  }

  /** Prompt token ids after templating and left truncation, plus how many were dropped. */
  promptTokens(userMessage: string): { tokens: Token[]; truncated: number } {
    return truncatePrompt(this.model.tokenize(this.renderPrompt(userMessage), true), this.#maxInputTokens, this.#truncate);
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const { maxOutputTokens } = request;
    if (!Number.isInteger(maxOutputTokens) || maxOutputTokens < 1 || maxOutputTokens > this.#maxOutputTokensLimit) {
      throw new MeritError(`maxOutputTokens must be an integer in 1..${this.#maxOutputTokensLimit}, got ${maxOutputTokens}; raise maxOutputTokensLimit when creating the backend`);
    }
    const { tokens, truncated } = this.promptTokens(request.prompt);
    let output: Token[];
    if (request.sampling) {
      // A declared sample (a method's call kind with a temperature): one sequence, its own seed.
      if (this.batched) throw new MeritError(`a sampled call (temperature ${request.sampling.temperature}, a method's declared sampling) needs the llama.cpp backend's deterministic mode; set model.mode: "deterministic" in the config (throughput mode decodes greedily only)`);
      const sampling = request.sampling;
      output = await this.#pool.use((sequence) => this.#decode(sequence, tokens, maxOutputTokens, sampling));
    } else output = await this.generateIds(tokens, maxOutputTokens);
    return {
      text: decodeOutput(this.model, output),
      promptTokens: tokens.length,
      outputTokens: output.length,
      truncatedPromptTokens: truncated,
      cached: false,
    };
  }

  /** Prompt and generated token ids of one greedy call, as `generate` computes them (parity checks against servers). */
  async generateRequestIds(request: GenerateRequest): Promise<{ prompt: Token[]; output: Token[] }> {
    const { tokens } = this.promptTokens(request.prompt);
    return { prompt: tokens, output: await this.generateIds(tokens, request.maxOutputTokens) };
  }

  /** Greedy generation from prompt token ids (tests, benchmarks); the ids include the EOG token when one was emitted. */
  generateIds(prompt: Token[], maxOutputTokens: number): Promise<Token[]> {
    return this.batched ? this.batched.generate(prompt, maxOutputTokens) : this.#pool.use((sequence) => this.#decode(sequence, prompt, maxOutputTokens));
  }

  /** Greedy decoding on one sequence (or sampled, given `sampling`); the returned ids include the EOG token when one was emitted. */
  async #decode(sequence: LlamaContextSequence, prompt: Token[], maxOutputTokens: number, sampling?: Sampling): Promise<Token[]> {
    await sequence.clearHistory();
    const history: Token[] = [...prompt];
    const output: Token[] = [];
    const tokens = sequence.evaluate(prompt, {
      temperature: sampling?.temperature ?? 0,
      seed: sampling?.seed ?? this.#seed,
      yieldEogToken: true,
      repeatPenalty:
        this.#penalty === 1
          ? undefined
          : { punishTokens: () => history, maxPunishTokens: sequence.contextSize, penalty: this.#penalty, frequencyPenalty: 0, presencePenalty: 0 },
    });
    for await (const token of tokens) {
      output.push(token);
      history.push(token);
      if (this.model.isEogToken(token) || output.length >= maxOutputTokens) break;
    }
    return output;
  }

  /** Releases the contexts (and the model when this backend loaded it); safe to call twice. */
  async close(): Promise<void> {
    await this.batched?.close();
    for (const context of this.#contexts) if (!context.disposed) await context.dispose();
    if (this.#ownsModel && !this.model.disposed) await this.model.dispose();
  }
}
