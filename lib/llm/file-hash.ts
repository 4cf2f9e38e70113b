/**
 * SHA-256 of a model file, streamed (model identity for cache keys and download verification,
 * METHOD.md §6.4; a 7B GGUF is ~4.7 GB, so it is never read into memory at once).
 * @module
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";

/** SHA-256 hex of a file's bytes, read as a stream. */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 22 })) hash.update(chunk as Buffer);
  return hash.digest("hex");
}
