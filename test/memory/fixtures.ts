// Test-only helpers for memory and retrieval suites: a deterministic fake Embedder and a valid-entry builder.
import { createHash } from "node:crypto";
import type { Embedder } from "../../lib/llm/types.ts";
import { observationOf, type MemoryEntry, type Polarity } from "../../lib/memory/entry.ts";
import { entryId } from "../../lib/memory/identity.ts";
import { InMemoryMemoryStore } from "../../lib/memory/in-memory-store.ts";
import { contentHash } from "../../lib/hash.ts";

/** Hashed bag-of-words embedder: each [a-z0-9_]+ token adds 1 to bucket sha256(token) mod dim; L2-normalised. */
export class HashedBagEmbedder implements Embedder {
  readonly identity = { kind: "test-hashed-bag", model: "hashed-bag", modelHash: "none", params: {} };
  readonly dimension: number;
  calls = 0;
  texts: string[] = [];
  constructor(dimension = 64) {
    this.dimension = dimension;
  }
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    this.calls += 1;
    this.texts.push(...texts);
    return texts.map((text) => {
      const v = new Float32Array(this.dimension);
      for (const token of text.toLowerCase().match(/[a-z0-9_]+/g) ?? []) {
        v[createHash("sha256").update(token).digest().readUInt32BE(0) % this.dimension] += 1;
      }
      if (v.every((x) => x === 0)) v[0] = 1;
      const norm = Math.hypot(...v);
      return v.map((x) => x / norm);
    });
  }
  async close(): Promise<void> {}
}

/** Embedder whose vector for a text is chosen by the test (`pick` sees the text). */
export class ScriptedEmbedder implements Embedder {
  readonly identity = { kind: "test-scripted", model: "scripted", modelHash: "none", params: {} };
  readonly dimension: number;
  calls = 0;
  readonly pick: (text: string) => number[];
  constructor(dimension: number, pick: (text: string) => number[]) {
    this.pick = pick;
    this.dimension = dimension;
  }
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    this.calls += 1;
    return texts.map((t) => Float32Array.from(this.pick(t)));
  }
  async close(): Promise<void> {}
}

export interface EntrySpec {
  polarity?: Polarity;
  errorType?: string;
  delta?: string;
  queryId?: string;
  dbId?: string;
  position?: number;
  question?: string;
  episode?: string;
  scope?: MemoryEntry["applicability_scope"];
  dbError?: string | null;
}

/** A valid single-observation entry (entry_id computed from error type and delta). */
export function makeEntry(spec: EntrySpec = {}): MemoryEntry {
  const polarity = spec.polarity ?? "positive";
  const delta = spec.delta ?? "SELECT a FROM t => SELECT b FROM t";
  const errorType = spec.errorType ?? "Schema Linking";
  const positive = polarity === "positive";
  const queryId = spec.queryId ?? "q1";
  const position = spec.position ?? 0;
  const base = {
    source_query_id: queryId,
    source_db_id: spec.dbId ?? "db1",
    source_episode_id: spec.episode ?? contentHash(["test", "merit", 0, position, queryId]),
    source_stream_position: position,
    source_iteration: 1,
    polarity,
    provenance: { method_name: "merit", feedback_regime: "denotation_confirmed" as const, retrieved_entry_ids: [] },
    question: spec.question ?? "How many singers are there?",
    schema: "Database: db1\n\nTable: t\n  - a (text)",
    failure_context: `attempted_sql=SELECT a FROM t; status=EXECUTION_ERROR; db_error=${spec.dbError ?? "no such column: a"}`,
    attempted_sql_delta: delta,
    successful_direction: positive ? `Observed successful transition: ${delta}` : "",
    observed_outcome: positive ? ("CORRECT" as const) : ("EXECUTION_ERROR" as const),
    observed_db_error: positive ? null : spec.dbError === undefined ? "no such column: b" : spec.dbError,
  };
  return {
    ...base,
    entry_id: entryId(errorType, delta),
    error_type: errorType,
    applicability_scope: spec.scope ?? "global",
    confirmation_count: 1,
    success_count: positive ? 1 : 0,
    failure_count: positive ? 0 : 1,
    provenance_history: [observationOf(base)],
  };
}

let storeCounter = 0;

/**
 * An in-memory store of 4-dimensional entries, one per spec, each from its own source query
 * (`src<k>`, stream position k mod 50 unless given, delta `SELECT k => SELECT 0`), embedded by
 * `embedder`; k counts on across calls within one test file.
 */
export async function storeOf(specs: EntrySpec[], embedder: Embedder): Promise<InMemoryMemoryStore> {
  const store = new InMemoryMemoryStore(4);
  for (const spec of specs) {
    storeCounter += 1;
    await store.insert(makeEntry({ queryId: `src${storeCounter}`, position: spec.position ?? storeCounter % 50, delta: `SELECT ${storeCounter} => SELECT 0`, ...spec }), embedder);
  }
  return store;
}
