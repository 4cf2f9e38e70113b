/**
 * Crash-safe file writes for run artefacts (METHOD.md §11; DESIGN.md §1 "append-only JSONL or a
 * hash-named file"): write a temp file beside the target, fsync it, rename over the target, fsync the
 * directory. A kill at any instant leaves either the old or the new file, never a torn one.
 * @module
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeSync } from "node:fs";
import { dirname } from "node:path";

/** Replaces `path` with `text` atomically. */
export function writeFileAtomic(path: string, text: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  const fd = openSync(tmp, "w");
  try {
    writeSync(fd, typeof text === "string" ? Buffer.from(text, "utf8") : text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  syncDir(dirname(path));
}

function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Directories cannot be opened for fsync on some platforms; the rename is still atomic there.
  }
}
