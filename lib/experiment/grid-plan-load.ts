/**
 * Experiment runs, `merit grid --plan` from a config: loads what a plan reads — the config's dataset
 * and databases, the initial cache, the oracle, the call cache read-only — plans the streams
 * (grid-plan.ts `computePlan`) and prints the plan's lines.
 * @module
 */
import { existsSync } from "node:fs";
import { missingDatabases } from "../data/index.ts";
import { sha256File } from "../file-hash.ts";
import { callKey, openCacheDatabase, rowHash } from "../llm/call-cache.ts";
import { llamaIdentity } from "../llm/llama-identity.ts";
import type { BackendIdentity } from "../llm/types.ts";
import { Oracle, protocolIdOf } from "../oracle/oracle.ts";
import { executorOf, type ExperimentConfig } from "./config.ts";
import { loadConfigDataset, type ConfigDatasetOptions } from "./database-set.ts";
import type { Stream } from "./grid.ts";
import { readInitialCache } from "./initial-cache.ts";
import { computePlan, type CacheLookup, type GridPlan } from "./grid-plan.ts";
import { ROLE_TEXT } from "./method-roles.ts";

/** Loads what a plan reads — the config's dataset and databases, the initial cache, the oracle, the call cache read-only — and plans `streams`. */
export async function planGrid(config: ExperimentConfig, streams: readonly Stream[], opts: { limit?: number | null; data?: ConfigDatasetOptions; log?: (line: string) => void; consultCache?: boolean } = {}): Promise<GridPlan> {
  const log = opts.log ?? (() => undefined);
  const { dataset, warnings } = await loadConfigDataset(config, opts.data ?? {});
  for (const line of warnings) log(line);
  const missing = missingDatabases(dataset);
  if (missing.length > 0) log(`warning: no database for ${missing.map((m) => `${m.dbId} (${m.examples})`).join(", ")}; those queries are dropped from the stream`);
  const initialCache = readInitialCache(config.initial_cache, dataset, protocolIdOf(config.dataset, config.protocol));
  const { lookup, identity, reason, close } = opts.consultCache === false ? { lookup: null, identity: null, reason: "not asked to", close: () => undefined } : await openLookup(config);
  const oracle = new Oracle({ dataset: config.dataset, databases: dataset.databases, protocol: config.protocol, timeoutMs: config.sql_timeout_s * 1000, jobs: 2, engine: executorOf(config) });
  try {
    return await computePlan({ config, streams, limit: opts.limit ?? null, dataset, initialCache, score: (example, sql) => oracle.score(example, sql), lookup, identity, cacheNotConsulted: reason });
  } finally {
    await oracle.close();
    close();
  }
}

/**
 * The call cache, read-only, keyed as the run keys it: the llama backend's identity is built from
 * the config and the GGUF's SHA-256 (no model is loaded). An OpenAI-compatible backend's identity
 * needs the server's tokenizer or engine settings, so its cache is not consulted.
 */
async function openLookup(config: ExperimentConfig): Promise<{ lookup: CacheLookup | null; identity: BackendIdentity | null; reason: string | null; close: () => void }> {
  const none = (reason: string) => ({ lookup: null, identity: null, reason, close: () => undefined });
  const m = config.model;
  const d = config.decoding;
  if (m.backend === "simulated") return none("the simulated engine answers every call itself from (seed, prompt), at no cost");
  if (m.backend !== "llama") return none("the call cache is consulted only for the llama backend (an OpenAI-compatible backend's cache keys need its server settings)");
  if (!existsSync(config.call_cache)) return none(`${config.call_cache} does not exist yet (an empty cache)`);
  if (!existsSync(m.path)) return none(`model.path ${m.path} does not exist, and the cache's keys hold its SHA-256`);
  const identity = llamaIdentity({ modelPath: m.path, modelHash: await sha256File(m.path), maxInputTokens: d.max_input_tokens, truncate: d.truncate, repetitionPenalty: d.repetition_penalty, seed: d.seed, customTemplate: false, mode: m.mode });
  const db = openCacheDatabase(config.call_cache, { readonly: true });
  const select = db.prepare<[string], { text: string; prompt_tokens: number; output_tokens: number; truncated_prompt_tokens: number; row_hash: string }>("SELECT text, prompt_tokens, output_tokens, truncated_prompt_tokens, row_hash FROM calls WHERE key = ?");
  const lookup: CacheLookup = (request) => {
    const key = callKey(identity, request);
    const row = select.get(key);
    // A damaged row is not an answer: the run refuses it, the plan counts the call as computed.
    if (!row || rowHash({ key, text: row.text, promptTokens: row.prompt_tokens, outputTokens: row.output_tokens, truncatedPromptTokens: row.truncated_prompt_tokens }) !== row.row_hash) return null;
    return { text: row.text, promptTokens: row.prompt_tokens, outputTokens: row.output_tokens, truncatedPromptTokens: row.truncated_prompt_tokens, cached: true };
  };
  return { lookup, identity, reason: null, close: () => db.close() };
}

/** The plan as lines for stdout. */
export function gridPlanLines(plan: GridPlan): string[] {
  const int = (n: number) => n.toLocaleString("en-US");
  const lines = [`plan: ${plan.streams} stream${plan.streams === 1 ? "" : "s"}, K = ${plan.maxRepairSteps} (nothing loaded, nothing written)`];
  lines.push("| method | streams | order-independent | episodes | need repair | computed if no repair succeeds | already in the call cache | repeats of other streams' calls | computed at most | role |");
  lines.push("|---|---|---|---|---|---|---|---|---|---|");
  for (const m of plan.methods) {
    lines.push(`| ${m.method} | ${m.streams} | ${m.orderIndependent ? "yes" : "no"} | ${int(m.episodes)} | ${int(m.repairEpisodes)} | ${int(m.computed)} | ${int(m.cached)} | ${int(m.repeats)} | ${int(m.computedAtMost)} | ${ROLE_TEXT[m.role]} |`);
  }
  lines.push(`computed calls: ${int(plan.computed)} if no repair succeeds outside the cache's replays, at most ${int(plan.computedAtMost)} whatever the repairs do (the first is exact unless memory methods of one stream order retrieve alike: merit grid --help)`);
  lines.push(`answered by the call cache: ${int(plan.cached)} already in it${plan.cacheNotConsulted ? ` (not consulted: ${plan.cacheNotConsulted})` : ""}, ${int(plan.repeats)} repeats within the grid`);
  lines.push(`tokens of at most ${int(plan.computedAtMost)} computed calls: at most ${int(plan.promptTokensBound)} prompt (${int(plan.maxInputTokens)} max_input_tokens per call) and ${int(plan.outputTokensBound)} generated (${int(plan.maxOutputTokens)} max_output_tokens per call, a declared call kind's own limit for its calls)`);
  const controls = plan.methods.filter((m) => m.role === "control").map((m) => m.method);
  if (controls.length > 0) lines.push(`controls (no table of the paper reads them): ${controls.join(", ")}`);
  return lines;
}

