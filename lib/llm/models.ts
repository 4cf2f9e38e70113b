/**
 * Model acquisition for the generation and embedding backends (METHOD.md §6.4; `make models`):
 * reads models/models.json, downloads a GGUF with HTTP Range resume and progress, and verifies its
 * SHA-256. A file already present and matching is a no-op. A manifest entry without a pinned sha256
 * is downloaded but NEVER reported verified: the computed hash is returned for a human to check.
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
import { sha256File } from "./file-hash.ts";

const ModelEntry = z
  .object({
    role: z.enum(["chat", "embedding"]),
    /** `hf:<owner>/<repo>/<file>` (main branch) or an http(s) URL. */
    uri: z.string().regex(/^(hf:[^/]+\/[^/]+\/.+|https?:\/\/.+)$/, "expected hf:owner/repo/file or an http(s) URL"),
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

/** What `ensureModel` did: `present` (already there and verified), `downloaded` (and verified), `unverified` (no pinned hash). */
export interface EnsureResult {
  path: string;
  status: "present" | "downloaded" | "unverified";
  sha256: string;
  bytes: number;
}

/** Downloaded or present bytes whose SHA-256 (or size) differs from models.json. */
export class ModelHashMismatchError extends MeritError {
  constructor(readonly path: string, readonly expected: string, readonly actual: string, deleted: boolean) {
    super(
      `${path}: sha256 ${actual} does not match models/models.json (${expected}); ` +
        (deleted ? "the bad download was deleted, re-run `make models`" : "delete the file and re-run `make models`"),
    );
    this.name = "ModelHashMismatchError";
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

/** The download URL of a model URI (`hf:` → the Hugging Face resolve URL on main). */
export function modelUrl(uri: string): string {
  if (!uri.startsWith("hf:")) return uri;
  const [owner, repo, ...file] = uri.slice(3).split("/");
  return `https://huggingface.co/${owner}/${repo}/resolve/main/${file.join("/")}`;
}

export interface EnsureOptions {
  /** Directory holding the models (e.g. `models`). */
  dir: string;
  /** Called as bytes arrive: (bytes so far incl. a resumed prefix, total or undefined). */
  onProgress?: (received: number, total: number | undefined) => void;
  /** Injected for tests. */
  fetchImpl?: typeof fetch;
}

/** Makes `<dir>/<entry.file>` present and checked against the manifest, downloading it if absent. */
export async function ensureModel(entry: ModelEntry, opts: EnsureOptions): Promise<EnsureResult> {
  const target = join(opts.dir, entry.file);
  if (await fileSize(target) !== undefined) return verify(target, entry, "present", false);
  await mkdir(opts.dir, { recursive: true });
  const partial = `${target}.partial`;
  await download(modelUrl(entry.uri), partial, opts);
  const result = await verify(partial, entry, "downloaded", true);
  await rename(partial, target);
  return { ...result, path: target };
}

async function verify(path: string, entry: ModelEntry, status: "present" | "downloaded", deleteOnMismatch: boolean): Promise<EnsureResult> {
  const bytes = (await fileSize(path)) ?? 0;
  const sha256 = await sha256File(path);
  const mismatch = (expected: string, actual: string) => new ModelHashMismatchError(path, expected, actual, deleteOnMismatch);
  if (entry.bytes !== null && bytes !== entry.bytes) {
    if (deleteOnMismatch) await unlink(path);
    throw mismatch(`${entry.bytes} bytes`, `${bytes} bytes`);
  }
  if (entry.sha256 === null) return { path, status: "unverified", sha256, bytes };
  if (sha256 !== entry.sha256) {
    if (deleteOnMismatch) await unlink(path);
    throw mismatch(entry.sha256, sha256);
  }
  return { path, status, sha256, bytes };
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
