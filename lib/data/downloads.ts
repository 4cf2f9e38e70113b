/**
 * Data acquisition (METHOD.md §1.1): the zod schema of `data/downloads.json`, the list of official
 * archives (URL, file name, pinned size and sha256 or null, archive layout, what to install where, and
 * how to verify the contents of an archive whose hash no publisher states).
 * @module
 */
import { z } from "zod";
import { InputFileError, nearestName } from "../errors.ts";
import { DatasetNameSchema } from "./datasets/index.ts";
import { readJsonFile } from "./json-file.ts";

/** A relative path that cannot escape its base directory. */
const RelativePath = z
  .string()
  .min(1)
  .refine((p) => !p.startsWith("/") && !p.split(/[\\/]/).includes(".."), "must be a relative path without `..`");

/** One downloadable archive. */
export const ArchiveEntrySchema = z
  .object({
    /** Human page that links the archive (where to fetch it by hand). */
    page: z.string().url(),
    url: z.string().url(),
    /** File name under `<dir>/_downloads/`. */
    file: RelativePath,
    /** Pinned SHA-256 hex, or null while no publisher states it (then `verify_contents` or the lock file decides). */
    sha256: z.string().regex(/^[0-9a-f]{64}$/, "must be 64 lower-case hex digits").nullable(),
    /** Pinned size in bytes (checked before hashing), or null. */
    bytes: z.number().int().positive().nullable().optional(),
    /** Top-level folder inside the archive that holds the release files. */
    archive_root: RelativePath,
    /** Zip files inside `archive_root` that must be unzipped in place (BIRD's dev_databases.zip). */
    nested_archives: z.array(RelativePath).default([]),
    /** Files or folders under `archive_root` to move into `<dir>/<extract_to>/`. */
    install: z.array(RelativePath).min(1),
    extract_to: RelativePath,
    /** Unzip only the `install` items (a 4.8 GB archive of which dev needs a part). */
    extract_only_install: z.boolean().optional(),
    /** The installed database root under the data directory, whose tree hash the lock file records. */
    databases: RelativePath.optional(),
    /**
     * For an archive without a published hash: checks of the extracted release before it is trusted
     * (files whose bytes must equal the bundled copies, and a dataset whose every gold query must
     * execute); on success the archive's hash is recorded in downloads.lock.json on first use.
     */
    verify_contents: z
      .object({
        /** Paths under `archive_root` → sha256 of the bundled copy (data/PROVENANCE.md). */
        same_as_bundled: z.record(RelativePath, z.string().regex(/^[0-9a-f]{64}$/)).default({}),
        /** Load the staged release as this dataset and execute every gold query. */
        gold_executes: DatasetNameSchema.optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

export type ArchiveEntry = z.infer<typeof ArchiveEntrySchema>;

const DownloadsSchema = z.object({ $comment: z.string().optional() }).catchall(ArchiveEntrySchema);

/** Reads the downloads manifest and returns the entry for `name` (unknown names get a "did you mean"). */
export function readArchiveEntry(file: string, name: string): ArchiveEntry {
  const { value } = readJsonFile(file, "restore data/downloads.json from the repository");
  const parsed = DownloadsSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InputFileError(file, `${issue.path.join(".")}: ${issue.message}`, "fix that field (see the $comment at the top of the file)");
  }
  const { $comment: _comment, ...entries } = parsed.data;
  const entry = entries[name] as ArchiveEntry | undefined;
  if (entry === undefined) {
    const known = Object.keys(entries);
    const near = nearestName(name, known);
    throw new InputFileError(file, `no archive named "${name}"${near ? ` (did you mean "${near}"?)` : ""}`, `use one of: ${known.join(", ")}`);
  }
  return entry;
}
