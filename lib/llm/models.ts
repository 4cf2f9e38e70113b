/**
 * Model acquisition for the generation and embedding backends (METHOD.md §6.4; `make models`):
 * reads models/models.json, downloads a GGUF with HTTP Range resume and progress, and verifies its
 * size and SHA-256 before the file takes its final name. What it is verified against, in order: the
 * entry of models/models.lock.json (the commit, size and sha256 of an earlier verified download), a
 * sha256 pinned in models.json, or, for `hf:` URIs, the hub's published LFS sha256 and size at the
 * entry's revision (then the lock is written). A file already present and matching is a no-op. A
 * non-hub URI without a pinned sha256 is downloaded but NEVER reported verified.
 * @module
 */
import { createWriteStream, readFileSync } from "node:fs";
import { mkdir, rename, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { z } from "zod";
import { InputFileError, MeritError } from "../errors.ts";
import { sha256File } from "../file-hash.ts";
import { hubEndpoint, parseHfUri, publishedFile, readModelLock, writeModelLockEntry } from "./model-lock.ts";

const ModelEntry = z
  .object({
    role: z.enum(["chat", "embedding"]),
    /** `hf:<owner>/<repo>/<file>` or an http(s) URL. */
    uri: z.string().regex(/^(hf:[^/]+\/[^/]+\/.+|https?:\/\/.+)$/, "expected hf:owner/repo/file or an http(s) URL"),
    /** Hub revision (branch, tag or commit) whose published hash a first download is verified against; default main. */
    revision: z.string().min(1).optional(),
    /** File name under models/. */
    file: z.string().regex(/^[\w.+-]+\.gguf$/, "expected a plain *.gguf file name"),
    /** Exact size in bytes, or null when not known for certain. */
    bytes: z.number().int().positive().nullable(),
    /** Pinned SHA-256 (lower-case hex), or null when not known for certain. */
    sha256: z.string().regex(/^[0-9a-f]{64}$/).nullable(),
    /** Where the file is published and what it is. */
    source: z.string(),
    note: z.string().optional(),
  })
  .strict();

const Manifest = z.object({ $comment: z.string().optional(), models: z.record(z.string(), ModelEntry) }).strict();

export type ModelEntry = z.infer<typeof ModelEntry>;

/** What `ensureModel` did: `present` (already there and verified), `downloaded` (and verified), `unverified` (no hash to check). */
export interface EnsureResult {
  path: string;
  status: "present" | "downloaded" | "unverified";
  sha256: string;
  bytes: number;
}

/** How a verified file was checked (reported through `EnsureOptions.onVerified`). */
export interface VerifiedBy {
  /** What the bytes were checked against, e.g. `models/models.lock.json` or the hub's published hash. */
  source: string;
  /** The hub commit the file was verified at (or the configured revision). */
  revision: string;
  /** The lock entry was written by this call (first verified download of this model). */
  locked: boolean;
}

/** Downloaded or present bytes whose SHA-256 (or size) differs from what they are checked against. */
export class ModelHashMismatchError extends MeritError {
  readonly path: string;
  readonly expected: string;
  readonly actual: string;
  constructor(path: string, expected: string, actual: string, deleted: boolean, source = "models/models.json") {
    super(
      `${path}: ${/bytes$/.test(actual) ? "size" : "sha256"} ${actual} does not match ${source} (${expected}); ` +
        (deleted ? "the bad download was deleted, re-run `make models`" : "delete the file and re-run `make models`"),
    );
    this.name = "ModelHashMismatchError";
    this.path = path;
    this.expected = expected;
    this.actual = actual;
  }
}

/** Reads and validates a models.json. @throws InputFileError naming the bad field */
export function readModelManifest(path: string): Record<string, ModelEntry> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new InputFileError(path, `cannot read model manifest (${error instanceof Error ? error.message : String(error)})`, "restore models/models.json from git", error);
  }
  const parsed = Manifest.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InputFileError(path, `${issue.path.join(".")}: ${issue.message}`, "fix that field (see models/README.md)");
  }
  return parsed.data.models;
}

/** The download URL of a model URI (`hf:` → the hub's resolve URL at `revision`, default main). */
export function modelUrl(uri: string, revision = "main", hub = "https://huggingface.co"): string {
  const hf = parseHfUri(uri);
  if (hf === null) return uri;
  return `${hub}/${hf.repo}/resolve/${encodeURIComponent(revision)}/${hf.path}`;
}

export interface EnsureOptions {
  /** Directory holding the models (e.g. `models`). */
  dir: string;
  /** Called as bytes arrive: (bytes so far incl. a resumed prefix, total or undefined). */
  onProgress?: (received: number, total: number | undefined) => void;
  /** Injected for tests. */
  fetchImpl?: typeof fetch;
  /** The model's id and lock file (models/models.lock.json): checked first, written after a verified hub download. */
  lock?: { id: string; file: string };
  /** Hub base URL (default: HF_ENDPOINT or https://huggingface.co). */
  hub?: string;
  /** Called once the bytes are verified. */
  onVerified?: (how: VerifiedBy) => void;
}

/** What a file is checked against, and where that came from. */
interface Expected {
  sha256: string | null;
  bytes: number | null;
  revision: string;
  source: string;
}

/** Makes `<dir>/<entry.file>` present and checked, downloading it if absent; nothing unverified ever takes the final name unless no hash exists at all. */
export async function ensureModel(entry: ModelEntry, opts: EnsureOptions): Promise<EnsureResult> {
  const target = join(opts.dir, entry.file);
  const hub = opts.hub ?? hubEndpoint();
  const expected = await expectedOf(entry, opts, hub);
  const record = async (result: EnsureResult): Promise<EnsureResult> => {
    if (result.status === "unverified") return result;
    const lock = opts.lock && expected.source !== opts.lock.file ? opts.lock : undefined;
    if (lock) writeModelLockEntry(lock.file, lock.id, { uri: entry.uri, file: entry.file, revision: expected.revision, bytes: result.bytes, sha256: result.sha256 });
    opts.onVerified?.({ source: expected.source, revision: expected.revision, locked: lock !== undefined });
    return result;
  };
  if ((await fileSize(target)) !== undefined) return record(await verify(target, expected, "present", false));
  await mkdir(opts.dir, { recursive: true });
  const partial = `${target}.partial`;
  await download(modelUrl(entry.uri, expected.revision, hub), partial, opts);
  const result = await verify(partial, expected, "downloaded", true);
  await rename(partial, target);
  return record({ ...result, path: target });
}

async function expectedOf(entry: ModelEntry, opts: EnsureOptions, hub: string): Promise<Expected> {
  const revision = entry.revision ?? "main";
  if (opts.lock) {
    const locked = readModelLock(opts.lock.file)[opts.lock.id];
    if (locked !== undefined) {
      if (locked.uri !== entry.uri || locked.file !== entry.file) {
        throw new InputFileError(opts.lock.file, `entry "${opts.lock.id}" pins ${locked.uri} as ${locked.file}, but models.json now names ${entry.uri} as ${entry.file}`, "delete that entry to pin the new file (it is re-verified against the hub)");
      }
      return { sha256: locked.sha256, bytes: locked.bytes, revision: locked.revision, source: opts.lock.file };
    }
  }
  if (entry.sha256 !== null) return { sha256: entry.sha256, bytes: entry.bytes, revision, source: "models/models.json" };
  const hf = parseHfUri(entry.uri);
  if (hf === null || !opts.lock) return { sha256: null, bytes: entry.bytes, revision, source: "models/models.json" };
  const published = await publishedFile(hf.repo, hf.path, revision, { hub, fetchImpl: opts.fetchImpl });
  return { sha256: published.sha256, bytes: published.bytes, revision: published.revision, source: `the hub's published LFS hash (${hf.repo}@${published.revision})` };
}

async function verify(path: string, expected: Expected, status: "present" | "downloaded", deleteOnMismatch: boolean): Promise<EnsureResult> {
  const bytes = (await fileSize(path)) ?? 0;
  const mismatch = (want: string, actual: string) => new ModelHashMismatchError(path, want, actual, deleteOnMismatch, expected.source);
  if (expected.bytes !== null && bytes !== expected.bytes) {
    if (deleteOnMismatch) await unlink(path);
    throw mismatch(`${expected.bytes} bytes`, `${bytes} bytes`);
  }
  const sha256 = await sha256File(path);
  if (expected.sha256 === null) return { path, status: "unverified", sha256, bytes };
  if (sha256 !== expected.sha256) {
    if (deleteOnMismatch) await unlink(path);
    throw mismatch(expected.sha256, sha256);
  }
  return { path, status, sha256, bytes };
}

/** Checks a present model file against its lock entry: null when it matches, else the one-line problem. */
export async function checkAgainstLock(path: string, entry: { bytes: number; sha256: string }, lockFile: string): Promise<string | null> {
  const bytes = (await fileSize(path)) ?? 0;
  if (bytes !== entry.bytes) return `${path}: size ${bytes} bytes does not match ${lockFile} (${entry.bytes} bytes); delete the file and re-run \`make models\``;
  const sha256 = await sha256File(path);
  if (sha256 !== entry.sha256) return `${path}: sha256 ${sha256} does not match ${lockFile} (${entry.sha256}); delete the file and re-run \`make models\``;
  return null;
}
/** Streams `url` into `partial`, resuming from its current size with a Range request. */
async function download(url: string, partial: string, opts: EnsureOptions): Promise<void> {
  const offset = (await fileSize(partial)) ?? 0;
  let response: Response;
  try {
    response = await (opts.fetchImpl ?? fetch)(url, { headers: offset > 0 ? { Range: `bytes=${offset}-` } : {}, redirect: "follow" });
  } catch (error) {
    throw new MeritError(`cannot reach ${url} (${error instanceof Error ? error.message : String(error)}); without network, copy the file into ${partial.replace(/\.partial$/, "")} by hand and re-run \`make models\` to verify it`, { cause: error });
  }
  if (response.status === 416 && offset > 0) return; // the partial file already holds every byte
  if (response.status !== 200 && response.status !== 206) {
    await response.body?.cancel();
    throw new MeritError(`${url} answered HTTP ${response.status}; check the uri in models/models.json, or download the file by hand into ${partial.replace(/\.partial$/, "")}`);
  }
  if (response.body === null) throw new MeritError(`${url} sent no body; re-run \`make models\``);
  const resumed = response.status === 206;
  let received = resumed ? offset : 0;
  const length = Number(response.headers.get("content-length") ?? NaN);
  const total = Number.isFinite(length) ? received + length : undefined;
  const count = async function* (source: AsyncIterable<Buffer>) {
    for await (const chunk of source) {
      received += chunk.length;
      opts.onProgress?.(received, total);
      yield chunk;
    }
  };
  try {
    await pipeline(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), count, createWriteStream(partial, { flags: resumed ? "a" : "w" }));
  } catch (error) {
    throw new MeritError(`download of ${url} was interrupted after ${received} bytes; re-run \`make models\` to resume from ${partial}`, { cause: error });
  }
  if (total !== undefined && received < total) {
    throw new MeritError(`download of ${url} stopped at ${received} of ${total} bytes; re-run \`make models\` to resume from ${partial}`);
  }
}

async function fileSize(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}
