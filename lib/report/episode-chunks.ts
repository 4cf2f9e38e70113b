/**
 * Report stage, pure core (METHOD.md §6.1, §5.7, §4.1): the episode details of the page, grouped
 * into chunks by query so that one chunk holds every method and seed of its queries (the diff view
 * needs one load). Each repair step is joined with its retrieval-log record and the retrieved
 * entries' final state from the run's memory.
 * @module
 */
import type { MemoryEntry } from "../memory/entry.ts";
import type { RetrievalLogRecord } from "../retrieval/retrieval-log.ts";
import { userFacingDbError } from "./db-error-text.ts";
import type { EntrySummary, EpisodeChunk, EpisodeDetail, RetrievalStep } from "./report-data.ts";
import type { PlacedEpisode } from "./report-index.ts";
import type { RunInput } from "./run-reader.ts";

export interface ChunkContext {
  /** Chunk number per query index (ReportIndex.queries.chunk). */
  chunkOfQuery: readonly number[];
  chunkCount: number;
  /** Evidence of a query index ("" when none or unknown). */
  evidence: (query: number) => string;
  /** Schema text per "dataset/db_id" of a query index, undefined when unknown. */
  schema: (query: number) => { key: string; text: string } | undefined;
}

/** Splits `episodes` (in row order) into `ctx.chunkCount` chunks. */
export function buildChunks(runs: readonly RunInput[], episodes: readonly PlacedEpisode[], ctx: ChunkContext): EpisodeChunk[] {
  const logs = runs.map((r) => groupLog(r.retrievalLog));
  const memories = runs.map((r) => new Map((r.memory ?? []).map((e) => [e.entry_id, e])));
  const chunks: EpisodeChunk[] = Array.from({ length: ctx.chunkCount }, () => ({ episodes: [], evidence: {}, schemas: {}, entries: {} }));
  for (const p of episodes) {
    const chunk = chunks[ctx.chunkOfQuery[p.query]];
    const t = p.trajectory;
    const records = logs[p.run].get(t.query_id) ?? [];
    const retrieval = records.map(retrievalStep);
    for (const step of retrieval) {
      for (const hit of step.hits) {
        const entry = memories[p.run].get(hit.id);
        if (!entry) continue;
        const byRun = (chunk.entries[p.run] ??= {});
        byRun[hit.id] ??= entrySummary(entry);
      }
    }
    const detail: EpisodeDetail = {
      row: p.row,
      attempts: t.attempts,
      statuses: t.statuses,
      dbErrors: t.db_errors.map(userFacingDbError),
      errorTypes: t.error_types,
      callKinds: t.call_kinds,
      promptTokens: t.prompt_tokens,
      outputTokens: t.output_tokens,
      truncatedTokens: t.truncated_prompt_tokens,
      initialTokensKnown: t.initial_tokens_known,
      reflections: t.reflections,
      retrieval,
    };
    chunk.episodes.push(detail);
    const evidence = ctx.evidence(p.query);
    if (evidence !== "") chunk.evidence[p.query] = evidence;
    const schema = ctx.schema(p.query);
    if (schema) chunk.schemas[schema.key] = schema.text;
  }
  return chunks;
}

/** Retrieval records by query id, each list sorted by repair step. */
function groupLog(log: readonly RetrievalLogRecord[] | null): Map<string, RetrievalLogRecord[]> {
  const out = new Map<string, RetrievalLogRecord[]>();
  for (const r of log ?? []) {
    const list = out.get(r.query_id) ?? [];
    list.push(r);
    out.set(r.query_id, list);
  }
  for (const list of out.values()) list.sort((a, b) => a.repair_iteration - b.repair_iteration);
  return out;
}

function retrievalStep(r: RetrievalLogRecord): RetrievalStep {
  return {
    step: r.repair_iteration,
    errorType: r.current_error_type,
    legalPool: r.legal_pool_size,
    typedPool: r.typed_pool_size,
    fallback: r.fallback_used,
    typeFilter: r.type_filter_applied,
    denseSearch: r.dense_search,
    hits: r.retrieved_entry_ids.map((id, i) => ({
      id,
      polarity: r.retrieved_polarities[i],
      errorType: r.retrieved_error_types[i],
      sourceDb: r.source_db_ids[i],
      sourcePosition: r.source_stream_positions[i],
      dense: r.dense_scores[i],
      bm25: r.bm25_scores[i],
      typeMatch: r.type_match_scores[i],
      final: r.final_scores[i],
    })),
  };
}

function entrySummary(e: MemoryEntry): EntrySummary {
  return {
    sourceQuery: e.source_query_id,
    question: e.question,
    delta: e.attempted_sql_delta,
    outcome: e.observed_outcome,
    dbError: e.observed_db_error,
    confirmations: e.confirmation_count,
    successes: e.success_count,
    failures: e.failure_count,
  };
}
