/**
 * Output paths are checked before any work (STYLE.md §2.10): a command that would write to an
 * unwritable place, or to a path under a file, stops with one line naming the flag and the path
 * instead of failing after minutes of scoring. Nothing is created: writability is proven with a
 * probe directory in the nearest existing ancestor, removed at once.
 * @module
 */
import { existsSync, mkdtempSync, rmdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { UsageError } from "../errors.ts";

/** The nearest existing ancestor of `path` (or `path` itself), written as the user wrote `path`. */
function nearestExisting(path: string): string {
  let current = path;
  while (!existsSync(current)) {
    const parent = dirname(current);
    if (parent === current) break;
    current = parent;
  }
  return current;
}

/** Creates and removes a probe directory in `dir`; returns the error code when that is refused. */
function probe(dir: string): string | null {
  try {
    rmdirSync(mkdtempSync(join(dir, ".merit-write-probe-")));
    return null;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? String(error);
  }
}

function refuse(what: string, path: string, problem: string): never {
  throw new UsageError(`${what} ${path}: ${problem}; choose a writable location`);
}

/** `what` (e.g. "--out") names a directory the command will create or fill: it must be creatable. */
export function assertWritableDir(path: string, what: string, shown = path): void {
  const base = nearestExisting(path);
  if (!statSync(base).isDirectory()) {
    refuse(what, shown, resolve(base) === resolve(shown) ? "is a file, not a directory" : `${base} is a file, so nothing can be created under it`);
  }
  const code = probe(base);
  if (code !== null) refuse(what, shown, `cannot write in ${base} (${code})`);
}

/** `what` names a file the command will write: not a directory, and its folder must be creatable. */
export function assertWritableFile(path: string, what: string): void {
  if (existsSync(path) && statSync(path).isDirectory()) refuse(what, path, "is a directory, not a file");
  assertWritableDir(dirname(path), what, path);
}
