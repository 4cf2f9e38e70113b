/**
 * Memory stage (METHOD.md §4.5): the crash-safe commit of one memory write as a redo record. A write
 * is a list of byte-range changes ("these bytes at this offset, then the file is this long"): an
 * insertion appends to the files, a merge rewrites the tail of a polarity file and one vector row.
 * The record is written to `memory_commit.json.tmp` and fsynced, renamed to `memory_commit.json`
 * (the commit point), then every change is applied and fsynced, then the record is removed. Every
 * change is absolute (offset, bytes, final size), so applying it again is harmless: opening a store
 * replays a committed record (repairing any file a kill left half-written, such as a torn last line)
 * and deletes an uncommitted one, whose changes were never started.
 *
 * Every file is changed whole or not at all, also when a change fails (a full disk): a JSON file
 * (memory_metadata.json, memory_row_to_entry_id.json) is replaced through `<name>.tmp` and a rename,
 * so it is never left as truncated JSON; a change made in place (the JSONL and vector files, which
 * grow by appends) that fails is undone — the bytes it overwrote written back, the file cut to its
 * old length, which needs no free space. The redo record stays, so the run's resume finishes the write.
 * File-system calls go through `fsLayer` (lib/atomic-file.ts), the fault-injection seam.
 * @module
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { fsLayer, writeFully } from "../atomic-file.ts";
import { InputFileError } from "../errors.ts";
import { canonicalJson } from "../hash.ts";

/** The redo record; present only between the commit point and the end of a write. */
export const COMMIT_MARKER = "memory_commit.json";
const TMP = ".tmp";
const RECORD_FORMAT = "merit-memory-redo-v1";

/** One file's change: `data` written at `offset`, then the file cut (or extended) to `size` bytes. */
export interface FileChange {
  file: string;
  offset: number;
  data: Uint8Array;
  size: number;
}

/** Points in a write where tests may simulate a crash (the hook throws). */
export type CommitPhase = "staged" | "committed" | `renamed:${string}` | "done";

/**
 * Commits `changes` to files of `dir` as one transaction. `files` lists every file of the store in
 * the order changes are applied; after each one's change (or none) the phase `renamed:<file>` is
 * reported, the name kept from the rename protocol this record replaces.
 */
export function commitChanges(dir: string, files: readonly string[], changes: readonly FileChange[], onPhase: (phase: CommitPhase) => void): void {
  const byFile = new Map(changes.map((c) => [c.file, c]));
  const record = {
    format: RECORD_FORMAT,
    files: [...byFile.keys()],
    changes: changes.map((c) => ({ file: c.file, offset: c.offset, size: c.size, data: Buffer.from(c.data.buffer, c.data.byteOffset, c.data.byteLength).toString("base64") })),
  };
  const staged = path.join(dir, COMMIT_MARKER + TMP);
  try {
    writeDurable(staged, canonicalJson(record) + "\n");
  } catch (error) {
    fs.rmSync(staged, { force: true }); // uncommitted: nothing changed, and no temp file stays behind
    throw writeFailure(staged, error, false);
  }
  onPhase("staged");
  fs.renameSync(staged, path.join(dir, COMMIT_MARKER));
  fsyncDir(dir);
  onPhase("committed");
  for (const file of files) {
    const change = byFile.get(file);
    if (change !== undefined) {
      try {
        applyChange(dir, change);
      } catch (error) {
        throw writeFailure(path.join(dir, change.file), error, true); // the record stays: opening the store replays it
      }
    }
    onPhase(`renamed:${file}`);
  }
  fsyncDir(dir); // files created by this write
  fs.unlinkSync(path.join(dir, COMMIT_MARKER));
  fsyncDir(dir);
  onPhase("done");
}

/**
 * Finishes or discards an interrupted write: a committed record is applied again and removed; then
 * any remaining `memory_*.tmp` file (an uncommitted write) is deleted. Idempotent, so a crash during
 * recovery is safe. A record of the earlier whole-file protocol (a file list, each file staged as
 * `<name>.tmp`) is rolled forward by renaming the staged files.
 */
export function recoverChanges(dir: string): void {
  const marker = path.join(dir, COMMIT_MARKER);
  if (fs.existsSync(marker)) {
    const record = parseRecord(marker);
    if (record.format === RECORD_FORMAT) {
      for (const c of record.changes) applyChange(dir, { file: c.file, offset: c.offset, size: c.size, data: Buffer.from(c.data, "base64") });
    } else {
      for (const name of record.files) {
        const tmp = path.join(dir, name + TMP);
        if (fs.existsSync(tmp)) fs.renameSync(tmp, path.join(dir, name));
      }
    }
    fsyncDir(dir);
    fs.unlinkSync(marker);
    fsyncDir(dir);
  }
  for (const name of fs.readdirSync(dir)) {
    if (name.startsWith("memory_") && name.endsWith(TMP)) fs.unlinkSync(path.join(dir, name));
  }
}

interface StoredRecord {
  format?: string;
  files: string[];
  changes: { file: string; offset: number; size: number; data: string }[];
}

function parseRecord(marker: string): StoredRecord {
  let parsed: Partial<StoredRecord>;
  try {
    parsed = JSON.parse(fs.readFileSync(marker, "utf8")) as Partial<StoredRecord>;
  } catch (cause) {
    throw new InputFileError(marker, `not valid JSON (${(cause as Error).message})`, "restore the run directory from a backup", cause);
  }
  if (!Array.isArray(parsed.files)) throw new InputFileError(marker, "commit marker without a file list", "restore the run directory from a backup");
  const safe = (name: unknown) => typeof name === "string" && name === path.basename(name) && name.startsWith("memory_");
  const changes = parsed.format === RECORD_FORMAT ? parsed.changes : [];
  if (!Array.isArray(changes) || !parsed.files.every(safe) || !changes.every((c) => safe(c.file) && Number.isSafeInteger(c.offset) && Number.isSafeInteger(c.size) && typeof c.data === "string"))
    throw new InputFileError(marker, "commit marker with a malformed change list", "restore the run directory from a backup");
  return { format: parsed.format, files: parsed.files, changes };
}

/**
 * One line for a write that failed (a full disk above all, STYLE.md §2.10): before the commit point
 * nothing changed; after it the redo record is in place and the next open of the store finishes the
 * write. An error that is not the operating system's (no `code`) is passed on as it is.
 */
function writeFailure(file: string, cause: unknown, committed: boolean): unknown {
  const code = (cause as NodeJS.ErrnoException | null)?.code;
  if (typeof code !== "string") return cause;
  const what = code === "ENOSPC" || code === "EDQUOT" ? "no space left on device" : `write failed (${code})`;
  const state = committed ? "the memory write is committed and is finished when the run resumes" : "the memory write was not committed and nothing changed";
  return new InputFileError(file, `${what}; ${state}`, "free disk space (or choose another --out) and continue the run with --resume", cause);
}

/**
 * Writes one change and makes it durable (the file is created when absent), whole or not at all: a
 * JSON file is replaced through a temp file; another file is changed in place and, when that fails,
 * put back as it was.
 */
function applyChange(dir: string, change: FileChange): void {
  const file = path.join(dir, change.file);
  if (change.file.endsWith(".json")) return replaceWhole(file, change);
  const existed = fs.existsSync(file);
  const size = existed ? fs.statSync(file).size : 0;
  // What the change overwrites (beyond the old end there is nothing to restore, only a length).
  const overwritten = Buffer.alloc(Math.max(0, Math.min(size, change.offset + change.data.byteLength) - change.offset));
  if (overwritten.byteLength > 0) readFully(file, overwritten, change.offset);
  const fd = fsLayer.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT, 0o644);
  try {
    pwriteFully(fd, change.data, change.offset);
    fsLayer.ftruncateSync(fd, change.size);
    fsLayer.fsyncSync(fd);
  } catch (error) {
    try {
      pwriteFully(fd, overwritten, change.offset);
      fsLayer.ftruncateSync(fd, size);
      fsLayer.fsyncSync(fd);
    } catch {
      // The undo failed too: the redo record, still in place, repairs the file when the store is opened.
    }
    fsLayer.closeSync(fd);
    if (!existed) fs.rmSync(file, { force: true }); // a file this change created goes again
    throw error;
  }
  fsLayer.closeSync(fd);
}

/** A JSON file with `change` applied (to its current bytes), written to `<name>.tmp`, fsynced and renamed over it. */
function replaceWhole(file: string, change: FileChange): void {
  const old = fs.existsSync(file) ? fs.readFileSync(file) : Buffer.alloc(0);
  const bytes = Buffer.alloc(change.size);
  old.copy(bytes, 0, 0, Math.min(change.offset, old.byteLength, change.size));
  bytes.set(change.data.subarray(0, Math.max(0, change.size - change.offset)), change.offset);
  const tmp = file + TMP;
  writeDurable(tmp, bytes);
  fsLayer.renameSync(tmp, file);
}

/** Writes `bytes` at `position`, looping over partial writes; a write that makes no progress fails. */
function pwriteFully(fd: number, bytes: Uint8Array, position: number): void {
  let written = 0;
  while (written < bytes.byteLength) {
    const n = fsLayer.pwriteSync(fd, bytes, written, bytes.byteLength - written, position + written);
    if (!(n > 0)) throw Object.assign(new Error("write made no progress"), { code: "EIO" });
    written += n;
  }
}

function readFully(file: string, into: Buffer, position: number): void {
  const fd = fs.openSync(file, "r");
  try {
    let read = 0;
    while (read < into.byteLength) {
      const n = fs.readSync(fd, into, read, into.byteLength - read, position + read);
      if (n === 0) break;
      read += n;
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes `file` whole and fsyncs it; on a failure the partial file is removed. */
function writeDurable(file: string, content: string | Uint8Array): void {
  const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : content;
  const fd = fsLayer.openSync(file, "w");
  try {
    writeFully(fd, bytes, file);
    fsLayer.fsyncSync(fd);
  } catch (error) {
    fsLayer.closeSync(fd);
    fs.rmSync(file, { force: true });
    throw (error as { cause?: unknown }).cause ?? error;
  }
  fsLayer.closeSync(fd);
}

export function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
