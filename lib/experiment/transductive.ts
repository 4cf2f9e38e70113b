/**
 * The NON-CAUSAL `transductive_batch` control (METHOD.md §5.6): before the stream starts, memory is
 * seeded with one negative entry (`initial SQL => …`, iteration 0) per initially failed query of the
 * stream — information no causal method may have. The entries come from the memory stage's
 * `transductivePrepassEntry`, whose episode ids never collide with the deferred per-episode entries.
 * @module
 */
import { classifyFailure } from "../classify.ts";
import type { Dataset } from "../data/types.ts";
import type { MemoryEntry } from "../memory/entry.ts";
import { transductivePrepassEntry, type MemoryWriteFlags } from "../memory/finalize.ts";
import type { StreamItem } from "./stream.ts";

export function transductivePrepassEntries(dataset: Dataset, stream: readonly StreamItem[], seed: number, method: string, flags: MemoryWriteFlags): MemoryEntry[] {
  const entries: MemoryEntry[] = [];
  for (const item of stream) {
    const r = item.initial;
    if (r.oracle_correct !== false) continue;
    const status = r.execution_status as "DENOTATION_MISMATCH" | "EXECUTION_ERROR" | "TIMEOUT";
    const executed = status === "DENOTATION_MISMATCH";
    const classification = classifyFailure({ status, dbError: r.db_error, predictedExecOk: executed });
    const entry = transductivePrepassEntry(
      {
        dataset: dataset.name,
        method,
        streamOrderSeed: seed,
        streamPosition: item.position,
        queryId: item.example.id,
        dbId: item.example.dbId,
        question: item.example.question,
        schema: dataset.schemas.get(item.example.dbId) ?? "",
        feedbackRegime: "denotation_confirmed",
        attempts: [{ sql: r.initial_sql, status, predictedExecOk: executed, dbError: r.db_error, acceptance: "rejected", errorType: classification?.errorType ?? null }],
        retrievedEntryIds: [],
      },
      flags,
    );
    if (entry) entries.push(entry);
  }
  return entries;
}
