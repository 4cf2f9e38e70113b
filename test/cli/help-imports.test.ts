/**
 * `merit help` imports no command module (lib/cli/index.ts SUMMARIES), and a package that cannot be
 * loaded — a native add-on an interrupted `npm ci` left out (better-sqlite3, hnswlib-node), or
 * node-llama-cpp not installed — is one stderr line naming the package and `npm ci`, exit 2 (lib/errors.ts
 * `missingPackageError`), once a command uses it (`--help` loads none of them). The missing packages
 * are simulated in child processes by test/helpers/hide-package.cjs; node_modules is never touched. Also: a valid call cache on a
 * read-only file system is named as such, not as "not an LLM call cache".
 */
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { COMMANDS, SUMMARIES } from "../../lib/cli/index.ts";
import { main } from "../../lib/cli.ts";
import { userFixableError } from "../../lib/errors.ts";
import { openCacheDatabase } from "../../lib/llm/call-cache.ts";
import { REPO, tempDir } from "../helpers/run-fixture.ts";
import { budget } from "../helpers/budget.ts";

const root = tempDir("help-imports");
const HOOK = join(REPO, "test", "helpers", "hide-package.cjs");
const cache = join(root, "calls.sqlite");
openCacheDatabase(cache).close();

/** `node lib/bin.mjs …` with the packages hidden as `env` says. */
function merit(args: string[], env: Record<string, string>) {
  const r = spawnSync(process.execPath, ["--require", HOOK, join(REPO, "lib", "bin.mjs"), ...args], { cwd: REPO, encoding: "utf8", env: { ...process.env, NO_COLOR: "1", ...env }, timeout: budget(60_000) });
  return { code: r.status, out: r.stdout, err: r.stderr.split("\n").filter(Boolean) };
}

describe("merit help", () => {
  it("every command has its summary in SUMMARIES, equal to its module's", async () => {
    expect(Object.keys(SUMMARIES)).toEqual(Object.keys(COMMANDS));
    for (const [name, load] of Object.entries(COMMANDS)) expect(SUMMARIES[name], name).toBe((await load()).summary);
  });

  it("works with every native add-on and node-llama-cpp missing: it loads none of them", () => {
    const r = merit(["help"], { MERIT_TEST_HIDE_ADDON: "better-sqlite3,hnswlib-node", MERIT_TEST_HIDE_PACKAGE: "node-llama-cpp" });
    expect(r.err).toEqual([]);
    expect(r.code).toBe(0);
    for (const [name, summary] of Object.entries(SUMMARIES)) expect(r.out).toContain(`  ${name.padEnd(14)} ${summary}`);
  }, budget(60_000));
});

describe("a package that cannot be loaded is one line naming it and `npm ci`", () => {
  it("hnswlib-node's add-on missing: `merit run --help` still works (HNSW loads on first use)", () => {
    const r = merit(["run", "--help"], { MERIT_TEST_HIDE_ADDON: "hnswlib-node" });
    expect(r.err).toEqual([]);
    expect(r.code).toBe(0);
  }, budget(60_000));

  it("better-sqlite3's add-on missing: `merit cache stats` gives one line, exit 2", () => {
    const r = merit(["cache", "stats", "--cache", cache], { MERIT_TEST_HIDE_ADDON: "better-sqlite3" });
    expect(r.code).toBe(2);
    expect(r.err).toEqual(["merit cache: the native add-on of the npm package better-sqlite3 cannot be loaded (Could not locate the bindings file); run `npm ci` in the merit-kit folder (an interrupted install leaves it incomplete)"]);
  }, budget(60_000));

  it("node-llama-cpp not installed: `merit run --help` still works (it loads on first use); a GGUF check gives one line, exit 2", () => {
    const help = merit(["run", "--help"], { MERIT_TEST_HIDE_PACKAGE: "node-llama-cpp" });
    expect(help.err).toEqual([]);
    expect(help.code).toBe(0);
    const gguf = join(root, "header-only.gguf");
    writeFileSync(gguf, Buffer.from("GGUF\0\0\0\0", "latin1"));
    const r = merit(["models", "check", "--file", gguf, "--no-load"], { MERIT_TEST_HIDE_PACKAGE: "node-llama-cpp" });
    expect(r.code).toBe(2);
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toMatch(/^merit models: the npm package node-llama-cpp is not installed \(Cannot find package 'node-llama-cpp' imported from .*\); run `npm ci` in the merit-kit folder$/);
  }, budget(60_000));

  it("hnswlib-node's real `bindings` error (a copy of the package without its build/): one line naming the package", () => {
    const copy = join(root, "node_modules", "hnswlib-node");
    mkdirSync(copy, { recursive: true });
    cpSync(join(REPO, "node_modules", "hnswlib-node", "package.json"), join(copy, "package.json"));
    let error: unknown = null;
    try {
      createRequire(join(REPO, "node_modules", "hnswlib-node", "lib", "index.js"))("bindings")({ bindings: "addon.node", module_root: copy });
    } catch (e) {
      error = e;
    }
    expect(String((error as Error).message)).toMatch(/^Could not locate the bindings file\. Tried:\n/);
    expect(userFixableError(error)?.message).toBe("the native add-on of the npm package hnswlib-node cannot be loaded (Could not locate the bindings file); run `npm ci` in the merit-kit folder (an interrupted install leaves it incomplete)");
  });
});

/** A read-only bind mount of `dir`, or null when this user cannot make one (then the test is skipped). */
function readOnlyView(dir: string): string | null {
  const view = join(root, "read-only");
  mkdirSync(view, { recursive: true });
  try {
    execFileSync("mount", ["--bind", dir, view], { stdio: "ignore" });
    execFileSync("mount", ["-o", "remount,bind,ro", view], { stdio: "ignore" });
    return view;
  } catch {
    return null;
  }
}

const shared = join(root, "shared");
mkdirSync(shared, { recursive: true });
openCacheDatabase(join(shared, "calls.sqlite")).close(); // WAL mode, no -shm/-wal left after close
const view = process.platform === "linux" && process.getuid?.() === 0 ? readOnlyView(shared) : null;
afterAll(() => {
  if (view) execFileSync("umount", [view]);
  rmSync(root, { recursive: true, force: true });
});

describe.skipIf(view === null)("a valid call cache on a read-only file system", () => {
  it("`merit cache stats` says the folder is read-only, not that the file is not a cache", async () => {
    const err: string[] = [];
    const code = await main(["cache", "stats", "--cache", join(view!, "calls.sqlite")], { out: () => undefined, err: (l) => err.push(l) });
    expect(code).toBe(2);
    expect(err).toEqual([`merit cache: ${join(view!, "calls.sqlite")}: cannot be read here (its folder is read-only and SQLite must create the -shm and -wal files of a WAL-mode cache beside it); copy the cache file to a writable folder and pass the copy, or make its folder writable`]);
  });
});
