/**
 * Data loading, database identity (METHOD.md §1.4): streaming SHA-256 of a file (BIRD databases are
 * gigabytes), cached in-process by path, size, mtime and inode so an unchanged file is hashed once.
 * @module
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { resolve } from "node:path";

/** Size in bytes and SHA-256 hex of one file. */
export interface FileDigest {
  size: number;
  sha256: string;
}

const cache = new Map<string, Promise<FileDigest>>();

/** SHA-256 of a file's bytes, streamed in chunks; a file modified since the last call is re-hashed. */
export async function fileDigest(file: string): Promise<FileDigest> {
  const path = resolve(file);
  const info = await stat(path, { bigint: true });
  const key = `${path}\u0000${info.size}\u0000${info.mtimeNs}\u0000${info.ino}`;
  let digest = cache.get(key);
  if (digest === undefined) {
    digest = streamSha256(path).then((sha256) => ({ size: Number(info.size), sha256 }));
    cache.set(key, digest);
    digest.catch(() => cache.delete(key)); // a failed read is not remembered
  }
  return digest;
}

/** SHA-256 hex of a file, streamed without caching (used for downloads that are still being written). */
export function streamSha256(file: string): Promise<string> {
  return new Promise((done, fail) => {
    const hash = createHash("sha256");
    createReadStream(file)
      .on("data", (chunk) => hash.update(chunk))
      .on("error", fail)
      .on("end", () => done(hash.digest("hex")));
  });
}
