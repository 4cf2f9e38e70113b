/**
 * Test and bench helper for the report stage (METHOD.md §6.1, §5.7, §4.1): writes synthetic run
 * directories — config.json, trajectories.jsonl that pass TrajectorySchema, and for memory methods
 * retrieval_log.jsonl plus memory/memory_{positive,negative}.jsonl — from an explicit plan of
 * attempt statuses per (method, seed, query). Deterministic: no clock, no Math.random.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../lib/hash.ts";
import type { MemoryEntry } from "../../lib/memory/entry.ts";
import type { Trajectory } from "../../lib/repair/trajectory.ts";
import type { RetrievalLogRecord } from "../../lib/retrieval/retrieval-log.ts";

export type Status = "CORRECT" | "DENOTATION_MISMATCH" | "EXECUTION_ERROR" | "TIMEOUT";

/** Failure type the synthetic classifier gives each non-CORRECT status. */
export const TYPE_OF: Record<Status, string | null> = { CORRECT: null, EXECUTION_ERROR: "Schema Linking", DENOTATION_MISMATCH: "Result Mismatch", TIMEOUT: "Execution" };

export interface SyntheticQuery {
  id: string;
  db: string;
}

export interface SyntheticGrid {
  outDir: string;
  dataset: "spider" | "bird";
  /** Absolute dataset directory written to each config.json (so questions and schemas resolve). */
  dataDir: string;
  queries: readonly SyntheticQuery[];
  methods: readonly string[];
  seeds: readonly number[];
  /** Methods that keep a memory (get memory/ and retrieval_log.jsonl). */
  memoryMethods: ReadonlySet<string>;
  /** Attempt statuses of one episode, attempt 0 first (1 to 8 entries). */
  plan: (method: string, seed: number, queryIndex: number) => Status[];
  /** Optional SQL of attempt i (default: a short statement naming the attempt). */
  sql?: (method: string, seed: number, queryIndex: number, attempt: number) => string;
}

/** Stream position of query i in a run of `n` queries with stream seed `seed` (a rotation). */
export function streamPosition(i: number, n: number, seed: number): number {
  return (i + seed * 5) % n;
}

/** Writes every run directory of the grid; returns their paths in (method, seed) order. */
export function writeSyntheticGrid(g: SyntheticGrid): string[] {
  const dirs: string[] = [];
  for (const method of g.methods) {
    for (const seed of g.seeds) {
      const dir = join(g.outDir, `${method}-s${seed}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "config.json"), JSON.stringify({ config: { dataset: g.dataset, data_dir: g.dataDir }, method, seed, limit: g.queries.length }));
      const order = g.queries.map((_, i) => i).sort((a, b) => streamPosition(a, g.queries.length, seed) - streamPosition(b, g.queries.length, seed));
      const hasMemory = g.memoryMethods.has(method);
      const memory: MemoryEntry[] = [];
      const log: RetrievalLogRecord[] = [];
      const lines: string[] = [];
      for (const i of order) {
        const statuses = g.plan(method, seed, i);
        const position = streamPosition(i, g.queries.length, seed);
        const sql = (k: number) => g.sql?.(method, seed, i, k) ?? `SELECT col_${k} FROM t_${g.queries[i].db} WHERE id = ${g.queries[i].id}`;
        const retrieved: string[][] = [];
        for (let step = 1; step < statuses.length; step++) {
          const hits = hasMemory ? memory.slice(-2) : [];
          retrieved.push(hits.map((e) => e.entry_id));
          if (hasMemory) log.push(logRecord(g.queries[i].id, step, TYPE_OF[statuses[step - 1]] ?? "Unknown", hits, memory.length, method));
        }
        lines.push(JSON.stringify(trajectory(g, method, seed, i, position, statuses, sql, retrieved)));
        const last = statuses[statuses.length - 1];
        if (hasMemory && statuses[0] !== "CORRECT") memory.push(entry(g.queries[i], position, statuses, sql, last === "CORRECT", method));
      }
      writeFileSync(join(dir, "trajectories.jsonl"), lines.join("\n") + "\n");
      if (hasMemory) {
        writeFileSync(join(dir, "retrieval_log.jsonl"), log.map((r) => JSON.stringify(r)).join("\n") + (log.length > 0 ? "\n" : ""));
        mkdirSync(join(dir, "memory"), { recursive: true });
        const jsonl = (xs: MemoryEntry[]) => xs.map((e) => JSON.stringify(e)).join("\n") + (xs.length > 0 ? "\n" : "");
        writeFileSync(join(dir, "memory", "memory_positive.jsonl"), jsonl(memory.filter((e) => e.polarity === "positive")));
        writeFileSync(join(dir, "memory", "memory_negative.jsonl"), jsonl(memory.filter((e) => e.polarity === "negative")));
      }
      dirs.push(dir);
    }
  }
  return dirs;
}

function trajectory(g: SyntheticGrid, method: string, seed: number, i: number, position: number, statuses: Status[], sql: (k: number) => string, retrieved: string[][]): Trajectory {
  const n = statuses.length;
  const promptTokens = statuses.map((_, k) => (k === 0 ? 0 : 400 + 10 * k));
  const outputTokens = statuses.map((_, k) => (k === 0 ? 0 : 20 + k));
  const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
  return {
    query_id: g.queries[i].id,
    db_id: g.queries[i].db,
    source_index: Number.isInteger(Number(g.queries[i].id)) ? Number(g.queries[i].id) : i,
    stream_position: position,
    dataset: g.dataset,
    method,
    stream_seed: seed,
    feedback_regime: "denotation_confirmed",
    attempts: statuses.map((_, k) => sql(k)),
    statuses,
    db_errors: statuses.map((s, k) => (s === "EXECUTION_ERROR" ? `no such column: col_${k}` : null)),
    error_types: statuses.map((s) => TYPE_OF[s]) as Trajectory["error_types"],
    initial_correct: statuses[0] === "CORRECT",
    final_correct: statuses[n - 1] === "CORRECT",
    repair_steps: n - 1,
    initial_tokens_known: false,
    prompt_tokens: promptTokens,
    output_tokens: outputTokens,
    call_kinds: statuses.map((_, k) => (k === 0 ? "initial_cache" : "repair")),
    truncated_prompt_tokens: statuses.map(() => 0),
    reflections: [],
    accounting: {
      initial_prompt_tokens: 0,
      initial_output_tokens: 0,
      repair_prompt_tokens: sum(promptTokens),
      repair_output_tokens: sum(outputTokens),
      total_prompt_tokens: sum(promptTokens),
      total_output_tokens: sum(outputTokens),
      total_tokens: sum(promptTokens) + sum(outputTokens),
      llm_calls: n,
      db_executions: n + 1,
      embedding_calls: 0,
      retrieval_calls: 0,
      truncations: 0,
    },
    retrieved_entry_ids: retrieved,
  };
}

/** Scores of the k-th hit: dense 0.9 − 0.1k, BM25 0.5, final = 0.75·dense + 0.25·BM25 (METHOD.md §5.4 weights). */
function logRecord(queryId: string, step: number, errorType: string, hits: MemoryEntry[], pool: number, method: string): RetrievalLogRecord {
  const dense = hits.map((_, k) => 0.9 - 0.1 * k);
  return {
    query_id: queryId,
    repair_iteration: step,
    current_error_type: errorType,
    legal_pool_size: pool,
    typed_pool_size: pool,
    fallback_used: pool < 3,
    type_filter_applied: true,
    type_match_used_as_soft_score: false,
    retrieved_entry_ids: hits.map((e) => e.entry_id),
    retrieved_polarities: hits.map((e) => e.polarity),
    retrieved_error_types: hits.map((e) => e.error_type),
    source_db_ids: hits.map((e) => e.source_db_id),
    source_stream_positions: hits.map((e) => e.source_stream_position),
    dense_scores: dense,
    bm25_scores: hits.map(() => 0.5),
    type_match_scores: hits.map(() => 0),
    final_scores: dense.map((d) => 0.75 * d + 0.25 * 0.5),
    method_name: method,
    legal_pool_size_by_polarity: {},
    typed_pool_size_by_polarity: {},
    fallback_used_by_polarity: {},
    dense_search: hits.length > 0 ? "exact" : "none",
  };
}

function entry(q: SyntheticQuery, position: number, statuses: Status[], sql: (k: number) => string, positive: boolean, method: string): MemoryEntry {
  const last = statuses.length - 1;
  const observation = {
    source_query_id: q.id,
    source_db_id: q.db,
    source_episode_id: sha256Hex(`${method}/${q.id}/${position}`),
    source_stream_position: position,
    source_iteration: last,
    polarity: positive ? ("positive" as const) : ("negative" as const),
    provenance: { method_name: method, feedback_regime: "denotation_confirmed" as const, retrieved_entry_ids: [] },
    question: `question of ${q.id}`,
    schema: "",
    failure_context: `attempted_sql=${sql(0)}; status=${statuses[0]}; db_error=(none)`,
    attempted_sql_delta: `${sql(0)} => ${sql(last)}`,
    successful_direction: positive ? `Observed successful transition: ${sql(0)} => ${sql(last)}` : "",
    observed_outcome: statuses[last],
    observed_db_error: null,
  };
  return {
    ...observation,
    entry_id: sha256Hex(`${method}/${q.id}/${position}/entry`),
    error_type: TYPE_OF[statuses[0]] ?? "Unknown",
    applicability_scope: "global",
    confirmation_count: 1,
    success_count: positive ? 1 : 0,
    failure_count: positive ? 0 : 1,
    provenance_history: [observation],
  };
}
