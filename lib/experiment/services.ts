/**
 * Experiment runs, the services a config asks for (METHOD.md §6.4, §5.3; DESIGN.md §1): the chat
 * backend (llama.cpp GGUF or OpenAI-compatible servers) behind the content-addressed call cache, the
 * embedder for memory methods behind the embedding cache (same file, lib/llm/embedding-cache.ts),
 * the oracle and a retriever factory. Built once and shared by every stream of a grid; `close()`
 * releases them. Nothing of the embedder is touched until a memory method asks for it; then only
 * the GGUF header and the file's sha256 are read, and the model itself loads on the first text the
 * cache does not hold, so a replayed or resumed run whose vectors are stored never loads it.
 * @module
 */
import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import type { Dataset } from "../data/types.ts";
import { MeritError } from "../errors.ts";
import { CallCache } from "../llm/call-cache.ts";
import { createLlamaBackend } from "../llm/llama-backend.ts";
import { EmbeddingCache, type EmbeddingCacheSource, type EmbeddingCacheStats } from "../llm/embedding-cache.ts";
import { createLlamaEmbedder, loadEmbeddingTokenCounter, readLlamaEmbedderIdentity, type EmbeddingTokenCounter } from "../llm/llama-embedder.ts";
import { CompletionsBackend } from "../llm/completions-backend.ts";
import { createOpenAIEmbedder, OpenAIChatBackend } from "../llm/openai-backend.ts";
import { loadPromptTokenizer } from "../llm/prompt-tokenizer.ts";
import { SimulatedBackend, SimulatedEmbedder } from "../llm/engines/simulated.ts";
import { DEFAULT_SIMULATION_FILE, loadSimulatedParams } from "../llm/engines/simulated-params.ts";
import { readFileSync } from "node:fs";
import type { ChatBackend, Embedder } from "../llm/types.ts";
import { Oracle } from "../oracle/oracle.ts";
import { createRetriever, type Retriever } from "../retrieval/retriever.ts";
import { executorOf, type ExperimentConfig } from "./config.ts";

/** One SQL worker per core, at most 16 (a test-suite layout scores each prediction on every variant: the work scales with the cores). */
export function defaultJobs(): number {
  return Math.max(1, Math.min(16, availableParallelism()));
}

export interface Services {
  /** The cached chat backend every run uses. */
  backend: CallCache;
  /** The uncached backend (for identity and manifests). */
  inner: ChatBackend;
  /**
   * The embedding cache over the config's embedder, built on the first call (a memory method): it
   * reads the embedder's identity, and loads the model only for a text not in the cache.
   */
  embedder(): Promise<EmbeddingCache>;
  /** The embedding cache's counters; null when no run asked for the embedder. */
  embeddingStats(): EmbeddingCacheStats | null;
  oracle: Oracle;
  /** A fresh retriever (one per run: it caches per-memory indexes). */
  retriever(): Retriever;
  close(): Promise<void>;
}

export interface ServiceOverrides {
  /** Replace the chat backend (tests, notebooks); the call cache still wraps it. */
  backend?: ChatBackend;
  /** Replace the embedder (tests); the embedding cache still wraps it. */
  embedder?: Embedder;
  /** SQL worker processes of the oracle. */
  jobs?: number;
  /** The largest output limit a call may ask for (a method's declared call kinds); default and floor: decoding.max_output_tokens. */
  maxOutputTokens?: number;
}

/** Builds the services of `config` for `dataset`. */
export async function createServices(config: ExperimentConfig, dataset: Dataset, overrides: ServiceOverrides = {}): Promise<Services> {
  const inner = overrides.backend ?? (config.model.backend === "simulated" ? simulatedBackendOf(config, dataset) : await chatBackendOf(config, Math.max(config.decoding.max_output_tokens, overrides.maxOutputTokens ?? 0)));
  const backend = new CallCache(inner, config.call_cache);
  const oracle = new Oracle({
    dataset: config.dataset,
    databases: dataset.databases,
    protocol: config.protocol,
    timeoutMs: config.sql_timeout_s * 1000,
    jobs: overrides.jobs ?? 2,
    engine: executorOf(config),
  });
  let embedding: Promise<{ cache: EmbeddingCache; source: OwnedSource }> | null = null;
  let embeddingCache: EmbeddingCache | null = null;
  const embedderCache = () =>
    (embedding ??= (async () => {
      const source: OwnedSource = overrides.embedder ? fixedSource(overrides.embedder, false) : await embeddingSourceOf(config);
      embeddingCache = new EmbeddingCache(source, config.call_cache);
      return { cache: embeddingCache, source };
    })());
  return {
    backend,
    inner,
    embedder: async () => (await embedderCache()).cache,
    embeddingStats: () => embeddingCache?.stats() ?? null,
    oracle,
    retriever: () => createRetriever({ exactPoolLimit: config.retrieval.exact_pool_limit, randomSeed: config.random_seed }),
    async close() {
      await oracle.close();
      await backend.close();
      const built = embedding === null ? null : await embedding.catch(() => null);
      if (built !== null) {
        await built.cache.close();
        await built.source.release(built.cache);
      }
      if (!overrides.backend) await inner.close();
    },
  };
}

/** An embedding-cache source and how to release what it loaded. */
interface OwnedSource extends EmbeddingCacheSource {
  release(cache: EmbeddingCache): Promise<void>;
}

/** A source over an embedder that already exists (a remote one, or a test's); closed when `owned`. */
function fixedSource(embedder: Embedder, owned: boolean): OwnedSource {
  const source: OwnedSource = { identity: embedder.identity, dimension: embedder.dimension, load: async () => embedder, release: async () => (owned ? embedder.close() : undefined) };
  if (embedder.tokenCounts) source.tokenCounts = (texts) => embedder.tokenCounts!(texts);
  return source;
}

/** tokenCounts of a GGUF's embedding-token counter, loaded on the first call; `close` releases it. */
function lazyCounter(modelPath: string, maxTokens?: number): { tokenCounts(texts: readonly string[]): Promise<number[]>; close(): Promise<void> } {
  let counter: Promise<EmbeddingTokenCounter> | null = null;
  return {
    tokenCounts: async (texts) => (await (counter ??= loadEmbeddingTokenCounter({ modelPath, maxTokens }))).count(texts),
    close: async () => {
      const loaded = counter === null ? null : await counter.catch(() => null);
      await loaded?.close();
    },
  };
}

async function embeddingSourceOf(config: ExperimentConfig): Promise<OwnedSource> {
  const e = config.embedder;
  if (e.backend === "simulated") return fixedSource(new SimulatedEmbedder(), true);
  // A remote embedder has no model to load here: it is created at once (one request probes its vector length).
  // Its embedding tokens are counted with embedder.path's vocabulary when that GGUF (the served model's) is here.
  if (e.backend === "openai") {
    const source = fixedSource(await createOpenAIEmbedder({ baseUrls: e.base_urls, model: e.model_name }), true);
    if (!existsSync(e.path)) return source;
    const counter = lazyCounter(e.path);
    return { ...source, tokenCounts: counter.tokenCounts, release: async (cache) => (await source.release(cache), await counter.close()) };
  }
  const { identity, dimension } = await readLlamaEmbedderIdentity({ modelPath: e.path });
  const counter = lazyCounter(e.path, identity.params.maxTokens as number);
  return {
    identity,
    dimension,
    tokenCounts: counter.tokenCounts,
    load: () => createLlamaEmbedder({ modelPath: e.path, gpu: config.model.gpu, threads: config.model.threads ?? undefined, modelHash: identity.modelHash }),
    async release(cache) {
      const loaded = cache.loadedEmbedder();
      const embedder = loaded === null ? null : await loaded.catch(() => null);
      await embedder?.close();
      await counter.close();
    },
  };
}

/**
 * The simulated engine of `config` (model.simulation, default configs/simulated-engine.json). It plays
 * the world: the dataset's questions and gold SQL come from the run's data here, and the initial SQL
 * the oracle scored correct from the config's initial cache when it exists (so a judge can be right
 * about them) — never through a method.
 */
export function simulatedBackendOf(config: ExperimentConfig, dataset: Dataset): SimulatedBackend {
  const loaded = loadSimulatedParams(config.model.simulation ?? DEFAULT_SIMULATION_FILE);
  return new SimulatedBackend(loaded, { examples: dataset.examples, schemas: dataset.schemas, knownCorrect: initialCorrect(config.initial_cache, dataset), maxInputTokens: config.decoding.max_input_tokens, truncate: config.decoding.truncate });
}

/** The initial SQL an initial cache file records as oracle-correct, with its database; [] when the file is absent or unreadable. */
function initialCorrect(file: string, dataset: Dataset): { dbId: string; sql: string }[] {
  if (!existsSync(file)) return [];
  try {
    const records = (JSON.parse(readFileSync(file, "utf8")) as { records?: { query_id?: unknown; initial_sql?: unknown; oracle_correct?: unknown }[] }).records ?? [];
    const db = new Map(dataset.examples.map((e) => [e.id, e.dbId]));
    return records.flatMap((r) => (r.oracle_correct === true && typeof r.initial_sql === "string" && db.has(String(r.query_id)) ? [{ dbId: db.get(String(r.query_id))!, sql: r.initial_sql }] : []));
  } catch {
    return []; // the run reads and checks the initial cache itself and names any fault
  }
}

/** The chat backend of `config`, sized for calls of up to `maxOutputTokens` generated tokens (the identity does not depend on it). */
async function chatBackendOf(config: ExperimentConfig, maxOutputTokens: number): Promise<ChatBackend> {
  const m = config.model;
  const d = config.decoding;
  if (m.backend === "openai") {
    const remote = { baseUrls: m.base_urls, model: m.model_name, modelRevision: m.model_revision, maxConcurrencyPerUrl: m.requests_per_url, timeoutMs: m.request_timeout_s * 1000, maxRetries: m.max_retries, seed: d.seed, repetitionPenalty: d.repetition_penalty };
    if (m.prompt_format === "chat") {
      return new OpenAIChatBackend({ ...remote, engine: m.engine, contextSize: d.max_input_tokens + d.max_output_tokens });
    }
    const tokenizer = await loadPromptTokenizer({ modelPath: m.path, maxInputTokens: d.max_input_tokens, truncate: d.truncate }).catch((error: unknown) => {
      if (!(error instanceof MeritError)) throw error;
      throw new MeritError(`model.path is the served model's GGUF (its tokenizer and chat template build the token-id prompts of model.prompt_format "tokens"): ${error.message}; or set model.prompt_format: "chat" to let the server template`, { cause: error });
    });
    return new CompletionsBackend({ ...remote, engine: m.engine, tokenizer, ownsTokenizer: true, maxOutputTokensLimit: maxOutputTokens, penaltyOutputTokens: d.max_output_tokens });
  }
  return createLlamaBackend({
    modelPath: m.path,
    gpu: m.gpu,
    threads: m.threads ?? undefined,
    sequences: m.sequences,
    mode: m.mode,
    maxInputTokens: d.max_input_tokens,
    maxOutputTokensLimit: maxOutputTokens,
    repetitionPenalty: d.repetition_penalty,
    seed: d.seed,
    truncate: d.truncate,
  });
}
