/**
 * Analysis stage, run selection for `merit report --runs` (METHOD.md §9): comma-separated lists and
 * shell-style globs (`*`, `?`, `[abc]` within one path segment, `**` for any number of folders)
 * expanded to existing paths, sorted, without duplicates. Node 20 has no fs.glob, hence this.
 * @module
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { UsageError } from "../errors.ts";

const MAGIC = /[*?[]/;

/** `a,b*` and repeated values → the listed paths plus every glob match, in argument order; globs that match nothing are an error. */
export function expandRunArgs(values: readonly string[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const item of values.flatMap((v) => v.split(",")).map((s) => s.trim()).filter(Boolean)) {
    const paths = MAGIC.test(item) ? globPaths(item) : [item];
    if (paths.length === 0) throw new UsageError(`--runs: "${item}" matches no file or folder; check the pattern (quote it so the shell does not expand it)`);
    for (const p of paths) {
      const key = resolve(p);
      if (!seen.has(key)) out.push(p);
      seen.add(key);
    }
  }
  return out;
}

/** Paths matching `pattern` (POSIX separators), sorted. A segment starting with "." matches dotfiles only when the pattern does too. */
export function globPaths(pattern: string): string[] {
  const segments = pattern.split("/");
  const start = isAbsolute(pattern) ? "/" : ".";
  if (isAbsolute(pattern)) segments.shift();
  const results = new Set<string>();
  const walk = (dir: string, shown: string, rest: string[]): void => {
    if (rest.length === 0) {
      results.add(shown);
      return;
    }
    const [segment, ...tail] = rest;
    if (segment === "" || segment === ".") return walk(dir, shown, tail);
    if (segment === "**") {
      walk(dir, shown, tail);
      for (const name of subdirs(dir)) if (!name.startsWith(".")) walk(join(dir, name), joinShown(shown, name), rest);
      return;
    }
    if (!MAGIC.test(segment)) {
      const next = join(dir, segment);
      if (existsSync(next)) walk(next, joinShown(shown, segment), tail);
      return;
    }
    const re = segmentRegex(segment);
    for (const name of entries(dir)) {
      if (name.startsWith(".") && !segment.startsWith(".")) continue;
      if (re.test(name)) walk(join(dir, name), joinShown(shown, name), tail);
    }
  };
  walk(start, isAbsolute(pattern) ? "/" : "", segments);
  return [...results].sort();
}

function joinShown(shown: string, name: string): string {
  return shown === "" ? name : shown.endsWith("/") ? shown + name : `${shown}/${name}`;
}

function entries(dir: string): string[] {
  try {
    return statSync(dir).isDirectory() ? readdirSync(dir) : [];
  } catch {
    return [];
  }
}

function subdirs(dir: string): string[] {
  return entries(dir).filter((name) => {
    try {
      return statSync(join(dir, name)).isDirectory();
    } catch {
      return false;
    }
  });
}

/** One path segment's pattern as an anchored RegExp: `*` → any run, `?` → one char, `[...]` kept (`[!x]` → `[^x]`). */
export function segmentRegex(segment: string): RegExp {
  let re = "";
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i];
    if (c === "*") re += ".*";
    else if (c === "?") re += ".";
    else if (c === "[") {
      const close = segment.indexOf("]", i + 2);
      if (close === -1) re += "\\[";
      else {
        let body = segment.slice(i + 1, close);
        if (body.startsWith("!")) body = "^" + body.slice(1);
        re += `[${body.replace(/\\/g, "\\\\")}]`;
        i = close;
      }
    } else re += c.replace(/[.+^${}()|\\\]]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}
