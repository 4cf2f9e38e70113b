/**
 * Data loading, examples (METHOD.md §1.2): validates a dataset's records and maps them onto `Example`
 * (ids, stripped fields, evidence, difficulty, gold SQL) through the keys its adapter names
 * (lib/data/adapter.ts `RecordFields`), collecting invalid records with reasons.
 * @module
 */
import { z } from "zod";
import { InputFileError } from "../errors.ts";
import { datasetAdapter } from "./datasets/index.ts";
import type { DatasetName, Example } from "./types.ts";

/** The fields the kit reads from one record; other keys (`query_toks`, `sql`, …) pass through. */
const RecordSchema = z
  .object({
    /** BIRD only; Spider ids are source indices. */
    question_id: z.union([z.number(), z.string()]).nullable().optional(),
    db_id: z.string().optional(),
    question: z.string().optional(),
    evidence: z.string().nullable().optional(),
    /** Spider gold SQL. */
    query: z.string().optional(),
    /** BIRD gold SQL. */
    SQL: z.string().optional(),
    difficulty: z.string().nullable().optional(),
    hardness: z.string().nullable().optional(),
  })
  .passthrough();

/** A record that cannot become an Example, and why. */
export interface InvalidExample {
  sourceIndex: number;
  reason: string;
}

/** All records of one file: the valid ones in source order, and the invalid ones with reasons. */
export interface ParsedExamples {
  examples: Example[];
  invalid: InvalidExample[];
}

/** The record schema of a dataset: the common fields, plus its own keys (all optional strings). */
function recordSchema(dataset: DatasetName) {
  const own: Record<string, z.ZodTypeAny> = {};
  for (const key of ownKeys(dataset)) own[key] = z.string().nullable().optional();
  return Object.keys(own).length === 0 ? RecordSchema : RecordSchema.extend(own);
}

/** The adapter's record keys that RecordSchema does not name (each an optional, nullable string). */
function ownKeys(dataset: DatasetName): string[] {
  const { question, gold, evidence, difficulty } = datasetAdapter(dataset).record;
  return [question, gold, difficulty, evidence].filter((key): key is string => key !== undefined && !(key in RecordSchema.shape));
}

const optional = (v: unknown, ok: (x: unknown) => boolean): boolean => v === undefined || ok(v);
const isString = (v: unknown): boolean => typeof v === "string";
const isStringOrNull = (v: unknown): boolean => v === null || typeof v === "string";

/**
 * Whether `recordSchema(dataset)` accepts `raw` (a JSON value), checked by hand: ≈ 1 µs a record against
 * the schema's ≈ 30 µs. An accepted record is used as it is (the schema passes every key through and
 * transforms none); a refused one goes through the schema, whose first issue is the reason recorded.
 */
function plainlyValid(raw: unknown, own: readonly string[]): raw is Record<string, unknown> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return false;
  const r = raw as Record<string, unknown>;
  return (
    optional(r.question_id, (v) => v === null || typeof v === "number" || typeof v === "string") &&
    optional(r.db_id, isString) &&
    optional(r.question, isString) &&
    optional(r.evidence, isStringOrNull) &&
    optional(r.query, isString) &&
    optional(r.SQL, isString) &&
    optional(r.difficulty, isStringOrNull) &&
    optional(r.hardness, isStringOrNull) &&
    own.every((key) => optional(r[key], isStringOrNull))
  );
}

/** A record field as text ("" when absent or null). */
function text(record: Record<string, unknown>, key: string | undefined): string {
  const value = key === undefined ? undefined : record[key];
  return typeof value === "string" ? value : "";
}

/**
 * Maps parsed JSON onto Examples. A non-array document throws; a record with a missing or empty
 * db_id/question/gold SQL, or a field of the wrong type, is collected in `invalid`; a duplicate id
 * throws (ids are the join key of every later stage).
 */
export function parseExamples(document: unknown, dataset: DatasetName, file: string): ParsedExamples {
  if (!Array.isArray(document)) {
    throw new InputFileError(file, `expected a JSON list of examples, found ${document === null ? "null" : typeof document}`, `point the loader at the ${dataset} dev.json file`);
  }
  const fields = datasetAdapter(dataset).record;
  const own = ownKeys(dataset);
  let schema: ReturnType<typeof recordSchema> | undefined; // built on the first record the quick check refuses
  const examples: Example[] = [];
  const invalid: InvalidExample[] = [];
  const firstIndexById = new Map<string, number>();
  document.forEach((raw, sourceIndex) => {
    let record: z.infer<typeof RecordSchema> & Record<string, unknown>;
    if (plainlyValid(raw, own)) record = raw as typeof record;
    else {
      const parsed = (schema ??= recordSchema(dataset)).safeParse(raw);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        invalid.push({ sourceIndex, reason: `${issue.path.join(".") || "record"}: ${issue.message}` });
        return;
      }
      record = parsed.data as z.infer<typeof RecordSchema> & Record<string, unknown>;
    }
    const id = record.question_id === undefined || record.question_id === null ? String(sourceIndex) : String(record.question_id);
    const earlier = firstIndexById.get(id);
    if (earlier !== undefined) {
      throw new InputFileError(file, `duplicate example id "${id}" at source indices ${earlier} and ${sourceIndex}`, "ids must be unique (question_id for BIRD, list position for Spider); remove or renumber the duplicate");
    }
    firstIndexById.set(id, sourceIndex);

    const goldKey = fields.gold;
    const dbId = (record.db_id ?? "").trim();
    const question = text(record, fields.question).trim();
    const goldSql = text(record, goldKey).trim();
    const missing = [dbId ? undefined : "db_id", question ? undefined : fields.question, goldSql ? undefined : goldKey].filter((x) => x !== undefined);
    if (missing.length > 0) {
      invalid.push({ sourceIndex, reason: `missing or empty ${missing.join(", ")}` });
      return;
    }
    const difficultyRaw = text(record, fields.difficulty);
    examples.push({
      id,
      sourceIndex,
      dbId,
      question,
      evidence: text(record, fields.evidence).trim(),
      goldSql,
      difficulty: difficultyRaw.trim() || "unknown",
    });
  });
  return { examples, invalid };
}

/** Throws an InputFileError listing the first few invalid records (the runner refuses any invalid example). */
export function assertAllValid(parsed: ParsedExamples, file: string, shown = 3): Example[] {
  if (parsed.invalid.length === 0) return parsed.examples;
  const first = parsed.invalid
    .slice(0, shown)
    .map((x) => `index ${x.sourceIndex}: ${x.reason}`)
    .join("; ");
  const more = parsed.invalid.length > shown ? `; and ${parsed.invalid.length - shown} more` : "";
  throw new InputFileError(file, `${parsed.invalid.length} invalid example(s) (${first}${more})`, "fix or remove those records; every example needs a non-empty db_id, question and gold SQL");
}
