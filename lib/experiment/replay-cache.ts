/**
 * The demo's replay cache (README "Reproducibility"): the LLM call cache of the quick demo and the
 * notebooks (with the embedding cache's vectors in the same file) is committed as one small SQLite
 * file, so `make demo` and `make notebooks` replay every
 * model call exactly on any CPU (greedy llama.cpp output depends on the CPU's kernels; the cache
 * does not). The committed file is never opened by SQLite — opening a database read-write rewrites
 * it and WAL mode adds -wal/-shm files beside it — it is only copied: to the demo's working cache
 * under the git-ignored runs/ before a replay, and back (compacted, rollback journal) by
 * `merit demo --save-cache` after a fresh recompute.
 * @module
 */
import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { MeritError } from "../errors.ts";
import { openCacheDatabase } from "../llm/call-cache.ts";

/** The committed replay file of `make demo`'s model calls (the tiny models). */
export const REPLAY_CACHE = "results/demo-call-cache.sqlite";

/** The companion files SQLite may keep beside a database in WAL mode. */
const SIDECARS = ["-wal", "-shm", "-journal"];

function removeDatabase(path: string): void {
  for (const suffix of ["", ...SIDECARS]) rmSync(path + suffix, { force: true });
}

/** Rows in a call-cache file (0 when the file does not exist). Opens it read-only. */
export function cacheRows(path: string): number {
  if (!existsSync(path)) return 0;
  const db = openCacheDatabase(path, { readonly: true });
  try {
    return (db.prepare("SELECT count(*) AS n FROM calls").get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/**
 * Replaces the working cache with a byte copy of the committed replay file (its own -wal/-shm
 * removed first), so every stored call is answered from the committed outputs. Returns false when
 * there is no committed file (then the working cache is left as it is).
 */
export function stageReplayCache(committed: string, working: string): boolean {
  if (!existsSync(committed)) return false;
  mkdirSync(dirname(working), { recursive: true });
  removeDatabase(working);
  copyFileSync(committed, working);
  return true;
}

/**
 * Writes the working cache to the committed replay file: WAL checkpointed, VACUUM INTO a compact
 * copy, rollback journal mode (so a later read-only open needs no -wal/-shm), then renamed over the
 * committed file. Returns the number of rows written.
 */
export function saveReplayCache(working: string, committed: string): number {
  if (!existsSync(working)) throw new MeritError(`${working} does not exist; run \`merit demo --fresh\` (and \`make notebooks\`) first, then --save-cache`);
  mkdirSync(dirname(committed), { recursive: true });
  const tmp = `${committed}.tmp-${process.pid}`;
  removeDatabase(tmp);
  const db = openCacheDatabase(working);
  try {
    db.pragma("wal_checkpoint(TRUNCATE)");
    db.prepare("VACUUM INTO ?").run(tmp);
  } finally {
    db.close();
  }
  const out = openCacheDatabase(tmp);
  try {
    out.pragma("journal_mode = DELETE");
  } finally {
    out.close();
  }
  removeDatabase(committed);
  renameSync(tmp, committed);
  return cacheRows(committed);
}
