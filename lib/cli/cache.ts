/**
 * `merit cache stats|verify|prune --cache FILE` (METHOD.md §6.6): inspect, check and trim a call-cache
 * SQLite file written by lib/llm/call-cache.ts.
 * @module
 */
import { existsSync } from "node:fs";
import { InputFileError, UsageError, nearestName } from "../errors.ts";
import { cacheStats, pruneCache, verifyCache } from "../llm/cache-admin.ts";
import { mergeCaches } from "../llm/cache-merge.ts";
import { numberFlag, parseFlags, required, type Command, type CommandIO } from "./command.ts";

const USAGE = `usage: merit cache stats --cache FILE
       merit cache verify --cache FILE
       merit cache prune --cache FILE [--keep-identity HASH] [--older-than DAYS]
       merit cache merge A.sqlite B.sqlite ... --into C.sqlite

stats   rows per backend identity (identity hash, kind, model, oldest/newest entry)
verify  re-hashes every row (key = sha256 of backend identity + request; row hash over text and
        token counts) and lists corrupt rows; exit code 1 when any is found
prune   deletes rows whose identity hash differs from --keep-identity (see stats) and/or rows
        older than --older-than days
merge   unites the call caches of grid shards (merit grid --shard i/n) into --into (created when
        missing); every source row is verified first, rows already present are skipped, and a key
        with a different output stops the merge with nothing written`;

const ACTIONS = ["stats", "verify", "prune", "merge"];

export const cacheCommand: Command = {
  name: "cache",
  summary: "stats, verify or prune an LLM call-cache file",
  usage: USAGE,
  async run(argv: string[], io: CommandIO): Promise<number> {
    const { values, positionals } = parseFlags(
      argv,
      { cache: { type: "string" }, into: { type: "string" }, "keep-identity": { type: "string" }, "older-than": { type: "string" } },
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
    if (action !== "prune" && (values["keep-identity"] !== undefined || values["older-than"] !== undefined)) {
      throw new UsageError(`--keep-identity and --older-than apply to \`merit cache prune\` only`);
    }
    if (action === "stats") return stats(file, io);
    if (action === "verify") return verify(file, io);
    if (action === "prune") {
      const keep = values["keep-identity"];
      const days = values["older-than"] === undefined ? undefined : numberFlag(values["older-than"], "older-than", 0);
      if (keep === undefined && days === undefined) throw new UsageError(`prune needs --keep-identity HASH and/or --older-than DAYS`);
      const removed = pruneCache(file, { keepIdentityHash: keep, olderThanDays: days });
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
  for (const s of summary.sources) io.err(`${s.path}: ${s.rows} row(s), ${s.added} added, ${s.duplicates} already present`);
  io.out(`merged ${summary.sources.length} cache(s) into ${into}: ${summary.rows} row(s)`);
  return 0;
}

function stats(file: string, io: CommandIO): number {
  const { rows, identities } = cacheStats(file);
  for (const g of identities) io.out(`${g.identityHash}  ${g.rows} row(s)  ${g.kind}  ${g.model}  ${g.oldest} .. ${g.newest}`);
  io.out(`${rows} row(s), ${identities.length} backend identit${identities.length === 1 ? "y" : "ies"} in ${file}`);
  return 0;
}

function verify(file: string, io: CommandIO): number {
  const { rows, corrupt } = verifyCache(file);
  for (const c of corrupt) io.err(`corrupt row ${c.key}: ${c.reason}`);
  io.out(`${rows} row(s) checked, ${corrupt.length} corrupt in ${file}`);
  return corrupt.length === 0 ? 0 : 1;
}
