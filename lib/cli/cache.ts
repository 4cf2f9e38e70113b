/**
 * `merit cache stats|verify|prune --cache FILE` (METHOD.md §6.6): inspect, check and trim a call-cache
 * SQLite file written by lib/llm/call-cache.ts — its LLM calls and the embedding cache's vectors
 * (lib/llm/embedding-cache.ts) it holds beside them.
 * @module
 */
import { existsSync } from "node:fs";
import { InputFileError, UsageError, nearestName } from "../errors.ts";
import { cacheStats, pruneCache, verifyCache } from "../llm/cache-admin.ts";
import { mergeCaches } from "../llm/cache-merge.ts";
import { numberFlag, parseFlags, required, type Command, type CommandIO } from "./command.ts";

const USAGE = `usage: merit cache stats --cache FILE
       merit cache verify --cache FILE
       merit cache prune --cache FILE [--keep-identity HASH] [--keep-embedder HASH] [--older-than DAYS]
       merit cache merge A.sqlite B.sqlite ... --into C.sqlite

The file holds LLM calls and, beside them, the embedding cache's vectors (one per embedder identity
and text, float32 bytes exactly as computed).
stats   rows per backend identity, then embedding rows per embedder identity (identity hash, kind,
        model, oldest/newest entry)
verify  re-hashes every row (call key = sha256 of backend identity + request, row hash over text and
        token counts; embedding key = sha256 of embedder identity + text, row hash over the vector
        bytes) and lists corrupt rows; exit code 1 when any is found
prune   deletes call rows whose identity hash differs from --keep-identity, embedding rows whose
        identity hash differs from --keep-embedder (see stats), and/or rows older than --older-than
        days
merge   unites the call caches of grid shards (merit grid --shard i/n) into --into (created when
        missing), call and embedding rows alike; every source row is verified first, rows already
        present are skipped, and a key with a different output or vector stops the merge with
        nothing written`;

const ACTIONS = ["stats", "verify", "prune", "merge"];

export const cacheCommand: Command = {
  name: "cache",
  summary: "stats, verify, prune or merge an LLM call-cache file (calls and embeddings)",
  usage: USAGE,
  async run(argv: string[], io: CommandIO): Promise<number> {
    const { values, positionals } = parseFlags(
      argv,
      { cache: { type: "string" }, into: { type: "string" }, "keep-identity": { type: "string" }, "keep-embedder": { type: "string" }, "older-than": { type: "string" } },
      USAGE,
      true,
    );
    const [action, ...extra] = positionals;
    if (action === "merge") return merge(extra, values, io);
    if (values.into !== undefined) throw new UsageError("--into applies to `merit cache merge` only");
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
    if (action === undefined || !ACTIONS.includes(action)) {
      const near = action === undefined ? undefined : nearestName(action, ACTIONS);
      throw new UsageError(`${action === undefined ? "missing action" : `unknown action "${action}"${near ? ` (did you mean "${near}"?)` : ""}`}: the actions are ${ACTIONS.join(", ")} (\`merit cache stats --cache FILE\`)`);
    }
    const file = required(values.cache, "cache", USAGE);
    if (!existsSync(file)) throw new InputFileError(file, "cache file not found", "pass the --cache file a run wrote (its manifest names it)");
    if (action !== "prune" && (values["keep-identity"] !== undefined || values["keep-embedder"] !== undefined || values["older-than"] !== undefined)) {
      throw new UsageError(`--keep-identity, --keep-embedder and --older-than apply to \`merit cache prune\` only`);
    }
    if (action === "stats") return stats(file, io);
    if (action === "verify") return verify(file, io);
    if (action === "prune") {
      const keep = values["keep-identity"];
      const keepEmbedder = values["keep-embedder"];
      const days = values["older-than"] === undefined ? undefined : numberFlag(values["older-than"], "older-than", 0);
      if (keep === undefined && keepEmbedder === undefined && days === undefined) throw new UsageError(`prune needs --keep-identity HASH, --keep-embedder HASH and/or --older-than DAYS`);
      const removed = pruneCache(file, { keepIdentityHash: keep, keepEmbedderHash: keepEmbedder, olderThanDays: days });
      io.out(`pruned ${removed} row(s) from ${file}`);
      return 0;
    }
    throw new UsageError(`unknown action "${action}"`);
  },
};

function merge(sources: string[], values: { cache?: string; into?: string }, io: CommandIO): number {
  const into = required(values.into, "into", USAGE);
  if (values.cache !== undefined) throw new UsageError(`merge takes its sources as arguments, not --cache: merit cache merge A.sqlite B.sqlite --into ${into}`);
  if (sources.length === 0) throw new UsageError(`merge needs at least one source cache file: merit cache merge A.sqlite B.sqlite --into ${into}`);
  const summary = mergeCaches(sources, into);
  const embedded = (e: { rows: number; added: number; duplicates: number }) => (e.rows === 0 ? "" : `; ${e.rows} embedding row(s), ${e.added} added, ${e.duplicates} already present`);
  for (const s of summary.sources) io.err(`${s.path}: ${s.rows} row(s), ${s.added} added, ${s.duplicates} already present${embedded(s.embeddings)}`);
  io.out(`merged ${summary.sources.length} cache(s) into ${into}: ${summary.rows} row(s)${summary.embeddingRows === 0 ? "" : `, ${summary.embeddingRows} embedding row(s)`}`);
  return 0;
}

function stats(file: string, io: CommandIO): number {
  const { rows, identities, embeddings } = cacheStats(file);
  for (const g of identities) io.out(`${g.identityHash}  ${g.rows} row(s)  ${g.kind}  ${g.model}  ${g.oldest} .. ${g.newest}`);
  io.out(`${rows} row(s), ${identities.length} backend identit${identities.length === 1 ? "y" : "ies"} in ${file}`);
  if (embeddings.rows > 0) {
    for (const g of embeddings.identities) io.out(`${g.identityHash}  ${g.rows} embedding row(s)  ${g.kind}  ${g.model}  ${g.oldest} .. ${g.newest}`);
    io.out(`${embeddings.rows} embedding row(s), ${embeddings.identities.length} embedder identit${embeddings.identities.length === 1 ? "y" : "ies"} in ${file}`);
  }
  return 0;
}

function verify(file: string, io: CommandIO): number {
  const { rows, embeddingRows, corrupt } = verifyCache(file);
  for (const c of corrupt) io.err(`corrupt ${c.table === "embeddings" ? "embedding " : ""}row ${c.key}: ${c.reason}`);
  io.out(`${rows} row(s)${embeddingRows === 0 ? "" : ` and ${embeddingRows} embedding row(s)`} checked, ${corrupt.length} corrupt in ${file}`);
  return corrupt.length === 0 ? 0 : 1;
}
