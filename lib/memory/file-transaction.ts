/**
 * Memory stage (METHOD.md §4.5): the crash-safe commit of one memory write as a redo record. A write
 * is a list of byte-range changes ("these bytes at this offset, then the file is this long"): an
 * insertion appends to the files, a merge rewrites the tail of a polarity file and one vector row.
 * The record is written to `memory_commit.json.tmp` and fsynced, renamed to `memory_commit.json`
 * (the commit point), then every change is applied and fsynced, then the record is removed. Every
 * change is absolute (offset, bytes, final size), so applying it again is harmless: opening a store
 * replays a committed record (repairing any file a kill left half-written, such as a torn last line)
 * and deletes an uncommitted one, whose changes were never started.
 * @module
 */
import * as fs from "node:fs";
import * as path from "node:path";
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

/** Writes one change and makes it durable (the file is created when absent). */
function applyChange(dir: string, change: FileChange): void {
  const fd = fs.openSync(path.join(dir, change.file), fs.constants.O_WRONLY | fs.constants.O_CREAT, 0o644);
  try {
    let written = 0;
    while (written < change.data.byteLength) written += fs.writeSync(fd, change.data, written, change.data.byteLength - written, change.offset + written);
    fs.ftruncateSync(fd, change.size);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function writeDurable(file: string, text: string): void {
  const fd = fs.openSync(file, "w");
  try {
    const bytes = Buffer.from(text, "utf8");
    let offset = 0;
    while (offset < bytes.byteLength) offset += fs.writeSync(fd, bytes, offset, bytes.byteLength - offset);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

export function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
