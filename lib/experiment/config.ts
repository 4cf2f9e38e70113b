/**
 * Experiment configuration (METHOD.md §6, §11; STYLE.md §2.11): a strict zod schema — unknown keys
 * fail, defaults live here with their reason, and errors print the path to the bad field.
 * @module
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { DatasetNameSchema } from "../data/datasets/index.ts";
import { InputFileError, parseJsonText } from "../errors.ts";
import { contentHash, type JsonValue } from "../hash.ts";
import { ENGINES } from "../llm/engines/index.ts";
import { MAX_HOOK_DEADLINE_S } from "../methods/hook-guard.ts";
import { MAX_SQL_TIMEOUT_S, MIN_SQL_TIMEOUT_S } from "../oracle/executor.ts";
import { DEFAULT_ENGINE, EXECUTORS } from "../oracle/executors.ts";
import { registeredName } from "../registry.ts";
import { ORDER_KINDS } from "./stream-order.ts";


/**
 * The largest K a config or `--max-repair-steps` accepts: a repair episode makes up to K model calls
 * per failed query, and the paper's K is 7, so a larger value is a typing slip (99999999999 for 9),
 * not an experiment. Budget-matched controls (K plus a method's extra calls) stay far below it.
 */
export const MAX_REPAIR_STEPS = 100;
export const MAX_REPAIR_STEPS_REASON = "up to K model calls per failed query; the paper's K is 7";

const GpuSchema = z.union([z.literal("auto"), z.literal(false), z.enum(["cuda", "vulkan", "metal"])]);

/** Where the frozen chat model runs. */
export const ModelSchema = z
  .object({
    /**
     * `llama` = a local GGUF through node-llama-cpp; `openai` = OpenAI-compatible servers (vLLM, llama.cpp
     * server); `simulated` = the simulated engine (lib/llm/engines/simulated.ts, METHOD.md "Simulated
     * engine"): a frozen model played by a documented response model with planted effects, no model file.
     */
    backend: z.enum(["llama", "openai", "simulated"]).default("llama"),
    /**
     * The simulated engine's parameters file (lib/llm/engines/simulated-params.ts); absent =
     * configs/simulated-engine.json. Left out when absent, so the hashes of configs without it are unchanged.
     */
    simulation: z.string().min(1).optional(),
    /**
     * GGUF file for the llama backend (models/README.md says how to get it); for the openai backend
     * with `prompt_format: "tokens"`, the GGUF whose chat template and tokenizer build the prompt ids
     * (only its vocabulary is loaded).
     */
    path: z.string().default("models/Qwen2.5-7B-Instruct-Q4_K_M.gguf"),
    /** Base URLs for the openai backend; requests are sharded over them, and a dead one is failed over. */
    base_urls: z.array(z.string().url()).default([]),
    /** Served model name for the openai backend. */
    model_name: z.string().default("Qwen/Qwen2.5-7B-Instruct"),
    /** Revision or hash of the served weights, recorded in the backend identity (cache keys). */
    model_revision: z.string().min(1).default("unpinned"),
    /** The openai backend's server software: decoding parameters are spelled for it (lib/llm/engine-request.ts). */
    engine: registeredName(ENGINES).default("llama.cpp"),
    /**
     * `tokens` (default): the kit templates, truncates and tokenises with `path`'s GGUF and sends token
     * ids to the completions endpoint, so prompts equal the llama backend's token for token;
     * `chat`: the explicit fallback for a server whose tokenizer cannot be loaded here — the server
     * templates and tokenises (`/v1/chat/completions`), and no truncation is counted.
     */
    prompt_format: z.enum(["tokens", "chat"]).default("tokens"),
    /** In-flight requests per base URL for the openai backend (match the server's --parallel). */
    requests_per_url: z.number().int().positive().default(4),
    /**
     * openai backend: seconds one request may take before it is abandoned and retried (on another URL
     * when one is up): long enough for a 512-token answer on a busy server, short enough that a
     * server that accepts and never answers is noticed. Not part of the run identity.
     */
    request_timeout_s: z.number().positive().max(2_147_483, "at most 2147483 seconds (Node timers hold 2^31 − 1 ms)").default(300),
    /** openai backend: retries of a transiently failed request (backoff 1 s, doubled) before the run stops. Not part of the run identity. */
    max_retries: z.number().int().nonnegative().default(5),
    /** GPU use for llama: auto-detect, force a backend, or false for CPU. */
    gpu: GpuSchema.default("auto"),
    /** CPU threads (null = physical cores; the env var MERIT_THREADS overrides). */
    threads: z.number().int().positive().nullable().default(null),
    /** Parallel slots (one llama.cpp context each) sharing one loaded model: streams of a grid run concurrently. */
    sequences: z.number().int().positive().default(1),
    /**
     * llama backend: `deterministic` = one context per slot, recomputation bit-exact; `throughput` =
     * the slots share one batched context (faster, most of all on GPUs; recomputation can differ at
     * near-tied logits). Runs are replay-exact through the call cache either way (README).
     */
    mode: z.enum(["deterministic", "throughput"]).default("deterministic"),
  })
  .strict();

/** Where the dense retrieval embedder runs. */
export const EmbedderSchema = z
  .object({
    /** `simulated` = the simulated engine's hashed bag of words (lib/llm/engines/simulated.ts; no model file). */
    backend: z.enum(["llama", "openai", "simulated"]).default("llama"),
    /** bge-large-en-v1.5 GGUF (METHOD.md §5.3). */
    path: z.string().default("models/bge-large-en-v1.5-f16.gguf"),
    base_urls: z.array(z.string().url()).default([]),
    model_name: z.string().default("BAAI/bge-large-en-v1.5"),
  })
  .strict();

export const DecodingSchema = z
  .object({
    /** METHOD.md §6.4: max_new_tokens = 512. */
    max_output_tokens: z.number().int().positive().default(512),
    /** METHOD.md §6.4: left truncation to 4,096 prompt tokens. */
    max_input_tokens: z.number().int().positive().default(4096),
    /** `left` keeps the reference behaviour (counted and warned); `error` refuses over-long prompts (§11.5). */
    truncate: z.enum(["left", "error"]).default("left"),
    /** Qwen2.5's generation_config value, inherited by the reference's greedy decoding (§11.9). */
    repetition_penalty: z.number().min(1).default(1.05),
    /** METHOD.md §6.4: set_reproducible_seeds(42); irrelevant under greedy decoding but recorded. */
    seed: z.number().int().nonnegative().default(42),
  })
  .strict();

/**
 * Retrieval settings. Every key is read: runExperiment applies max_positive, max_negative,
 * min_typed_pool and type_bonus to MERIT's memory args where the method leaves the arg at METHOD.md's
 * value, and refuses one that conflicts with the method's own arg (lib/methods/method.ts
 * `underSettings`), exact_pool_limit goes to MERIT's dense index (a note memory's nearest-note search is exact at every size, lib/methods/note-index.ts); the fusion weights cannot be
 * changed, so any other value is rejected with the reason.
 */
export const RetrievalSchema = z
  .object({
    /** METHOD.md §5.5 limits: entries from the positive and the negative pool; dynamic_rag's one pool takes their sum. */
    max_positive: z.number().int().nonnegative().default(3),
    max_negative: z.number().int().nonnegative().default(1),
    /** Typed pool is used only with at least this many entries, else the fallback to the legal pool (§5.5). */
    min_typed_pool: z.number().int().positive().default(3),
    /** Fusion weights are fixed by the method (config validation requires exactly these, §5.4). */
    dense_weight: z.literal(0.75, { errorMap: () => ({ message: "the fusion weights are fixed by METHOD.md §5.4 (dense 0.75, BM25 0.25); the ablations no_dense_rerank and no_bm25 turn a channel off" }) }).default(0.75),
    bm25_weight: z.literal(0.25, { errorMap: () => ({ message: "the fusion weights are fixed by METHOD.md §5.4 (dense 0.75, BM25 0.25); the ablations no_dense_rerank and no_bm25 turn a channel off" }) }).default(0.25),
    /** Type-reliability-aware variant's soft bonus (§5.4; merit_typerel only, no other method adds one). */
    type_bonus: z.number().nonnegative().default(0.1),
    /** Below this pool size dense scores are exact; above, HNSW candidates are rescored exactly. */
    exact_pool_limit: z.number().int().positive().default(5000),
  })
  .strict();

/**
 * Which queries `--limit N` keeps (lib/experiment/stream.ts): `first` = the first N of the seed-0
 * stream; `initially_failed` = the first N − initially_correct initially failed queries of the
 * seed-0 stream plus its first `initially_correct` initially correct ones.
 */
export const SubsetSchema = z
  .object({
    rule: z.enum(["first", "initially_failed"]).default("first"),
    /** Initially correct queries kept by `initially_failed` (at most N). */
    initially_correct: z.number().int().nonnegative().default(0),
  })
  .strict();

export type SubsetRule = z.infer<typeof SubsetSchema>;

/** The oracle's SQL engine (DESIGN.md §1 "SQL engines"). */
export const OracleSchema = z
  .object({
    /** A registered executor (lib/oracle/executors.ts, or a plugin's `registerExecutor`); the bundled one is the SQLite sandbox. */
    executor: registeredName(EXECUTORS).default(DEFAULT_ENGINE),
  })
  .strict();

export const ExperimentConfigSchema = z
  .object({
    /**
     * Plugin files (README "Plugins") every command reading this config imports before the rest of
     * the config is parsed, so `dataset`, `oracle.executor`, `model.engine` and method names may be
     * ones they register. Paths are relative to the working folder, like every path of a config. Not
     * part of a run's identity: the manifest records the plugins a run uses, with their sha256.
     */
    plugins: z.array(z.string().min(1)).optional(),
    dataset: DatasetNameSchema,
    /** Dataset directory (layout of METHOD.md §1.1). */
    data_dir: z.string(),
    /** Shared initial cache (METHOD.md §6.6), built by `merit initial`. */
    initial_cache: z.string(),
    /**
     * Spider test-suite database root (METHOD.md §1.1, §2.3): one folder per db_id with the canonical
     * database and its distilled variants (`merit data download spider-testsuite`). When set, runs
     * refuse to start without it unless `--allow-single-db`; absent, the single databases under
     * data_dir score the run. Spider only; no default, so configs without it keep their hash.
     */
    test_suite_databases: z.string().min(1).optional(),
    /** Spider oracle protocol; repair runs use the MERIT reference oracle (§11.6). Ignored for BIRD. */
    protocol: z.enum(["official", "merit", "strict"]).default("merit"),
    /**
     * What the agent is told about each attempt (lib/methods/feedback.ts): `denotation_confirmed` (the
     * paper; `oracle` is the same regime), `dbms_only`, `llm_judge`, `noisy_oracle` or a plugin's
     * registered regime (checked when the run starts).
     */
    feedback_regime: z.preprocess((v) => (v === "oracle" ? "denotation_confirmed" : v), z.string().regex(/^[a-z][a-z0-9_]{0,39}$/, "must be a feedback regime name (denotation_confirmed, oracle, dbms_only, llm_judge, noisy_oracle or a plugin's)")).default("denotation_confirmed"),
    /** `noisy_oracle`'s flip probability; absent = 0.1 (left out, so the hashes of configs without it are unchanged). */
    feedback_noise: z.number().min(0).max(1).optional(),
    /** K: repair generations per failed query (METHOD.md §6.1); at most MAX_REPAIR_STEPS. */
    max_repair_steps: z.number().int().nonnegative().max(MAX_REPAIR_STEPS, `at most ${MAX_REPAIR_STEPS} (${MAX_REPAIR_STEPS_REASON})`).default(7),
    /** Seconds per SQL statement (§11.1); at most what one Node timer can hold. */
    sql_timeout_s: z.number().min(MIN_SQL_TIMEOUT_S, `at least ${MIN_SQL_TIMEOUT_S} seconds (1 ms, the shortest deadline --timeout accepts)`).max(MAX_SQL_TIMEOUT_S, `at most ${MAX_SQL_TIMEOUT_S} seconds (Node timers hold 2^31 − 1 ms; a longer deadline would fire after 1 ms)`).default(30),
    /**
     * Seconds a method's hook may spend per call outside its model calls before the run stops with one
     * line (lib/methods/hook-guard.ts); absent = 120 (left out, so the hashes of configs without it are unchanged).
     */
    hook_deadline_s: z.number().positive().max(MAX_HOOK_DEADLINE_S, `at most ${MAX_HOOK_DEADLINE_S} seconds (Node timers hold 2^31 − 1 ms)`).optional(),
    /**
     * A finished run directory whose memory hook's notes join this run's memory read-only (transfer;
     * lib/experiment/memory-source.ts); absent = none (left out, so the hashes of configs without it are unchanged).
     */
    memory_source: z.string().min(1).optional(),
    /** Seed of random_same_type draws (§5.6). */
    random_seed: z.number().int().nonnegative().default(42),
    /**
     * A folder of the user's own prompt templates, named as in prompts/ (`spider-repair-v4.txt`, …);
     * absent = the kit's prompts/. Manifests and the initial cache record the templates' hashes.
     */
    prompts_dir: z.string().min(1).optional(),
    /** SQLite file of the LLM call cache (shared by runs; safe under concurrent writers). */
    call_cache: z.string().default("runs/llm-call-cache.sqlite"),
    model: ModelSchema.default({}),
    embedder: EmbedderSchema.default({}),
    decoding: DecodingSchema.default({}),
    retrieval: RetrievalSchema.default({}),
    /** The oracle's SQL engine; absent = `sqlite` (left out, so the hashes of configs without it are unchanged). */
    oracle: OracleSchema.optional(),
    /** The `--limit` selection rule; absent = `first` (left out of the object, so the config hashes of
     * configs without it are unchanged). */
    subset: SubsetSchema.optional(),
    /**
     * The stream order's kind (METHOD.md §7, stream-order.ts): `random` (the paper's shuffle),
     * `by_database`, `easy_to_hard`, `hard_to_easy` or `drift`, each seeded by the run's seed.
     * `random` is dropped from the parsed config, so configs without a structured order keep their hash.
     */
    order: z.enum(ORDER_KINDS).optional(),
    /**
     * The default `--limit` of `merit run` and `merit grid` with this config (the first N queries of
     * each stream, by the `subset` rule); a study's saved config (RUNS/configs/<dataset>.json) carries
     * its `queries` here. Never part of a run's identity: parsing takes it out of the config, and a run
     * records its limit beside its config (config.json `limit`), as with `--limit`.
     */
    limit: z.number().int().min(1).optional(),
  })
  .strict();

/** A parsed config: every field but `limit` (see {@link loadConfigFile}). */
export type ExperimentConfig = Omit<z.infer<typeof ExperimentConfigSchema>, "limit">;

/** Parses a config object; the error names the file, the path to the bad field and what was wrong. */
export function parseConfig(value: unknown, file = "<config>"): ExperimentConfig {
  return parseConfigFile(value, file).config;
}

/** A parsed config and its `limit` (null when it has none). */
function parseConfigFile(value: unknown, file: string): { config: ExperimentConfig; limit: number | null } {
  const parsed = ExperimentConfigSchema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}`);
    throw new InputFileError(file, `invalid config — ${issues.slice(0, 3).join("; ")}${issues.length > 3 ? ` (+${issues.length - 3} more)` : ""}`, "fix the field (see lib/experiment/config.ts for every key and its default)");
  }
  if (parsed.data.order === "random") delete parsed.data.order;
  const { limit, ...config } = parsed.data;
  return { config, limit: limit ?? null };
}

/** Reads and validates a JSON config file. */
export function loadConfig(file: string): ExperimentConfig {
  return loadConfigFile(file).config;
}

/** Reads and validates a JSON config file; also its `limit`, the default `--limit` of `merit run` and `merit grid` (null: none). */
export function loadConfigFile(file: string): { config: ExperimentConfig; limit: number | null } {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new InputFileError(file, "config file cannot be read", "check the --config path (configs/spider.json, configs/bird.json)", error);
  }
  return parseConfigFile(parseJsonText(text, file, "malformed JSON", "fix the JSON syntax"), file);
}

/** The executor that scores a config's runs (`oracle.executor`, default `sqlite`). */
export function executorOf(config: ExperimentConfig): string {
  return config.oracle?.executor ?? DEFAULT_ENGINE;
}

/** content_hash of the fully-defaulted config, recorded in manifests. */
export function configHash(config: ExperimentConfig): string {
  return contentHash(config as unknown as JsonValue);
}
