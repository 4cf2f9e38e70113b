/**
 * Maintenance of a call-cache file (METHOD.md §6.6; `merit cache stats|verify|prune`): per-identity
 * counts, re-hashing every row to find corrupt ones, and pruning by backend identity or age.
 * @module
 */
import { contentHash, type JsonValue } from "../hash.ts";
import { openCacheDatabase, rowHash } from "./call-cache.ts";

/** Rows of one backend identity. */
export interface IdentitySummary {
  identityHash: string;
  kind: string;
  model: string;
  rows: number;
  oldest: string;
  newest: string;
}

/** A row whose stored hashes do not match its content. */
export interface CorruptRow {
  key: string;
  reason: string;
}

/** Rows per backend identity, most rows first. */
export function cacheStats(path: string): { rows: number; identities: IdentitySummary[] } {
  const db = openCacheDatabase(path, { readonly: true });
  try {
    const groups = db
      .prepare("SELECT identity_hash, identity, COUNT(*) AS n, MIN(created_at) AS oldest, MAX(created_at) AS newest FROM calls GROUP BY identity_hash ORDER BY n DESC, identity_hash")
      .all() as Array<{ identity_hash: string; identity: string; n: number; oldest: string; newest: string }>;
    const identities = groups.map((g) => {
      const parsed = safeParse(g.identity) as { kind?: string; model?: string } | undefined;
      return { identityHash: g.identity_hash, kind: parsed?.kind ?? "?", model: parsed?.model ?? "?", rows: g.n, oldest: g.oldest, newest: g.newest };
    });
    return { rows: identities.reduce((s, g) => s + g.rows, 0), identities };
  } finally {
    db.close();
  }
}

/** Re-derives every row's key, identity hash and row hash; returns the rows that disagree. */
export function verifyCache(path: string): { rows: number; corrupt: CorruptRow[] } {
  const db = openCacheDatabase(path, { readonly: true });
  try {
    const corrupt: CorruptRow[] = [];
    let rows = 0;
    const all = db.prepare("SELECT * FROM calls ORDER BY key").iterate() as Iterable<Record<string, unknown>>;
    for (const r of all) {
      rows++;
      const reason = rowProblem(r);
      if (reason) corrupt.push({ key: String(r.key), reason });
    }
    return { rows, corrupt };
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

/** Deletes rows of other identities (`keepIdentityHash`) and/or older than `olderThanDays`; returns the count removed. */
export function pruneCache(path: string, opts: { keepIdentityHash?: string; olderThanDays?: number; now?: Date }): number {
  const db = openCacheDatabase(path);
  try {
    let removed = 0;
    if (opts.keepIdentityHash !== undefined) {
      removed += db.prepare("DELETE FROM calls WHERE identity_hash <> ?").run(opts.keepIdentityHash).changes;
    }
    if (opts.olderThanDays !== undefined) {
      const cutoff = new Date((opts.now ?? new Date()).getTime() - opts.olderThanDays * 86_400_000).toISOString();
      removed += db.prepare("DELETE FROM calls WHERE created_at < ?").run(cutoff).changes;
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
