/**
 * Data acquisition (METHOD.md §1.1): the zod schema of `data/downloads.json`, the list of official
 * archives (URL, file name, pinned sha256 or null, archive layout and what to install where).
 * @module
 */
import { z } from "zod";
import { InputFileError, nearestName } from "../errors.ts";
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
    /** Pinned SHA-256 hex, or null while nobody has verified it (then extraction is refused). */
    sha256: z.string().regex(/^[0-9a-f]{64}$/, "must be 64 lower-case hex digits").nullable(),
    /** Top-level folder inside the archive that holds the release files. */
    archive_root: RelativePath,
    /** Zip files inside `archive_root` that must be unzipped in place (BIRD's dev_databases.zip). */
    nested_archives: z.array(RelativePath).default([]),
    /** Files or folders under `archive_root` to move into `<dir>/<extract_to>/`. */
    install: z.array(RelativePath).min(1),
    extract_to: RelativePath,
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
