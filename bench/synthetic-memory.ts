/**
 * A synthetic MERIT memory entry for the benchmarks (bench/retrieval.ts, bench/overhead.ts): a random
 * question, a random SQL transition and a failure type drawn from `rng`, shaped like a real entry so the
 * retriever, the tables and the indexes do their real work. Not data: never written to results/.
 * @module
 */
import { observationOf, type MemoryEntry } from "../lib/memory/entry.ts";
import { entryId } from "../lib/memory/identity.ts";
import type { PyRandom } from "../lib/random.ts";

/** The failure types a synthetic entry is drawn from (METHOD.md §3's seven). */
export const SYNTHETIC_TYPES = ["Schema Linking", "Syntax", "Aggregation", "Filter/Value", "Execution", "Result Mismatch", "Unknown"];

/** What varies between the benchmarks: the words questions and SQL are made of, the source query id and the schema text. */
export interface SyntheticEntryOptions {
  words: readonly string[];
  queryId: (i: number) => string;
  schema: string;
}

/** Entry `i` (its stream position) of a synthetic memory; 70 % positive. */
export function syntheticEntry(rng: PyRandom, i: number, opts: SyntheticEntryOptions): MemoryEntry {
  const w = () => opts.words[rng.randbelow(opts.words.length)];
  const positive = rng.random() < 0.7;
  const delta = `SELECT ${w()} FROM ${w()} => SELECT ${w()}, ${w()} FROM ${w()} WHERE id = ${i}`;
  const errorType = SYNTHETIC_TYPES[rng.randbelow(SYNTHETIC_TYPES.length)];
  const base = {
    source_query_id: opts.queryId(i),
    source_db_id: `db${rng.randbelow(20)}`,
    source_episode_id: `episode-${i}`,
    source_stream_position: i,
    source_iteration: 1 + rng.randbelow(7),
    polarity: positive ? ("positive" as const) : ("negative" as const),
    provenance: { method_name: "merit", feedback_regime: "denotation_confirmed" as const, retrieved_entry_ids: [] },
    question: `How many ${w()} have ${w()} above the ${w()} ${w()}?`,
    schema: opts.schema,
    failure_context: `attempted_sql=SELECT ${w()} FROM ${w()}; status=${positive ? "EXECUTION_ERROR" : "DENOTATION_MISMATCH"}; db_error=(none)`,
    attempted_sql_delta: delta,
    successful_direction: positive ? `Observed successful transition: ${delta}` : "",
    observed_outcome: positive ? ("CORRECT" as const) : ("DENOTATION_MISMATCH" as const),
    observed_db_error: null,
  };
  return { ...base, entry_id: entryId(errorType, delta), error_type: errorType, applicability_scope: "global", confirmation_count: 1, success_count: positive ? 1 : 0, failure_count: positive ? 0 : 1, provenance_history: [observationOf(base)] };
}
