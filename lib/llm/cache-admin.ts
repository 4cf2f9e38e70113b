/**
 * Maintenance of a call-cache file (METHOD.md §6.6; `merit cache stats|verify|prune`): per-identity
 * counts, re-hashing every row to find corrupt ones, and pruning by identity or age — of the LLM
 * calls (`calls`) and of the embedding cache's vectors (`embeddings`, lib/llm/embedding-cache.ts)
 * the same file holds. A file written before the embedding cache existed has no `embeddings` table:
 * it counts as none.
 * @module
 */
import type Database from "better-sqlite3";
import { contentHash, type JsonValue } from "../hash.ts";
import { hasEmbeddingsTable, openCacheDatabase, rowHash } from "./call-cache.ts";
import { embeddingRowProblem } from "./embedding-cache.ts";

/** Rows of one backend identity. */
export interface IdentitySummary {
  identityHash: string;
  kind: string;
  model: string;
  rows: number;
  oldest: string;
  newest: string;
}

/** A row whose stored hashes do not match its content (`table`: calls or embeddings). */
export interface CorruptRow {
  key: string;
  reason: string;
  table: "calls" | "embeddings";
}

/** Rows per identity of one table, most rows first. */
function identitySummaries(db: Database.Database, table: "calls" | "embeddings"): IdentitySummary[] {
  const groups = db
    .prepare(`SELECT identity_hash, identity, COUNT(*) AS n, MIN(created_at) AS oldest, MAX(created_at) AS newest FROM ${table} GROUP BY identity_hash ORDER BY n DESC, identity_hash`)
    .all() as Array<{ identity_hash: string; identity: string; n: number; oldest: string; newest: string }>;
  return groups.map((g) => {
    const parsed = safeParse(g.identity) as { kind?: string; model?: string } | undefined;
    return { identityHash: g.identity_hash, kind: parsed?.kind ?? "?", model: parsed?.model ?? "?", rows: g.n, oldest: g.oldest, newest: g.newest };
  });
}

/** Call rows per backend identity and embedding rows per embedder identity, most rows first. */
export function cacheStats(path: string): { rows: number; identities: IdentitySummary[]; embeddings: { rows: number; identities: IdentitySummary[] } } {
  const db = openCacheDatabase(path, { readonly: true });
  try {
    const identities = identitySummaries(db, "calls");
    const embedders = hasEmbeddingsTable(db) ? identitySummaries(db, "embeddings") : [];
    const total = (groups: IdentitySummary[]) => groups.reduce((s, g) => s + g.rows, 0);
    return { rows: total(identities), identities, embeddings: { rows: total(embedders), identities: embedders } };
  } finally {
    db.close();
  }
}

/**
 * Re-derives every call row's key, identity hash and row hash, and every embedding row's key,
 * identity hash, vector length and row hash; returns the rows that disagree.
 */
export function verifyCache(path: string): { rows: number; embeddingRows: number; corrupt: CorruptRow[] } {
  const db = openCacheDatabase(path, { readonly: true });
  try {
    const corrupt: CorruptRow[] = [];
    let rows = 0;
    const all = db.prepare("SELECT * FROM calls ORDER BY key").iterate() as Iterable<Record<string, unknown>>;
    for (const r of all) {
      rows++;
      const reason = rowProblem(r);
      if (reason) corrupt.push({ key: String(r.key), reason, table: "calls" });
    }
    let embeddingRows = 0;
    if (hasEmbeddingsTable(db)) {
      for (const r of db.prepare("SELECT * FROM embeddings ORDER BY key").iterate() as Iterable<Record<string, unknown>>) {
        embeddingRows++;
        const reason = embeddingRowProblem(r);
        if (reason) corrupt.push({ key: String(r.key), reason, table: "embeddings" });
      }
    }
    return { rows, embeddingRows, corrupt };
  } finally {
    db.close();
  }
}

/** Why a stored row fails verification (undefined when it is sound). */
export function rowProblem(r: Record<string, unknown>): string | undefined {
  const identity = safeParse(String(r.identity));
  const request = safeParse(String(r.request));
  if (identity === undefined) return "identity is not valid JSON";
  if (request === undefined) return "request is not valid JSON";
  if (contentHash(identity) !== r.identity_hash) return "identity_hash does not match the stored identity";
  if (contentHash({ backend: identity, request }) !== r.key) return "key does not match identity + request";
  for (const column of ["prompt_tokens", "output_tokens", "truncated_prompt_tokens"]) {
    const n = r[column];
    if (typeof n !== "number" || !Number.isInteger(n) || n < 0) return `${column} is not a non-negative integer`;
  }
  if (typeof r.text !== "string") return "text is not a string";
  const expected = rowHash({
    key: String(r.key),
    text: r.text,
    promptTokens: r.prompt_tokens as number,
    outputTokens: r.output_tokens as number,
    truncatedPromptTokens: r.truncated_prompt_tokens as number,
  });
  return expected === r.row_hash ? undefined : "row_hash does not match text and token counts";
}

/**
 * Deletes call rows of other backend identities (`keepIdentityHash`), embedding rows of other
 * embedder identities (`keepEmbedderHash`), and/or rows of either table older than `olderThanDays`;
 * returns the count removed.
 */
export function pruneCache(path: string, opts: { keepIdentityHash?: string; keepEmbedderHash?: string; olderThanDays?: number; now?: Date }): number {
  const db = openCacheDatabase(path);
  try {
    let removed = 0;
    if (opts.keepIdentityHash !== undefined) {
      removed += db.prepare("DELETE FROM calls WHERE identity_hash <> ?").run(opts.keepIdentityHash).changes;
    }
    if (opts.keepEmbedderHash !== undefined) {
      removed += db.prepare("DELETE FROM embeddings WHERE identity_hash <> ?").run(opts.keepEmbedderHash).changes;
    }
    if (opts.olderThanDays !== undefined) {
      const cutoff = new Date((opts.now ?? new Date()).getTime() - opts.olderThanDays * 86_400_000).toISOString();
      removed += db.prepare("DELETE FROM calls WHERE created_at < ?").run(cutoff).changes;
      removed += db.prepare("DELETE FROM embeddings WHERE created_at < ?").run(cutoff).changes;
    }
    return removed;
  } finally {
    db.close();
  }
}

function safeParse(text: string): JsonValue | undefined {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}
