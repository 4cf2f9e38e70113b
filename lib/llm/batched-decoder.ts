/**
 * Batched greedy decoding for the llama.cpp backend's throughput mode (METHOD.md §6.4; README
 * "Reproducibility, and its known limits"): N sequences share ONE llama.cpp context, and every
 * decoding step evaluates the next token of every active sequence — plus chunks of waiting prompts —
 * in a single batch.
 *
 * Why not node-llama-cpp's own multi-sequence path: after a batch, llama.cpp reorders its output
 * rows lazily on the first logits read, and node-llama-cpp samples the sequences of a batch
 * concurrently on libuv worker threads, so sequences could read each other's logits (outputs swapped
 * between prompts; llama-backend.ts, "Determinism"). Here one loop owns the context and drives
 * llama.cpp through node-llama-cpp's native context object directly: build one batch, decode it,
 * then sample each sequence from the output row llama.cpp returned for that sequence's own token,
 * one sampling call at a time, awaited before the next. No two reads of a batch's logits ever
 * overlap and no other code touches this context, so a mix-up cannot happen by construction.
 *
 * Sampling is the deterministic path's: greedy with the HF-semantics repetition penalty over the
 * whole context (prompt + generated tokens), presence and frequency penalties 0.
 *
 * What is NOT guaranteed: bit-identical logits to a sequence decoded alone. How prompts are split
 * into batches and which other sequences share a batch change the floating-point reduction order of
 * some kernels (on GPUs in particular), so at near-tied logits a greedy token can flip. Runs stay
 * replay-exact through the call cache; the mode is part of the backend identity.
 *
 * Relies on node-llama-cpp 3.21.1 internals (`LlamaContext._ctx`, `Llama._bindings.AddonSampler`),
 * pinned exactly in package.json; test/llm/batched-decoder.test.ts fails if they change.
 * @module
 */
import type { LlamaContext, LlamaModel, Token } from "node-llama-cpp";
import { MeritError } from "../errors.ts";

/** The slice of node-llama-cpp's native context this module drives (AddonTypes.d.ts, 3.21.1). */
interface NativeContext {
  initBatch(size: number): void;
  addToBatch(sequenceId: number, firstTokenSequenceIndex: number, tokens: Uint32Array, logitIndexes: Uint32Array): Uint32Array;
  decodeBatch(): Promise<void>;
  sampleToken(batchLogitIndex: number, sampler: NativeSampler): Promise<Token | -1>;
  removeTokenCellsFromSequence(sequenceId: number, startPos: number, endPos: number): boolean;
}
interface NativeSampler {
  applyConfig(config: Record<string, unknown>): void;
  dispose(): void;
}
type SamplerConstructor = new (model: unknown) => NativeSampler;

interface Job {
  prompt: Token[];
  maxOutputTokens: number;
  resolve: (tokens: Token[]) => void;
  reject: (error: unknown) => void;
}

/** A job bound to a sequence of the shared context. */
interface Active extends Job {
  slot: number;
  /** Tokens of the prompt already in the KV cache. */
  evaluated: number;
  /** Prompt + generated tokens: what the repetition penalty sees (HF `input_ids`). */
  history: Token[];
  output: Token[];
}

export interface BatchedDecoderOptions {
  /** HF-semantics repetition penalty; 1 disables. */
  repetitionPenalty: number;
  seed: number;
}

/** Counters for benchmarks (bench/throughput.ts). */
export interface BatchedDecoderStats {
  batches: number;
  promptTokens: number;
  generatedTokens: number;
  /** Wall milliseconds inside llama.cpp's batch decode, and inside the serialised sampling calls. */
  decodeMs: number;
  sampleMs: number;
}

/**
 * Runs greedy generations on the sequences of one context, all active ones batched per step.
 * The context must have been created for this decoder only (`sequences` = slots).
 */
export class BatchedDecoder {
  readonly stats: BatchedDecoderStats = { batches: 0, promptTokens: 0, generatedTokens: 0, decodeMs: 0, sampleMs: 0 };
  readonly #model: LlamaModel;
  readonly #ctx: NativeContext;
  readonly #batchSize: number;
  readonly #contextSize: number;
  readonly #samplers: NativeSampler[];
  readonly #free: number[];
  readonly #waiting: Job[] = [];
  readonly #active: Active[] = [];
  readonly #penalty: number;
  readonly #seed: number;
  #loop: Promise<void> | null = null;
  #closed = false;

  constructor(context: LlamaContext, model: LlamaModel, options: BatchedDecoderOptions) {
    const ctx = (context as unknown as { _ctx?: NativeContext })._ctx;
    const Sampler = (model as unknown as { _llama?: { _bindings?: { AddonSampler?: SamplerConstructor } } })._llama?._bindings?.AddonSampler;
    const nativeModel = (model as unknown as { _model?: unknown })._model;
    if (!ctx || typeof ctx.decodeBatch !== "function" || typeof ctx.sampleToken !== "function" || !Sampler || !nativeModel) {
      throw new MeritError("throughput mode needs node-llama-cpp 3.21.1's native context API, which this installation lacks; reinstall with npm ci or set model.mode to \"deterministic\"");
    }
    this.#model = model;
    this.#ctx = ctx;
    this.#batchSize = context.batchSize;
    this.#contextSize = context.contextSize;
    this.#samplers = Array.from({ length: context.totalSequences }, () => new Sampler(nativeModel));
    this.#free = this.#samplers.map((_, i) => i).reverse();
    this.#penalty = options.repetitionPenalty;
    this.#seed = options.seed;
  }

  /** Greedy generation of up to `maxOutputTokens` after `prompt`; the ids include the EOG token when one was emitted. */
  generate(prompt: Token[], maxOutputTokens: number): Promise<Token[]> {
    if (this.#closed) return Promise.reject(new MeritError("the batched decoder is closed"));
    if (prompt.length === 0) return Promise.reject(new MeritError("cannot decode an empty prompt"));
    if (prompt.length + maxOutputTokens > this.#contextSize) {
      return Promise.reject(new MeritError(`prompt (${prompt.length}) + maxOutputTokens (${maxOutputTokens}) exceed the sequence's context size ${this.#contextSize}`));
    }
    return new Promise<Token[]>((resolve, reject) => {
      this.#waiting.push({ prompt, maxOutputTokens, resolve, reject });
      this.#loop ??= this.#run().finally(() => (this.#loop = null));
    });
  }

  /** The one loop that owns the context: runs until no job is waiting or active. */
  async #run(): Promise<void> {
    try {
      while (!this.#closed && (this.#waiting.length > 0 || this.#active.length > 0)) {
        this.#admit();
        try {
          await this.#step();
        } catch (error) {
          // A failed decode (e.g. no KV cells) fails every job in flight; the loop goes on with the next.
          for (const job of this.#active.splice(0)) this.#release(job, error);
        }
      }
    } finally {
      for (const job of this.#waiting.splice(0)) job.reject(new MeritError("the batched decoder is closed"));
    }
  }

  /** Binds waiting jobs (FIFO) to free sequences. */
  #admit(): void {
    while (this.#free.length > 0 && this.#waiting.length > 0) {
      const job = this.#waiting.shift()!;
      this.#active.push({ ...job, slot: this.#free.pop()!, evaluated: 0, history: [...job.prompt], output: [] });
    }
  }

  /**
   * One batch: the last generated token of every generating sequence first (one each), then prompt
   * tokens of sequences still reading their prompt, in admission order, up to the batch size.
   * Sequences whose prompt does not fit wait for the next step.
   */
  async #step(): Promise<void> {
    const chunks: Array<{ job: Active; start: number; tokens: Token[]; wantsLogits: boolean }> = [];
    let room = this.#batchSize;
    for (const job of this.#active) {
      if (job.evaluated < job.prompt.length || room === 0) continue;
      chunks.push({ job, start: job.history.length - 1, tokens: [job.history[job.history.length - 1]], wantsLogits: true });
      room--;
    }
    for (const job of this.#active) {
      if (job.evaluated >= job.prompt.length || room === 0) continue;
      const take = Math.min(room, job.prompt.length - job.evaluated);
      const tokens = job.prompt.slice(job.evaluated, job.evaluated + take);
      chunks.push({ job, start: job.evaluated, tokens, wantsLogits: job.evaluated + take === job.prompt.length });
      room -= take;
    }
    const size = this.#batchSize - room;
    this.#ctx.initBatch(size);
    const rows: Array<{ job: Active; row: number }> = [];
    for (const part of chunks) {
      const logitIndexes = part.wantsLogits ? Uint32Array.of(part.tokens.length - 1) : new Uint32Array(0);
      const batchRows = this.#ctx.addToBatch(part.job.slot, part.start, Uint32Array.from(part.tokens), logitIndexes);
      if (part.wantsLogits) rows.push({ job: part.job, row: batchRows[0] });
      if (part.job.evaluated < part.job.prompt.length) {
        part.job.evaluated += part.tokens.length;
        this.stats.promptTokens += part.tokens.length;
      }
    }
    const decodeStart = performance.now();
    await this.#ctx.decodeBatch();
    const sampleStart = performance.now();
    this.stats.decodeMs += sampleStart - decodeStart;
    this.stats.batches++;
    // Serialised sampling: each read of the batch's logits finishes before the next starts.
    for (const { job, row } of rows) {
      const sampler = this.#samplers[job.slot];
      sampler.applyConfig(this.#samplerConfig(job.history));
      const token = await this.#ctx.sampleToken(row, sampler);
      if (token === -1) throw new MeritError("llama.cpp failed to sample a token");
      job.output.push(token);
      job.history.push(token);
      this.stats.generatedTokens++;
      if (this.#model.isEogToken(token) || job.output.length >= job.maxOutputTokens) {
        this.#active.splice(this.#active.indexOf(job), 1);
        this.#release(job);
      }
    }
    this.stats.sampleMs += performance.now() - sampleStart;
  }

  /**
   * The sampler settings node-llama-cpp's `LlamaContextSequence.evaluate` resolves for the
   * deterministic path's options (temperature 0 ⇒ greedy; penalties over the whole history).
   */
  #samplerConfig(history: Token[]): Record<string, unknown> {
    const config: Record<string, unknown> = { temperature: 0, minP: 0, topK: 40, topP: 0.95, seed: this.#seed, repeatPenaltyMaxTokens: 64 };
    if (this.#penalty !== 1) {
      Object.assign(config, {
        repeatPenalty: this.#penalty,
        repeatPenaltyMaxTokens: Math.max(this.#contextSize, history.length),
        repeatPenaltyTokens: Uint32Array.from(history),
        repeatPenaltyPresencePenalty: 0,
        repeatPenaltyFrequencyPenalty: 0,
      });
    }
    return config;
  }

  /** Clears the job's KV cells, frees its sequence and settles its promise. */
  #release(job: Active, error?: unknown): void {
    const cleared = this.#ctx.removeTokenCellsFromSequence(job.slot, 0, job.history.length + 1);
    if (cleared) this.#free.push(job.slot);
    if (error !== undefined) job.reject(error);
    else if (!cleared) job.reject(new MeritError(`llama.cpp could not clear sequence ${job.slot}`));
    else job.resolve(job.output);
  }

  /** Rejects waiting jobs, lets the step in flight finish, and frees the samplers; the caller disposes the context. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const job of this.#waiting.splice(0)) job.reject(new MeritError("the batched decoder is closed"));
    await this.#loop;
    for (const job of this.#active.splice(0)) job.reject(new MeritError("the batched decoder is closed"));
    for (const sampler of this.#samplers) sampler.dispose();
  }
}
