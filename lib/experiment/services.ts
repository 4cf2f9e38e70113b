/**
 * Experiment runs, the services a config asks for (METHOD.md §6.4, §5.3; DESIGN.md §1): the chat
 * backend (llama.cpp GGUF or OpenAI-compatible servers) behind the content-addressed call cache, the
 * embedder for memory methods, the oracle and a retriever factory. Built once and shared by every
 * stream of a grid; `close()` releases them.
 * @module
 */
import type { Dataset } from "../data/types.ts";
import { MeritError } from "../errors.ts";
import { CallCache } from "../llm/call-cache.ts";
import { createLlamaBackend } from "../llm/llama-backend.ts";
import { createLlamaEmbedder } from "../llm/llama-embedder.ts";
import { CompletionsBackend } from "../llm/completions-backend.ts";
import { createOpenAIEmbedder, OpenAIChatBackend } from "../llm/openai-backend.ts";
import { loadPromptTokenizer } from "../llm/prompt-tokenizer.ts";
import type { ChatBackend, Embedder } from "../llm/types.ts";
import { Oracle } from "../oracle/oracle.ts";
import { createRetriever, type Retriever } from "../retrieval/retriever.ts";
import { executorOf, type ExperimentConfig } from "./config.ts";

export interface Services {
  /** The cached chat backend every run uses. */
  backend: CallCache;
  /** The uncached backend (for identity and manifests). */
  inner: ChatBackend;
  /** null until a memory method asks for it (`embedder()` loads it once). */
  embedder(): Promise<Embedder>;
  oracle: Oracle;
  /** A fresh retriever (one per run: it caches per-memory indexes). */
  retriever(): Retriever;
  close(): Promise<void>;
}

export interface ServiceOverrides {
  /** Replace the chat backend (tests, notebooks); the call cache still wraps it. */
  backend?: ChatBackend;
  embedder?: Embedder;
  /** SQL worker processes of the oracle. */
  jobs?: number;
}

/** Builds the services of `config` for `dataset`. */
export async function createServices(config: ExperimentConfig, dataset: Dataset, overrides: ServiceOverrides = {}): Promise<Services> {
  const inner = overrides.backend ?? (await chatBackendOf(config));
  const backend = new CallCache(inner, config.call_cache);
  const oracle = new Oracle({
    dataset: config.dataset,
    databases: dataset.databases,
    protocol: config.protocol,
    timeoutMs: config.sql_timeout_s * 1000,
    jobs: overrides.jobs ?? 2,
    engine: executorOf(config),
  });
  let embedder: Promise<Embedder> | null = overrides.embedder ? Promise.resolve(overrides.embedder) : null;
  return {
    backend,
    inner,
    embedder: () => (embedder ??= embedderOf(config)),
    oracle,
    retriever: () => createRetriever({ exactPoolLimit: config.retrieval.exact_pool_limit, randomSeed: config.random_seed }),
    async close() {
      await oracle.close();
      await backend.close();
      if (embedder && !overrides.embedder) await (await embedder).close();
      if (!overrides.backend) await inner.close();
    },
  };
}

async function chatBackendOf(config: ExperimentConfig): Promise<ChatBackend> {
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
    return new CompletionsBackend({ ...remote, engine: m.engine, tokenizer, ownsTokenizer: true, maxOutputTokensLimit: d.max_output_tokens });
  }
  return createLlamaBackend({
    modelPath: m.path,
    gpu: m.gpu,
    threads: m.threads ?? undefined,
    sequences: m.sequences,
    mode: m.mode,
    maxInputTokens: d.max_input_tokens,
    maxOutputTokensLimit: d.max_output_tokens,
    repetitionPenalty: d.repetition_penalty,
    seed: d.seed,
    truncate: d.truncate,
  });
}

async function embedderOf(config: ExperimentConfig): Promise<Embedder> {
  const e = config.embedder;
  if (e.backend === "openai") return createOpenAIEmbedder({ baseUrls: e.base_urls, model: e.model_name });
  return createLlamaEmbedder({ modelPath: e.path, gpu: config.model.gpu, threads: config.model.threads ?? undefined });
}
