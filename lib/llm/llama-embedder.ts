/**
 * The local dense embedder (METHOD.md §5.3, §4.6): a BGE-style GGUF under a node-llama-cpp embedding
 * context. Vectors come back un-normalised from llama.cpp and are L2-normalised here; inputs longer
 * than the model's context are cut at the END (sentence-transformers' right truncation, max 512
 * positions for bge incl. [CLS]/[SEP]) and counted; results are cached in memory by text hash.
 * @module
 */
import { basename } from "node:path";
import type { LlamaEmbeddingContext, LlamaModel, Token } from "node-llama-cpp";
import { sha256Hex } from "../hash.ts";
import { MeritError } from "../errors.ts";
import { sha256File } from "../file-hash.ts";
import { llamaRuntime, resolveThreads, type GpuSetting } from "./llama-runtime.ts";
import { inspectModelFile, loadModelChecked, ModelFileError } from "./model-file.ts";
import { l2Normalize } from "../vector.ts";
import type { BackendIdentity, Embedder } from "./types.ts";

export interface LlamaEmbedderOptions {
  modelPath: string;
  /** @default false (CPU) */
  gpu?: GpuSetting;
  /** @default env MERIT_THREADS, else physical cores */
  threads?: number;
  /** Token positions per input incl. special tokens. @default the model's training context (512 for bge) */
  maxTokens?: number;
  /** Texts embedded per batch before yielding to the event loop. @default 32 */
  batchSize?: number;
  /** SHA-256 of the model file when known; computed otherwise. */
  modelHash?: string;
}

/** Counters since creation: texts embedded by the model, served from the cache, and truncated. */
export interface EmbedderStats {
  computed: number;
  cacheHits: number;
  truncatedInputs: number;
  truncatedTokens: number;
}

/**
 * The identity and vector length an embedder over `options.modelPath` will report, read from the
 * GGUF header and the file's sha256 without loading the model (`{arch}.context_length` is the
 * training context llama.cpp reports, `{arch}.embedding_length` the vector size): what the
 * embedding cache keys vectors by, so a run whose vectors are all cached never loads the model.
 * The cache checks the loaded embedder against it. @throws ModelFileError
 */
export async function readLlamaEmbedderIdentity(options: Pick<LlamaEmbedderOptions, "modelPath" | "maxTokens" | "modelHash">): Promise<{ identity: BackendIdentity; dimension: number }> {
  await inspectModelFile(options.modelPath); // a missing, truncated or non-GGUF file gets its own message
  const { readGgufFileInfo } = await import("node-llama-cpp"); // on first use (start-up, issue 22 §2)
  const info = await readGgufFileInfo(options.modelPath, { sourceType: "filesystem", logWarnings: false, spliceSplitFiles: false });
  const trained = info.architectureMetadata?.context_length;
  const dimension = info.architectureMetadata?.embedding_length;
  if (typeof trained !== "number" || !(trained > 0) || typeof dimension !== "number" || !(dimension > 0)) {
    throw new ModelFileError(options.modelPath, "load-failed", "the GGUF header states no context_length or embedding_length; use an embedding model such as bge-large-en-v1.5 (models/README.md)");
  }
  const maxTokens = Math.min(options.maxTokens ?? trained, trained);
  const modelHash = options.modelHash ?? (await sha256File(options.modelPath));
  return { identity: embedderIdentity(options.modelPath, modelHash, maxTokens), dimension };
}

function embedderIdentity(modelPath: string, modelHash: string, maxTokens: number): BackendIdentity {
  return { kind: "llama.cpp-embedding", model: basename(modelPath), modelHash, params: { maxTokens, truncation: "right", normalize: "l2" } };
}

/** Loads the model and returns a ready embedder. @throws ModelFileError */
export async function createLlamaEmbedder(options: LlamaEmbedderOptions): Promise<LlamaEmbedder> {
  const gpu = options.gpu ?? false;
  const llama = await llamaRuntime(gpu);
  const threads = resolveThreads(llama, options.threads);
  // Flash attention off, as for generation (llama-backend.ts, "Determinism"), so no thread- or
  // batch-dependent attention kernel is involved (the tiny test BGE's vectors were thread-invariant
  // either way; the tests compare 1 and 2 threads). The embedding context takes the model's default.
  const model = await loadModelChecked(llama, options.modelPath, { ...(gpu === false ? { gpuLayers: 0 } : {}), defaultContextFlashAttention: false });
  try {
    const trained = model.trainContextSize;
    const maxTokens = Math.min(options.maxTokens ?? trained, trained);
    // getEmbeddingFor refuses inputs of length ≥ contextSize, hence one spare position.
    const context = await model.createEmbeddingContext({ contextSize: maxTokens + 1, threads });
    const modelHash = options.modelHash ?? (await sha256File(options.modelPath));
    return new LlamaEmbedder(options, model, context, maxTokens, modelHash);
  } catch (error) {
    await model.dispose();
    throw error;
  }
}

/** An Embedder over one embedding GGUF; build it with `createLlamaEmbedder`. */
export class LlamaEmbedder implements Embedder {
  readonly identity: BackendIdentity;
  readonly dimension: number;
  readonly #model: LlamaModel;
  readonly #context: LlamaEmbeddingContext;
  readonly #maxTokens: number;
  readonly #batchSize: number;
  readonly #cache = new Map<string, Float32Array>();
  readonly #stats: EmbedderStats = { computed: 0, cacheHits: 0, truncatedInputs: 0, truncatedTokens: 0 };

  constructor(options: LlamaEmbedderOptions, model: LlamaModel, context: LlamaEmbeddingContext, maxTokens: number, modelHash: string) {
    this.#model = model;
    this.#context = context;
    this.#maxTokens = maxTokens;
    this.#batchSize = options.batchSize ?? 32;
    const dimension = model.embeddingVectorSize;
    if (!dimension) throw new MeritError(`${options.modelPath}: the GGUF reports no embedding size; use an embedding model such as bge-large-en-v1.5 (models/README.md)`);
    this.dimension = dimension;
    this.identity = embedderIdentity(options.modelPath, modelHash, maxTokens);
  }

  /** Counters since creation (a copy). */
  stats(): EmbedderStats {
    return { ...this.#stats };
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += this.#batchSize) {
      for (const text of texts.slice(start, start + this.#batchSize)) out.push(await this.#embedOne(text));
      await new Promise((resolve) => setImmediate(resolve));
    }
    return out;
  }

  async #embedOne(text: string): Promise<Float32Array> {
    const key = sha256Hex(text);
    const hit = this.#cache.get(key);
    if (hit) {
      this.#stats.cacheHits++;
      return hit.slice();
    }
    const tokens = this.#truncate(this.#model.tokenize(text, false));
    // node-llama-cpp returns an empty vector for zero tokens; HF embeds "[CLS] [SEP]" for "".
    const input = tokens.length > 0 ? tokens : [this.#model.tokens.bos, this.#model.tokens.sep].filter((t): t is Token => t !== null);
    const { vector } = await this.#context.getEmbeddingFor(input);
    const normalised = l2Normalize(vector, text);
    this.#cache.set(key, normalised);
    this.#stats.computed++;
    return normalised.slice();
  }

  /** Keeps the first tokens so that [CLS] + tokens + [SEP] fits in maxTokens positions. */
  #truncate(tokens: Token[]): Token[] {
    const specials = this.#context.calculateInputLength([]);
    const room = this.#maxTokens - specials;
    if (tokens.length <= room) return tokens;
    this.#stats.truncatedInputs++;
    this.#stats.truncatedTokens += tokens.length - room;
    return tokens.slice(0, room);
  }

  /** The text tokens `text` is embedded with (after right truncation; special tokens not counted). */
  tokenCount(text: string): number {
    return Math.min(this.#model.tokenize(text, false).length, this.#maxTokens - this.#context.calculateInputLength([]));
  }

  /** Embedder.tokenCounts: tokenCount per text (equal to loadEmbeddingTokenCounter's counts). */
  async tokenCounts(texts: readonly string[]): Promise<number[]> {
    return texts.map((text) => this.tokenCount(text));
  }

  /** Releases the context and the model; safe to call twice. */
  async close(): Promise<void> {
    if (!this.#context.disposed) await this.#context.dispose();
    if (!this.#model.disposed) await this.#model.dispose();
  }
}

/** Counts the tokens an embedder embeds each text with: what the runs bill as embedding tokens. */
export interface EmbeddingTokenCounter {
  /** Text tokens per text, after the embedder's truncation (special tokens such as [CLS]/[SEP] not counted). */
  count(texts: readonly string[]): number[];
  close(): Promise<void>;
}

/**
 * The embedding-token counter of a llama.cpp embedder (METHOD.md §12.1, "Cost"): the GGUF's
 * vocabulary only (no weights, so it costs no embedding), tokenising as LlamaEmbedder does — the
 * text's tokens without special tokens, cut to the positions left beside them in `maxTokens` (the
 * identity's; the model's training context by default). Equal to `LlamaEmbedder.tokenCount` (a test
 * pins it), so a run counts the same tokens whether its vectors came from the model or the cache.
 */
export async function loadEmbeddingTokenCounter(options: Pick<LlamaEmbedderOptions, "modelPath" | "maxTokens">): Promise<EmbeddingTokenCounter> {
  // the identity's maxTokens (the GGUF header's training context, or less): a vocabulary-only model knows no context
  const { identity } = await readLlamaEmbedderIdentity({ modelPath: options.modelPath, maxTokens: options.maxTokens, modelHash: "-" });
  const maxTokens = identity.params.maxTokens as number;
  const llama = await llamaRuntime(false);
  const model = await loadModelChecked(llama, options.modelPath, { vocabOnly: true, gpuLayers: 0 });
  // the positions the embedding context adds around the text: a BOS ([CLS]) and a SEP/EOS ([SEP]) when the vocabulary has them
  const specials = (model.tokens.bos !== null ? 1 : 0) + (model.tokens.sep !== null || model.tokens.eos !== null ? 1 : 0);
  const room = Math.max(0, maxTokens - specials);
  return {
    count: (texts) => texts.map((text) => Math.min(model.tokenize(text, false).length, room)),
    close: async () => {
      if (!model.disposed) await model.dispose();
    },
  };
}
