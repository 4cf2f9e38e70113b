/**
 * Data acquisition (METHOD.md §1.1, §1.4): `downloads.lock.json` beside `downloads.json` records what
 * each install fetched — the archive's size and sha256 (for an archive no publisher pins, recorded on
 * first use after its contents were verified, so later downloads are checked against it) and the
 * database manifest hash of the installed tree (the value run manifests record as
 * `database_manifest_hash`). Deterministic: sorted keys, no timestamps.
 * @module
 */
import { z } from "zod";
import { readLockFile, writeLockEntry, type LockFileKind } from "../lock-file.ts";

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/);

export const LockEntrySchema = z
  .object({
    file: z.string(),
    bytes: z.number().int().positive(),
    sha256: Sha256,
    /** `data/downloads.json` (publisher's hash) or `first use` (contents verified, hash recorded here). */
    pinned_by: z.enum(["downloads.json", "first use"]),
    /** What the first-use verification found (absent for pinned archives). */
    contents: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
    /** The installed database tree (database root relative to the data directory). */
    installed_databases: z
      .object({ root: z.string(), databases: z.number().int().nonnegative(), files: z.number().int().nonnegative(), manifest_hash: z.string() })
      .strict()
      .optional(),
  })
  .strict();

export type LockEntry = z.infer<typeof LockEntrySchema>;

const KIND: LockFileKind<LockEntry> = {
  section: "archives",
  entry: LockEntrySchema,
  comment:
    "Written by `merit data download` (lib/data/download-lock.ts). sha256 of archives whose publisher states none is recorded here on first use, after their contents were verified; later downloads must match it. Commit this file to share the pin; delete an entry only to re-verify that archive from scratch.",
  notJsonFix: "restore it from git, or delete it to verify the archives again",
  badEntryFix: "restore it from git, or delete the bad entry to verify that archive again",
};

/** The entries of a lock file; a missing file is an empty lock. @throws InputFileError naming the bad field */
export function readDownloadLock(file: string): Record<string, LockEntry> {
  return readLockFile(file, KIND);
}

/** Writes (replaces) one entry atomically, keeping the others. */
export function writeDownloadLockEntry(file: string, name: string, entry: LockEntry): void {
  writeLockEntry(file, KIND, name, entry);
}
