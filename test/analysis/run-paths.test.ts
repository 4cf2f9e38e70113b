// Tests lib/analysis/run-paths.ts: --runs lists and globs expand to existing paths, sorted, deduplicated; empty globs are refused.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { expandRunArgs, globPaths, segmentRegex } from "../../lib/analysis/run-paths.ts";
import { UsageError } from "../../lib/errors.ts";

const root = mkdtempSync(join(tmpdir(), "merit-globs-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
for (const d of ["runs/merit-s0", "runs/merit-s1", "runs/iterative-s0", "runs/.hidden-s0", "deep/a/b/merit-s2"]) mkdirSync(join(root, d), { recursive: true });
writeFileSync(join(root, "runs", "notes-s0.txt"), "x");

describe("globPaths", () => {
  it("matches *, ?, [..] within a segment and ** across folders, skipping dotfiles", () => {
    expect(globPaths(`${root}/runs/*-s0`)).toEqual([`${root}/runs/iterative-s0`, `${root}/runs/merit-s0`]);
    expect(globPaths(`${root}/runs/merit-s?`)).toEqual([`${root}/runs/merit-s0`, `${root}/runs/merit-s1`]);
    expect(globPaths(`${root}/runs/merit-s[!0]`)).toEqual([`${root}/runs/merit-s1`]);
    expect(globPaths(`${root}/**/merit-s*`)).toEqual([`${root}/deep/a/b/merit-s2`, `${root}/runs/merit-s0`, `${root}/runs/merit-s1`]);
    expect(globPaths(`${root}/runs/*.txt`)).toEqual([`${root}/runs/notes-s0.txt`]);
  });
  it("escapes regex characters", () => {
    expect(segmentRegex("a.b*").test("a.bc")).toBe(true);
    expect(segmentRegex("a.b*").test("axbc")).toBe(false);
  });
});

describe("expandRunArgs", () => {
  it("splits commas, expands globs in order and drops duplicates", () => {
    expect(expandRunArgs([`${root}/runs/merit-s1,${root}/runs/merit-*`, `${root}/runs/iterative-s0`])).toEqual([
      `${root}/runs/merit-s1`,
      `${root}/runs/merit-s0`,
      `${root}/runs/iterative-s0`,
    ]);
  });
  it("passes plain paths through and refuses a glob without matches", () => {
    expect(expandRunArgs(["not/checked/here"])).toEqual(["not/checked/here"]);
    expect(() => expandRunArgs([`${root}/runs/zzz-*`])).toThrow(UsageError);
    expect(() => expandRunArgs([`${root}/runs/zzz-*`])).toThrow(/matches no file or folder/);
  });
});
