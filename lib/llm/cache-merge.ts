/**
 * `merit cache merge A B … --into C` (METHOD.md §6.6): unites call caches written by the shards of a
 * grid. Rows are content-addressed (key = hash of backend identity + request), so a row already in
 * the target is skipped; every source row is re-verified first (key, identity hash and row hash), and
 * a key present with a different output is a conflict that stops the merge before anything is
 * written (greedy outputs of one identity never differ, so it means a damaged or hand-edited file).
 * @module
 */
import { existsSync, rmSync } from "node:fs";
import { resolve } from "node:path";
import { InputFileError, MeritError } from "../errors.ts";
import { rowProblem } from "./cache-admin.ts";
import { openCacheDatabase } from "./call-cache.ts";

export interface MergeSummary {
  /** Rows read from each source, in argument order. */
  sources: Array<{ path: string; rows: number; added: number; duplicates: number }>;
  /** Rows in the target after the merge. */
  rows: number;
}

const COLUMNS = ["key", "identity_hash", "identity", "request", "text", "prompt_tokens", "output_tokens", "truncated_prompt_tokens", "created_at", "row_hash"] as const;

type Row = Record<(typeof COLUMNS)[number], string | number>;

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
    const summary: MergeSummary = { sources: [], rows: 0 };
    const merge = db.transaction(() => {
      for (const path of sources) {
        const src = openCacheDatabase(path, { readonly: true });
        try {
          const entry = { path, rows: 0, added: 0, duplicates: 0 };
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
          summary.sources.push(entry);
        } finally {
          src.close();
        }
      }
    });
    merge();
    summary.rows = (db.prepare("SELECT COUNT(*) AS n FROM calls").get() as { n: number }).n;
    ok = true;
    return summary;
  } finally {
    db.close();
    // A failed merge into a new file leaves no empty cache behind (an existing target is unchanged:
    // the transaction rolled back).
    if (!ok && created) for (const f of [target, `${target}-wal`, `${target}-shm`]) rmSync(f, { force: true });
  }
}
