// A plugin or study file that cannot be imported, through the real CLI (Node's own type stripping
// parses it, as for a user): the error is one line with the error and its file:line:column (not Node's
// multi-line stack with the source and a ^ mark), or a link error's file:line.
import { spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO, tempDir } from "../helpers/run-fixture.ts";

const root = tempDir("plugin-load-errors");
afterAll(() => rmSync(root, { recursive: true, force: true }));
writeFileSync(join(root, "package.json"), '{ "type": "module" }\n'); // plugin files are ES modules, as in the repository
const lib = (file: string) => JSON.stringify(join(REPO, "lib", file));

/** `merit ARGS` in a child process with working folder `root`: its exit code and stderr. */
function merit(...args: string[]): { code: number | null; stderr: string } {
  const r = spawnSync(process.execPath, [join(REPO, "lib", "bin.mjs"), ...args], { cwd: root, encoding: "utf8", env: { ...process.env, NO_COLOR: "1", MERIT_THREADS: "1" } });
  return { code: r.status, stderr: r.stderr };
}

describe("a file that cannot be imported", () => {
  it("a plugin with a syntax error: its first error with file:line:column, on one line", () => {
    writeFileSync(join(root, "bad.ts"), `import { registerMethod } from ${lib("plugin.ts")};\nconst parts = {;\nregisterMethod(parts);\n`);
    const r = merit("methods", "--plugin", "bad.ts");
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toEqual(['merit methods: --plugin bad.ts: failed to load (bad.ts:2:16: Unexpected token `;`. Expected identifier, string literal, numeric literal or [ for the computed key)']);
  });

  it("a plugin importing a name lib/plugin.ts does not export: the import's file:line", () => {
    writeFileSync(join(root, "link.ts"), `import { spidr } from ${lib("plugin.ts")};\nconsole.log(spidr);\n`);
    const r = merit("methods", "--plugin", "link.ts");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/^merit methods: --plugin link\.ts: failed to load \(link\.ts:1: The requested module '.*plugin\.ts' does not provide an export named 'spidr'\)$/m);
  });

  it("a plugin with syntax type stripping cannot erase (an enum): its place and Node's reason", () => {
    writeFileSync(join(root, "enum.ts"), `import { registerMethod } from ${lib("plugin.ts")};\nexport enum Kind { A, B }\nvoid registerMethod;\n`);
    const r = merit("methods", "--plugin", "enum.ts");
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toEqual(["merit methods: --plugin enum.ts: failed to load (enum.ts:2:8: TypeScript enum is not supported in strip-only mode)"]);
  });

  it("a study file with a syntax error: the same, naming the study file", () => {
    writeFileSync(join(root, "study.ts"), `import { defineStudy } from ${lib("experiment/study.ts")};\nexport default defineStudy({ name: "x", methods: ["merit", "iterative"] reference: "merit" });\n`);
    const r = merit("study", "plan", "study.ts");
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toEqual(['merit study: study.ts: failed to load (study.ts:2:73: Expected \',\', got \'ident\'); fix the study file']);
  });

  it("a study file defineStudy refuses: its one line once, not wrapped in \"failed to load\" with the fix said twice", () => {
    writeFileSync(join(root, "study.ts"), `import { defineStudy } from ${lib("experiment/study.ts")};\nexport default defineStudy({ name: "x", methods: ["merit", "merit_sc"], arms: { merit_sc: { method: "merit", self_consistency: { samples: 5 } } }, reference: "merit" });\n`);
    const r = merit("study", "plan", "study.ts");
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toEqual(["merit study: study.ts: defineStudy: arms.merit_sc: Unrecognized key(s) in object: 'self_consistency'; fix the study file (lib/experiment/study.ts lists every field)"]);
  });
});
