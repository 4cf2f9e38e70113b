/**
 * Pin files (`data/downloads.lock.json`, `models/models.lock.json`): a JSON object
 * `{ "$comment": …, "<section>": { "<name>": entry } }` validated by zod, read as a missing-is-empty
 * map and rewritten atomically one entry at a time, with sorted keys and no timestamps, so the file
 * is deterministic and can be committed to share the pins.
 * @module
 */
import { existsSync, readFileSync } from "node:fs";
import { z } from "zod";
import { InputFileError } from "./errors.ts";
import { canonicalJson, type JsonValue } from "./hash.ts";
import { writeFileAtomic } from "./atomic-file.ts";

/** One kind of pin file: the section holding its entries, their schema, its comment and the fixes its errors name. */
export interface LockFileKind<E> {
  section: string;
  entry: z.ZodType<E>;
  comment: string;
  /** Fix for a file that is not JSON. */
  notJsonFix: string;
  /** Fix for a file whose content fails the schema. */
  badEntryFix: string;
}

function schemaOf<E>(kind: LockFileKind<E>) {
  return z.object({ $comment: z.string().optional(), [kind.section]: z.record(z.string(), kind.entry) }).strict();
}

/** The entries of a pin file; a missing file is an empty lock. @throws InputFileError naming the bad field */
export function readLockFile<E>(file: string, kind: LockFileKind<E>): Record<string, E> {
  if (!existsSync(file)) return {};
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new InputFileError(file, `is not JSON (${(error as Error).message})`, kind.notJsonFix, error);
  }
  const parsed = schemaOf(kind).safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InputFileError(file, `${issue.path.join(".")}: ${issue.message}`, kind.badEntryFix);
  }
  return (parsed.data as Record<string, unknown>)[kind.section] as Record<string, E>;
}

/** Writes (replaces) one entry atomically, keeping the others; sorted keys, no timestamps. */
export function writeLockEntry<E>(file: string, kind: LockFileKind<E>, name: string, entry: E): void {
  const entries = { ...readLockFile(file, kind), [name]: kind.entry.parse(entry) };
  const body = { $comment: kind.comment, [kind.section]: entries } as unknown as JsonValue;
  writeFileAtomic(file, JSON.stringify(JSON.parse(canonicalJson(body)), null, 2) + "\n");
}
