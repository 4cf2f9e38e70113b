/**
 * `merit cache merge A B … --into C` (METHOD.md §6.6): unites call caches written by the shards of a
 * grid. Rows are content-addressed (key = hash of backend identity + request), so a row already in
 * the target is skipped; every source row is re-verified first (key, identity hash and row hash), and
 * a key present with a different output is a conflict that stops the merge before anything is
 * written (greedy outputs of one identity never differ, so it means a damaged or hand-edited file).
 * The embedding rows of the same files (lib/llm/embedding-cache.ts; key = hash of embedder identity
 * + text) are united in the same transaction by the same rules: verified first, skipped when present
 * with the same bytes, and a stored vector that differs for one key stops the merge with nothing
 * written. A source written before the embedding cache existed contributes no embedding rows.
 * @module
 */
import { existsSync, rmSync } from "node:fs";
import { resolve } from "node:path";
import { InputFileError, MeritError } from "../errors.ts";
import { rowProblem } from "./cache-admin.ts";
import { hasEmbeddingsTable, openCacheDatabase } from "./call-cache.ts";
import { embeddingRowProblem } from "./embedding-cache.ts";

/** Rows of one table read from one source. */
export interface TableMerge {
  rows: number;
  added: number;
  duplicates: number;
}

export interface MergeSummary {
  /** Call rows read from each source (and its embedding rows), in argument order. */
  sources: Array<{ path: string; embeddings: TableMerge } & TableMerge>;
  /** Call rows in the target after the merge. */
  rows: number;
  /** Embedding rows in the target after the merge. */
  embeddingRows: number;
}

const COLUMNS = ["key", "identity_hash", "identity", "request", "text", "prompt_tokens", "output_tokens", "truncated_prompt_tokens", "created_at", "row_hash"] as const;

type Row = Record<(typeof COLUMNS)[number], string | number>;

const EMBEDDING_COLUMNS = ["key", "identity_hash", "identity", "text", "dimension", "vector", "created_at", "row_hash"] as const;

type EmbeddingRow = Record<(typeof EMBEDDING_COLUMNS)[number], string | number | Buffer>;

/** Merges `sources` into `target` (created when missing) in one transaction. */
export function mergeCaches(sources: readonly string[], target: string): MergeSummary {
  const targetPath = resolve(target);
  for (const s of sources) {
    if (!existsSync(s)) throw new InputFileError(s, "call-cache file not found", "pass the call_cache files the shards wrote (each run's manifest names it)");
    if (resolve(s) === targetPath) throw new InputFileError(s, "is both a source and the --into target", "merge into a new file");
  }
  const created = !existsSync(target);
  const db = openCacheDatabase(target);
  let ok = false;
  try {
    const lookup = db.prepare("SELECT text, prompt_tokens, output_tokens, truncated_prompt_tokens FROM calls WHERE key = ?");
    const insert = db.prepare(`INSERT INTO calls (${COLUMNS.join(", ")}) VALUES (${COLUMNS.map(() => "?").join(", ")})`);
    const lookupVector = db.prepare("SELECT dimension, vector FROM embeddings WHERE key = ?");
    const insertVector = db.prepare(`INSERT INTO embeddings (${EMBEDDING_COLUMNS.join(", ")}) VALUES (${EMBEDDING_COLUMNS.map(() => "?").join(", ")})`);
    const summary: MergeSummary = { sources: [], rows: 0, embeddingRows: 0 };
    const merge = db.transaction(() => {
      for (const path of sources) {
        const src = openCacheDatabase(path, { readonly: true });
        try {
          const entry = { path, rows: 0, added: 0, duplicates: 0, embeddings: { rows: 0, added: 0, duplicates: 0 } };
          for (const row of src.prepare(`SELECT ${COLUMNS.join(", ")} FROM calls ORDER BY key`).iterate() as Iterable<Row>) {
            entry.rows++;
            const problem = rowProblem(row);
            if (problem) throw new InputFileError(path, `row ${String(row.key).slice(0, 16)}… is corrupt (${problem}); nothing was merged`, "run `merit cache verify` on it and prune or re-create the damaged rows");
            const existing = lookup.get(row.key) as Pick<Row, "text" | "prompt_tokens" | "output_tokens" | "truncated_prompt_tokens"> | undefined;
            if (existing) {
              if (existing.text !== row.text || existing.prompt_tokens !== row.prompt_tokens || existing.output_tokens !== row.output_tokens || existing.truncated_prompt_tokens !== row.truncated_prompt_tokens) {
                throw new MeritError(`${path}: call ${String(row.key).slice(0, 16)}… has a different output than the one already merged into ${target}; nothing was merged (run \`merit cache verify\` on every source)`);
              }
              entry.duplicates++;
              continue;
            }
            insert.run(...COLUMNS.map((c) => row[c]));
            entry.added++;
          }
          const vectors = hasEmbeddingsTable(src) ? (src.prepare(`SELECT ${EMBEDDING_COLUMNS.join(", ")} FROM embeddings ORDER BY key`).iterate() as Iterable<EmbeddingRow>) : [];
          for (const row of vectors) {
            entry.embeddings.rows++;
            const problem = embeddingRowProblem(row);
            if (problem) throw new InputFileError(path, `embedding row ${String(row.key).slice(0, 16)}… is corrupt (${problem}); nothing was merged`, "run `merit cache verify` on it and prune or re-create the damaged rows");
            const existing = lookupVector.get(row.key) as { dimension: number; vector: Buffer } | undefined;
            if (existing) {
              if (existing.dimension !== row.dimension || !existing.vector.equals(row.vector as Buffer)) {
                throw new MeritError(`${path}: embedding ${String(row.key).slice(0, 16)}… has a different vector than the one already merged into ${target}; nothing was merged (run \`merit cache verify\` on every source; one text under one embedder identity has one vector)`);
              }
              entry.embeddings.duplicates++;
              continue;
            }
            insertVector.run(...EMBEDDING_COLUMNS.map((c) => row[c]));
            entry.embeddings.added++;
          }
          summary.sources.push(entry);
        } finally {
          src.close();
        }
      }
    });
    merge();
    summary.rows = (db.prepare("SELECT COUNT(*) AS n FROM calls").get() as { n: number }).n;
    summary.embeddingRows = (db.prepare("SELECT COUNT(*) AS n FROM embeddings").get() as { n: number }).n;
    ok = true;
    return summary;
  } finally {
    db.close();
    // A failed merge into a new file leaves no empty cache behind (an existing target is unchanged:
    // the transaction rolled back).
    if (!ok && created) for (const f of [target, `${target}-wal`, `${target}-shm`]) rmSync(f, { force: true });
  }
}
