/**
 * Crash-safe file writes for run artefacts (METHOD.md §11; DESIGN.md §1 "append-only JSONL or a
 * hash-named file"): write a temp file beside the target, check that every byte was written, fsync
 * it, rename over the target, fsync the directory. A kill at any instant leaves either the old or the
 * new file, never a torn one; a failed write (ENOSPC, a short write) removes the temp file and leaves
 * the old file untouched.
 *
 * All file-system calls of this module and of the journal go through `fsLayer`, the seam the
 * fault-injection tests (test/integrity/) use to simulate short writes and full disks.
 * @module
 */
import * as fs from "node:fs";
import { basename, dirname, join } from "node:path";
import { InputFileError } from "./errors.ts";

/** The file-system calls run artefacts are written with (replaceable in tests only). */
export const fsLayer = {
  openSync: fs.openSync,
  writeSync: (fd: number, buffer: Uint8Array, offset: number, length: number): number => fs.writeSync(fd, buffer, offset, length),
  /** A write at a file position (the memory store's in-place changes, lib/memory/file-transaction.ts). */
  pwriteSync: (fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number => fs.writeSync(fd, buffer, offset, length, position),
  fsyncSync: fs.fsyncSync,
  closeSync: fs.closeSync,
  renameSync: fs.renameSync,
  ftruncateSync: fs.ftruncateSync,
};

/**
 * Writes all of `bytes` to `fd`, looping over partial writes. A write that makes no progress (or
 * fails) throws: the caller must undo what was written.
 */
export function writeFully(fd: number, bytes: Uint8Array, file: string): void {
  let offset = 0;
  while (offset < bytes.length) {
    let n: number;
    try {
      n = fsLayer.writeSync(fd, bytes, offset, bytes.length - offset);
    } catch (error) {
      throw writeError(file, error, offset, bytes.length);
    }
    if (!(n > 0)) throw writeError(file, Object.assign(new Error("write made no progress"), { code: "EIO" }), offset, bytes.length);
    offset += n;
  }
}

/** One-line error for a failed write of `file` (STYLE.md §2.10), keeping the cause. */
export function writeError(file: string, cause: unknown, written: number, total: number): InputFileError {
  const code = (cause as NodeJS.ErrnoException)?.code;
  const what = code === "ENOSPC" || code === "EDQUOT" ? "no space left on device" : `write failed (${code ?? (cause as Error)?.message ?? String(cause)})`;
  return new InputFileError(file, `${what} after ${written} of ${total} bytes; nothing was replaced`, "free disk space (or choose another output folder) and run the command again", cause);
}

/** Replaces `path` with `text` atomically. */
export function writeFileAtomic(path: string, text: string | Uint8Array): void {
  fs.mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  const bytes = typeof text === "string" ? Buffer.from(text, "utf8") : text;
  let fd: number;
  try {
    fd = fsLayer.openSync(tmp, "w");
  } catch (error) {
    // a full disk can refuse the temp file itself (no free inode or block): name the target, not the temp file
    throw writeError(path, error, 0, bytes.length);
  }
  try {
    writeFully(fd, bytes, path);
    fsLayer.fsyncSync(fd);
  } catch (error) {
    fsLayer.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw error instanceof InputFileError ? error : writeError(path, error, 0, bytes.length);
  }
  fsLayer.closeSync(fd);
  fsLayer.renameSync(tmp, path);
  syncDir(dirname(path));
}

/**
 * Removes `<name>.tmp-<pid>` files that killed writes left in `dir` (never those of a live
 * process). Returns the names removed.
 */
export function removeStaleTempFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  const removed: string[] = [];
  for (const name of fs.readdirSync(dir)) {
    const m = /\.tmp-(\d+)$/.exec(name);
    if (!m || (Number(m[1]) !== process.pid && processAlive(Number(m[1])))) continue;
    fs.rmSync(join(dir, name), { force: true });
    removed.push(basename(name));
  }
  return removed;
}

/** True when a process with this PID exists (on this machine). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** fsyncs a directory so a rename or a new file in it survives a power loss. */
export function syncDir(dir: string): void {
  try {
    const fd = fs.openSync(dir, "r");
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // Directories cannot be opened for fsync on some platforms; the rename is still atomic there.
  }
}
