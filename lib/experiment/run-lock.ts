/**
 * Experiment runs, the run-folder lock (METHOD.md §11; README "Reliability"): one process at a time
 * writes a run directory. `run.lock` is created exclusively (O_EXCL) and holds the owner's PID and
 * host; it is removed when the run ends or fails. A lock whose process is gone (killed) is stale and
 * is taken over; a lock of a live process — or of another host, which cannot be checked — refuses
 * with one line naming the PID.
 * @module
 */
import { linkSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { MeritError } from "../errors.ts";
import { processAlive } from "../atomic-file.ts";

export const LOCK_FILE = "run.lock";

interface LockOwner {
  pid: number;
  host: string;
}

/** A held lock; `release` is idempotent. */
export interface RunLock {
  readonly path: string;
  release(): void;
}

function readOwner(path: string): LockOwner | null {
  try {
    const owner = JSON.parse(readFileSync(path, "utf8")) as LockOwner;
    return typeof owner.pid === "number" ? owner : null;
  } catch {
    return null; // absent, or torn by a kill between create and write: treated as stale below
  }
}

/** Throws MeritError when a live process (other than a stale owner) holds the lock of `dir`. */
export function checkUnlocked(dir: string): void {
  const owner = readOwner(join(dir, LOCK_FILE));
  if (owner && !isStale(owner)) throw lockedError(dir, owner);
}

function isStale(owner: LockOwner): boolean {
  return owner.host === hostname() && owner.pid !== process.pid && !processAlive(owner.pid);
}

function lockedError(dir: string, owner: LockOwner): MeritError {
  const who = owner.host === hostname() ? `process ${owner.pid}` : `process ${owner.pid} on host ${owner.host}`;
  return new MeritError(`${dir} is in use by ${who} (${join(dir, LOCK_FILE)}); wait for it to finish or stop it, or choose another --out (delete the lock file only if that process is gone)`);
}

/** Takes the lock of an existing directory `dir`, taking over a stale one. */
export function acquireRunLock(dir: string): RunLock {
  const path = join(dir, LOCK_FILE);
  // The lock is written completely under a temporary name and then hard-linked into place, so
  // `run.lock` never exists without its owner (link fails with EEXIST when another holds it).
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, JSON.stringify({ pid: process.pid, host: hostname() }) + "\n");
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(tmp, path);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        const owner = readOwner(path);
        if (attempt >= 2 || (owner && !isStale(owner))) throw lockedError(dir, owner ?? { pid: -1, host: hostname() });
        rmSync(path, { force: true }); // stale: its process is gone
      }
    }
  } finally {
    rmSync(tmp, { force: true });
  }
  let held = true;
  return {
    path,
    release() {
      if (!held) return;
      held = false;
      if (readOwner(path)?.pid === process.pid) rmSync(path, { force: true });
    },
  };
}
