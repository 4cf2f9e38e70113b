/**
 * Model acquisition, pins (METHOD.md §6.4; `make models`): the hub's published LFS sha256 and size of
 * a model file at a revision (Hugging Face API `GET /api/models/{repo}/revision/{rev}?blobs=true`,
 * `siblings[].lfs.{sha256,size}`, `sha` = the commit), and `models/models.lock.json`, which records
 * the commit, size and sha256 a download was verified against so later downloads and
 * `merit models check` are checked against the same bytes. The hub base URL is `HF_ENDPOINT`
 * (as for the Hugging Face tools), default https://huggingface.co.
 * @module
 */
import { z } from "zod";
import { MeritError } from "../errors.ts";
import { readLockFile, writeLockEntry, type LockFileKind } from "../lock-file.ts";

/** The hub base URL without a trailing slash. */
export function hubEndpoint(env: NodeJS.ProcessEnv = process.env): string {
  return (env.HF_ENDPOINT || "https://huggingface.co").replace(/\/+$/, "");
}

/** `hf:owner/repo/path/file.gguf` → repo `owner/repo` and path; null for other URIs. */
export function parseHfUri(uri: string): { repo: string; path: string } | null {
  if (!uri.startsWith("hf:")) return null;
  const [owner, name, ...path] = uri.slice(3).split("/");
  return { repo: `${owner}/${name}`, path: path.join("/") };
}

/** What the hub publishes for one file: the commit the revision resolved to, the LFS size and sha256. */
export interface PublishedFile {
  revision: string;
  bytes: number;
  sha256: string;
}

const RevisionInfo = z.object({
  sha: z.string().regex(/^[0-9a-f]{40}$/),
  siblings: z.array(
    z.object({
      rfilename: z.string(),
      lfs: z.object({ sha256: z.string().regex(/^[0-9a-f]{64}$/), size: z.number().int().positive() }).nullish(),
    }).passthrough(),
  ),
}).passthrough();

/** Asks the hub for `path` of `repo` at `revision`. @throws MeritError (one line) when unreachable, unknown, or without an LFS hash */
export async function publishedFile(repo: string, path: string, revision: string, opts: { hub?: string; fetchImpl?: typeof fetch } = {}): Promise<PublishedFile> {
  const url = `${opts.hub ?? hubEndpoint()}/api/models/${repo}/revision/${encodeURIComponent(revision)}?blobs=true`;
  const where = `${repo}@${revision}`;
  let response: Response;
  try {
    response = await (opts.fetchImpl ?? fetch)(url, { headers: { accept: "application/json" } });
  } catch (error) {
    throw new MeritError(`cannot reach ${url} to look up the published sha256 of ${path} (${error instanceof Error ? error.message : String(error)}); on a machine without hub access copy the file into models/ and pin "sha256" and "bytes" in models/models.json by hand`, { cause: error });
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new MeritError(`${url} answered HTTP ${response.status}; check the uri and revision of ${path} in models/models.json (set HF_ENDPOINT for a hub mirror)`);
  }
  let info: z.infer<typeof RevisionInfo>;
  try {
    const parsed = RevisionInfo.safeParse(await response.json());
    if (!parsed.success) throw new Error(`${parsed.error.issues[0].path.join(".")}: ${parsed.error.issues[0].message}`);
    info = parsed.data;
  } catch (error) {
    throw new MeritError(`${url} did not answer the hub's revision format (${error instanceof Error ? error.message : String(error)}); check HF_ENDPOINT`);
  }
  const file = info.siblings.find((s) => s.rfilename === path);
  if (file === undefined) throw new MeritError(`the hub lists no file ${path} in ${where} (${info.siblings.length} files); check the uri in models/models.json`);
  if (!file.lfs) throw new MeritError(`the hub publishes no LFS sha256 for ${path} in ${where}; pin "sha256" and "bytes" in models/models.json by hand after checking the file`);
  return { revision: info.sha, bytes: file.lfs.size, sha256: file.lfs.sha256 };
}

const LockEntrySchema = z
  .object({
    uri: z.string(),
    file: z.string(),
    /** The commit the file was verified at (downloads resolve this commit, not a branch). */
    revision: z.string().min(1),
    bytes: z.number().int().positive(),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
  })
  .strict();

export type ModelLockEntry = z.infer<typeof LockEntrySchema>;

const KIND: LockFileKind<ModelLockEntry> = {
  section: "models",
  entry: LockEntrySchema,
  comment:
    "Written by `merit models download` (lib/llm/model-lock.ts): the commit, size and sha256 each model file was verified against (the hub's published LFS hash). Later downloads and `merit models check` verify against it. Commit this file to pin the models; delete an entry to re-pin that model.",
  notJsonFix: "restore it from git, or delete it to pin the models again from the hub",
  badEntryFix: "restore it from git, or delete the bad entry to pin that model again",
};

/** The entries of a lock file; a missing file is an empty lock. @throws InputFileError naming the bad field */
export function readModelLock(file: string): Record<string, ModelLockEntry> {
  return readLockFile(file, KIND);
}

/** Writes (replaces) one entry atomically, keeping the others; sorted keys, no timestamps. */
export function writeModelLockEntry(file: string, id: string, entry: ModelLockEntry): void {
  writeLockEntry(file, KIND, id, entry);
}
