/**
 * The shared initial cache (METHOD.md §6.6, format `merit-initial-cache-v5`): attempt 0 of every
 * episode, built once — by one greedy call per query, or from a real predictions file — annotated by
 * the oracle, and reused unchanged by every method and stream order. Its `cache_hash` covers identity
 * and records, so an edited file is refused.
 * @module
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { DatasetNameSchema } from "../data/datasets/index.ts";
import type { Dataset } from "../data/types.ts";
import { InputFileError, MeritError } from "../errors.ts";
import { canonicalJson, contentHash, type JsonValue } from "../hash.ts";
import type { ChatBackend } from "../llm/types.ts";
import { extractSql, singleStatement } from "../oracle/extract-sql.ts";
import type { Oracle } from "../oracle/oracle.ts";
import type { PredictionsFile } from "../oracle/predictions.ts";
import { STATUSES } from "../oracle/types.ts";
import { initialPrompt, PROMPT_FORMAT_VERSION, promptHash, templateSetHash } from "../prompts.ts";
import { writeFileAtomic } from "../atomic-file.ts";

export const INITIAL_CACHE_FORMAT = "merit-initial-cache-v5" as const;

const StatusSchema = z.enum(STATUSES);

export const InitialRecordSchema = z
  .object({
    query_id: z.string(),
    db_id: z.string(),
    /** SHA-256 of the initial prompt; null when imported from a predictions file. */
    prompt_hash: z.string().nullable(),
    /** Canonical single statement, or "" (METHOD.md §2.7). */
    initial_sql: z.string(),
    /** Token counts from token ids; null = unknown (imported predictions). */
    prompt_tokens: z.number().int().nonnegative().nullable(),
    output_tokens: z.number().int().nonnegative().nullable(),
    execution_status: StatusSchema,
    /** null for NO_DATABASE / GOLD_ERROR examples (not part of any stream). */
    oracle_correct: z.boolean().nullable(),
    db_error: z.string().nullable(),
  })
  .strict();

export const InitialIdentitySchema = z
  .object({
    dataset_name: DatasetNameSchema,
    dataset_checksum: z.string(),
    database_manifest_hash: z.string(),
    model_name: z.string(),
    model_revision: z.string(),
    tokenizer_revision: z.string(),
    quantization: z.string(),
    prompt_format_version: z.string(),
    max_input_tokens: z.number().int().nullable(),
    max_output_tokens: z.number().int().nullable(),
    evaluation_protocol: z.string(),
    evaluation_protocol_hash: z.string(),
    decoding_protocol: z.string(),
    annotation_regime: z.literal("denotation_confirmed"),
  })
  .strict();

export const InitialCacheSchema = z
  .object({
    format_version: z.literal(INITIAL_CACHE_FORMAT),
    identity: InitialIdentitySchema,
    records: z.array(InitialRecordSchema),
    cache_hash: z.string(),
  })
  .strict();

export type InitialRecord = z.infer<typeof InitialRecordSchema>;
export type InitialIdentity = z.infer<typeof InitialIdentitySchema>;
export type InitialCache = z.infer<typeof InitialCacheSchema>;

function evaluationIdentity(oracle: Oracle) {
  return { evaluation_protocol: oracle.protocolId, evaluation_protocol_hash: contentHash({ protocol: oracle.protocolId, oracle_version: 1 }) };
}

/** Sorts records by the canonical JSON of [query_id, db_id] and seals the cache with its hash. */
function seal(identity: InitialIdentity, records: InitialRecord[]): InitialCache {
  const sorted = [...records].sort((a, b) => {
    const ka = canonicalJson([a.query_id, a.db_id]);
    const kb = canonicalJson([b.query_id, b.db_id]);
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });
  const body = { format_version: INITIAL_CACHE_FORMAT, identity, records: sorted };
  return { ...body, cache_hash: contentHash(body as unknown as JsonValue) };
}

async function annotate(dataset: Dataset, oracle: Oracle, sqls: string[], extra: (i: number) => Partial<InitialRecord>): Promise<InitialRecord[]> {
  let goldTimeouts = 0;
  const records = await Promise.all(
    dataset.examples.map(async (example, i) => {
      const verdict = await oracle.score(example, sqls[i], { rows: false });
      if (verdict.goldTimedOut) goldTimeouts += 1;
      return {
        query_id: example.id,
        db_id: example.dbId,
        prompt_hash: null,
        initial_sql: sqls[i],
        prompt_tokens: null,
        output_tokens: null,
        execution_status: verdict.status,
        oracle_correct: verdict.oracleCorrect,
        db_error: verdict.dbError,
        ...extra(i),
      };
    }),
  );
  // A gold that times out would leave its query out of every stream because of the deadline alone.
  if (goldTimeouts > 0) throw new MeritError(`${goldTimeouts} of ${dataset.examples.length} gold queries ran past the SQL deadline (sql_timeout_s in the config) while the initial cache was built, so their queries cannot be scored; raise sql_timeout_s (default 30 s) and build it again`);
  return records;
}

/** Builds the cache from a real predictions file (token counts unknown, recorded as null). */
export async function initialCacheFromPredictions(dataset: Dataset, predictions: PredictionsFile, oracle: Oracle): Promise<InitialCache> {
  const sqls = predictions.lines.map((line) => singleStatement(line));
  const name = predictions.path.split(/[\\/]/).pop() ?? predictions.path;
  const identity: InitialIdentity = {
    dataset_name: dataset.name,
    dataset_checksum: dataset.datasetChecksum,
    database_manifest_hash: dataset.databaseManifestHash,
    model_name: `predictions:${name}`,
    model_revision: predictions.sha256,
    tokenizer_revision: "unknown",
    quantization: "unknown",
    prompt_format_version: "unknown",
    max_input_tokens: null,
    max_output_tokens: null,
    ...evaluationIdentity(oracle),
    decoding_protocol: "imported-predictions-v1",
    annotation_regime: "denotation_confirmed",
  };
  return seal(identity, await annotate(dataset, oracle, sqls, () => ({})));
}

export interface ModelInitialOptions {
  maxOutputTokens: number;
  maxInputTokens: number;
  /** Called with (done, total) as generations finish. */
  onProgress?: (done: number, total: number) => void;
  /** The user's template folder (config `prompts_dir`); absent = the kit's prompts/. */
  promptsDir?: string;
}

/** Builds the cache with one greedy call per query (METHOD.md §6.6). */
export async function initialCacheFromModel(dataset: Dataset, backend: ChatBackend, oracle: Oracle, opts: ModelInitialOptions): Promise<InitialCache> {
  let done = 0;
  const generations = await Promise.all(
    dataset.examples.map(async (example) => {
      const prompt = initialPrompt({ dataset: dataset.name, schema: dataset.schemas.get(example.dbId) ?? "", question: example.question, evidence: example.evidence }, opts.promptsDir);
      const result = await backend.generate({ prompt, maxOutputTokens: opts.maxOutputTokens });
      opts.onProgress?.(++done, dataset.examples.length);
      return { prompt, result };
    }),
  );
  const sqls = generations.map((g) => extractSql(g.result.text));
  const id = backend.identity;
  const identity: InitialIdentity = {
    dataset_name: dataset.name,
    dataset_checksum: dataset.datasetChecksum,
    database_manifest_hash: dataset.databaseManifestHash,
    model_name: id.model,
    model_revision: id.modelHash,
    tokenizer_revision: id.modelHash,
    quantization: String(id.params.quantization ?? "gguf"),
    // A user's template folder is named by the hash of its templates (the kit's own: the version).
    prompt_format_version: opts.promptsDir === undefined ? PROMPT_FORMAT_VERSION : `${PROMPT_FORMAT_VERSION}+templates:${templateSetHash(opts.promptsDir)}`,
    max_input_tokens: opts.maxInputTokens,
    max_output_tokens: opts.maxOutputTokens,
    ...evaluationIdentity(oracle),
    decoding_protocol: "greedy-one-sql-v1",
    annotation_regime: "denotation_confirmed",
  };
  const records = await annotate(dataset, oracle, sqls, (i) => ({
    prompt_hash: promptHash(generations[i].prompt),
    prompt_tokens: generations[i].result.promptTokens,
    output_tokens: generations[i].result.outputTokens,
  }));
  return seal(identity, records);
}

/** Writes the cache atomically as canonical JSON (byte-stable for the same inputs). */
export function writeInitialCache(path: string, cache: InitialCache): void {
  writeFileAtomic(path, canonicalJson(cache as unknown as JsonValue) + "\n");
}

/**
 * Reads and verifies a cache; refuses edited files, caches built for other data and, when
 * `evaluationProtocol` is given, caches labelled by another oracle protocol.
 */
export function readInitialCache(path: string, dataset?: Dataset, evaluationProtocol?: string): InitialCache {
  const fix = "rebuild it with `merit initial`";
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new InputFileError(path, code === "ENOENT" ? "initial cache not found" : `initial cache is not valid JSON (${(error as Error).message})`, fix, error);
  }
  const parsed = InitialCacheSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InputFileError(path, `not a ${INITIAL_CACHE_FORMAT} file (${issue.path.join(".")}: ${issue.message})`, fix);
  }
  const cache = parsed.data;
  const { cache_hash, ...body } = cache;
  if (contentHash(body as unknown as JsonValue) !== cache_hash) throw new InputFileError(path, "cache_hash does not match the content (the file was edited or truncated)", fix);
  if (dataset) {
    const id = cache.identity;
    const mismatch =
      id.dataset_name !== dataset.name ? `dataset ${id.dataset_name} ≠ ${dataset.name}` :
      id.dataset_checksum !== dataset.datasetChecksum ? "dataset checksum differs (dev.json or tables file changed)" :
      id.database_manifest_hash !== dataset.databaseManifestHash ? "database manifest differs (databases added, removed or changed)" : null;
    if (mismatch) throw new InputFileError(path, `initial cache was built for other data: ${mismatch}`, fix);
  }
  if (evaluationProtocol !== undefined && cache.identity.evaluation_protocol !== evaluationProtocol) {
    throw new InputFileError(path, `initial cache was labelled by oracle protocol ${cache.identity.evaluation_protocol} but this run scores with ${evaluationProtocol}`, `${fix} using the run's config (protocol)`);
  }
  return cache;
}
