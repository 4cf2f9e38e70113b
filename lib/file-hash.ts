/**
 * Streaming SHA-256 of files, the identity of models (METHOD.md §6.4: cache keys, download
 * verification) and of databases and archives (METHOD.md §1.4). A 7B GGUF is ~4.7 GB and BIRD
 * databases are gigabytes, so a file is never read into memory at once.
 * @module
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { resolve } from "node:path";

/** Size in bytes and SHA-256 hex of one file. */
export interface FileDigest {
  size: number;
  sha256: string;
}

/** Read size: large chunks keep multi-gigabyte files fast; the digest does not depend on it. */
const CHUNK_BYTES = 1 << 22;

/** SHA-256 hex of a file's bytes, streamed and never cached (a download still being written, a model file). */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path, { highWaterMark: CHUNK_BYTES })) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

const cache = new Map<string, Promise<FileDigest>>();

/** Files up to this size are hashed from one read instead of a stream. */
const SMALL_FILE_BYTES = 16n << 20n;

/**
 * Size and SHA-256 of a file, cached in-process by path, size, mtime and inode, so an unchanged file
 * is hashed once and a file modified since the last call is hashed again.
 */
export async function fileDigest(file: string): Promise<FileDigest> {
  const path = resolve(file);
  const info = await stat(path, { bigint: true });
  const key = `${path}\u0000${info.size}\u0000${info.mtimeNs}\u0000${info.ino}`;
  let digest = cache.get(key);
  if (digest === undefined) {
    // A small file (a Spider database is tens of kilobytes) is read at once: a read stream costs
    // milliseconds to set up, more than hashing the file does.
    const sha256 = info.size <= SMALL_FILE_BYTES ? readFile(path).then((bytes) => createHash("sha256").update(bytes).digest("hex")) : sha256File(path);
    digest = sha256.then((hex) => ({ size: Number(info.size), sha256: hex }));
    cache.set(key, digest);
    digest.catch(() => cache.delete(key)); // a failed read is not remembered
  }
  return digest;
}
