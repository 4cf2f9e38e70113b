/**
 * Data acquisition (METHOD.md §1.1): fetches one official archive into `<dir>/_downloads/`, resuming a
 * `.partial` file with an HTTP Range request, following Google Drive's large-file confirmation form,
 * and verifies its size and SHA-256 before anything trusts it.
 * @module
 */
import { createWriteStream } from "node:fs";
import { mkdir, rename, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { MeritError } from "../errors.ts";
import type { ArchiveEntry } from "./downloads.ts";
import { fileDigest } from "../file-hash.ts";

/** A download that failed: network down, HTTP error, or a hash that is wrong or not pinned. */
export class DownloadError extends MeritError {
  constructor(message: string, cause?: unknown) {
    super(message, { cause });
    this.name = "DownloadError";
  }
}

/** The archive's sha256 is not pinned in downloads.json; `actual` is what this copy hashes to. */
export class UnpinnedHashError extends DownloadError {
  readonly actual: string;
  constructor(file: string, actual: string) {
    super(`${file} has sha256 ${actual}, but data/downloads.json pins no sha256 for it, so it is not trusted: verify that value against the publisher (or a second download), write it as "sha256" in data/downloads.json, then re-run to extract`);
    this.name = "UnpinnedHashError";
    this.actual = actual;
  }
}

export interface FetchArchiveOptions {
  /** Directory that receives the archive, e.g. `data/_downloads`. */
  downloadsDir: string;
  /** Progress lines (stderr in the CLI). */
  progress?: (line: string) => void;
  /** Injected for tests; defaults to the global fetch. */
  fetchImpl?: typeof fetch;
  /** Where `entry.sha256` comes from, named in mismatch messages (default data/downloads.json). */
  pinSource?: string;
  /**
   * With a null `entry.sha256`: keep the bytes and return their path instead of refusing them (the
   * caller verifies the contents before trusting them, e.g. `verify_contents` in downloads.json).
   */
  allowUnpinned?: boolean;
}

/**
 * Returns the path of the verified archive: an existing `<downloadsDir>/<file>` (e.g. copied by hand)
 * is verified as is; otherwise the archive is streamed to `<file>.partial` (resumed when present),
 * verified, and renamed into place. Throws DownloadError (exit code 2) on any failure.
 */
export async function fetchArchive(entry: ArchiveEntry, opts: FetchArchiveOptions): Promise<string> {
  const target = join(opts.downloadsDir, entry.file);
  const check = { pinSource: opts.pinSource, bytes: entry.bytes ?? null };
  if (await exists(target)) {
    if (entry.sha256 === null && opts.allowUnpinned) return target;
    opts.progress?.(`found ${target}; verifying sha256`);
    await verifyArchive(target, entry.sha256, { deleteOnMismatch: false, ...check });
    return target;
  }
  await mkdir(opts.downloadsDir, { recursive: true });
  const partial = `${target}.partial`;
  const complete = await download(entry, partial, target, opts);
  if (!complete) throw new DownloadError(`download of ${entry.url} stopped early; re-run the same command to resume from ${partial}`);
  if (entry.sha256 === null) {
    // Keep the bytes under the final name (a re-run will not download again) but refuse to trust them.
    await rename(partial, target);
    if (opts.allowUnpinned) return target;
    await verifyArchive(target, null, { deleteOnMismatch: false }); // always throws UnpinnedHashError
  }
  await verifyArchive(partial, entry.sha256, { deleteOnMismatch: true, ...check });
  await rename(partial, target); // atomic within one directory; with a pinned hash the final name only ever holds verified bytes
  return target;
}

/**
 * Throws unless `file` has `opts.bytes` bytes (when given) and hashes to `expected`; a null
 * `expected` always throws UnpinnedHashError.
 */
export async function verifyArchive(file: string, expected: string | null, opts: { deleteOnMismatch: boolean; bytes?: number | null; pinSource?: string }): Promise<void> {
  const source = opts.pinSource ?? "data/downloads.json";
  const fix = opts.deleteOnMismatch ? "the corrupt download was deleted, re-run to fetch it again" : "delete that file and re-run, or check where the copy came from";
  const size = (await stat(file)).size;
  if (expected !== null && opts.bytes != null && size !== opts.bytes) {
    if (opts.deleteOnMismatch) await unlink(file);
    throw new DownloadError(`${file} has ${size} bytes but ${source} expects ${opts.bytes}; ${fix}`);
  }
  const actual = (await fileDigest(file)).sha256; // cached by path, size, mtime and inode: the caller's re-hash is free
  if (expected === null) throw new UnpinnedHashError(file, actual);
  if (actual === expected) return;
  if (opts.deleteOnMismatch) await unlink(file);
  throw new DownloadError(`${file} has sha256 ${actual} but ${source} expects ${expected}; ${fix}`);
}

/** Streams the body into `partial`; resolves to true when the server sent the whole file. */
async function download(entry: ArchiveEntry, partial: string, target: string, opts: FetchArchiveOptions): Promise<boolean> {
  const offset = (await exists(partial)) ? (await stat(partial)).size : 0;
  const offline = (error: unknown) =>
    new DownloadError(`cannot reach ${entry.url} (${describe(error)}); this machine appears offline: copy ${entry.file} (from ${entry.page}) into ${target} manually, then re-run to verify and extract`, error);
  let response: Response;
  try {
    response = await (opts.fetchImpl ?? fetch)(entry.url, { headers: offset > 0 ? { Range: `bytes=${offset}-` } : {}, redirect: "follow" });
  } catch (error) {
    throw offline(error);
  }
  if (response.status === 416 && offset > 0) return true; // the partial file already holds every byte
  if (response.status !== 200 && response.status !== 206) {
    throw new DownloadError(`${entry.url} answered HTTP ${response.status} ${response.statusText}; download ${entry.file} by hand from ${entry.page} into ${target}, then re-run to verify and extract`);
  }
  if (isHtml(response)) {
    // Google Drive answers a large file with a "can't scan for viruses" page whose form confirms the download.
    const confirm = confirmationUrl(await readPage(response), response.url || entry.url);
    if (confirm !== null) {
      opts.progress?.(`${entry.url} answered a download confirmation page; following its form`);
      try {
        response = await (opts.fetchImpl ?? fetch)(confirm, { headers: offset > 0 ? { Range: `bytes=${offset}-` } : {}, redirect: "follow" });
      } catch (error) {
        throw offline(error);
      }
      if (response.status === 416 && offset > 0) return true;
      if (response.status !== 200 && response.status !== 206) {
        await response.body?.cancel();
        throw new DownloadError(`${confirm} (the confirmation form of ${entry.url}) answered HTTP ${response.status} ${response.statusText}; download ${entry.file} by hand from ${entry.page} into ${target}, then re-run to verify and extract`);
      }
    }
    if (isHtml(response)) {
      if (confirm !== null) await response.body?.cancel(); // the first page's body was read already
      throw new DownloadError(`${entry.url} returned an HTML page instead of ${entry.file}${confirm !== null ? " even after its confirmation form (download quota exceeded or access denied)" : " (a confirmation or error page)"}; download it in a browser from ${entry.page} into ${target}, then re-run to verify and extract`);
    }
  }
  const resumed = response.status === 206;
  const start = resumed ? offset : 0;
  const length = Number(response.headers.get("content-length") ?? NaN);
  const total = Number.isFinite(length) ? start + length : undefined;
  opts.progress?.(`${resumed ? `resuming at ${start} bytes` : "downloading"} ${entry.url}${total ? ` (${total} bytes)` : ""}`);
  if (response.body === null) throw new DownloadError(`${entry.url} sent no body; re-run later or download ${entry.file} by hand from ${entry.page}`);

  let received = start;
  let nextReport = total ? start + total / 10 : start + 64 * 2 ** 20;
  const count = async function* (source: AsyncIterable<Buffer>) {
    for await (const chunk of source) {
      received += chunk.length;
      if (received >= nextReport) {
        opts.progress?.(total ? `${entry.file}: ${Math.floor((100 * received) / total)}% (${received}/${total} bytes)` : `${entry.file}: ${received} bytes`);
        nextReport += total ? total / 10 : 64 * 2 ** 20;
      }
      yield chunk;
    }
  };
  try {
    const body = Readable.fromWeb(response.body as WebReadableStream<Uint8Array>);
    await pipeline(body, count, createWriteStream(partial, { flags: resumed ? "a" : "w" }));
  } catch (error) {
    throw new DownloadError(`download of ${entry.url} was interrupted after ${received} bytes (${describe(error)}); re-run the same command to resume, or copy ${entry.file} into ${target} manually`, error);
  }
  return total === undefined || received >= total;
}

function isHtml(response: Response): boolean {
  return (response.headers.get("content-type") ?? "").startsWith("text/html");
}

/** The first 1 MiB of an HTML answer (a confirmation page is a few kB; a large page is not one). */
async function readPage(response: Response): Promise<string> {
  if (response.body === null) return "";
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of Readable.fromWeb(response.body as WebReadableStream<Uint8Array>)) {
    chunks.push(chunk as Buffer);
    size += (chunk as Buffer).length;
    if (size >= 2 ** 20) break;
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * The URL that Google Drive's confirmation page submits: the `<form>` that carries a hidden
 * `confirm` field (`id="download-form"`, method GET), its action resolved against the page URL and
 * its hidden fields (id, export, confirm, uuid, …) as the query. null when the page has no such form.
 */
export function confirmationUrl(html: string, pageUrl: string): string | null {
  for (const form of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)) {
    const attributes = form[1];
    const method = attribute(attributes, "method");
    if (method !== null && method.toLowerCase() !== "get") continue;
    const fields: Array<[string, string]> = [];
    for (const input of form[2].matchAll(/<input\b([^>]*)>/gi)) {
      const type = attribute(input[1], "type");
      const name = attribute(input[1], "name");
      if (type?.toLowerCase() === "hidden" && name !== null) fields.push([name, attribute(input[1], "value") ?? ""]);
    }
    if (!fields.some(([name]) => name === "confirm") && attribute(attributes, "id") !== "download-form") continue;
    let url: URL;
    try {
      url = new URL(attribute(attributes, "action") ?? pageUrl, pageUrl);
    } catch {
      continue;
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") continue;
    url.search = "";
    for (const [name, value] of fields) url.searchParams.append(name, value);
    return url.toString();
  }
  return null;
}

/** An HTML attribute's value (quoted or bare), entities decoded; null when absent. */
function attribute(attributes: string, name: string): string | null {
  const match = new RegExp(`(?:^|\\s)${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, "i").exec(attributes);
  if (match === null) return null;
  const raw = match[1] ?? match[2] ?? match[3] ?? "";
  return raw.replace(/&(amp|quot|#39|lt|gt|#x27);/g, (_, e: string) => ({ amp: "&", quot: '"', "#39": "'", "#x27": "'", lt: "<", gt: ">" })[e] ?? _);
}

/** true if `path` exists; other stat errors than ENOENT are thrown. */
export async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
}

/** The innermost cause of a fetch failure, e.g. `connect ECONNREFUSED 127.0.0.1:9`. */
function describe(error: unknown): string {
  let current: unknown = error;
  while (current instanceof Error && current.cause instanceof Error) current = current.cause;
  if (!(current instanceof Error)) return String(current);
  return current.message || ((current as NodeJS.ErrnoException).code ?? current.name);
}
