// Fault injection on the files every command reads or writes (README "Reliability"): a damaged
// call-cache row or file, garbage/empty/truncated databases, hostile prediction lines, the SQL lexer
// on unclosed comments, an orphaned SQL worker, and a real full disk (a tiny tmpfs, when this user
// may mount one). Each case is a one-line refusal naming the file with exit code 2, or a bounded,
// unchanged result — never an internal error, never a silently different result.
import { execFileSync, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import { discoverDatabases, sqliteFileProblem, verifyDatabaseFiles } from "../../lib/data/databases.ts";
import { userFixableError } from "../../lib/errors.ts";
import { writeFileAtomic } from "../../lib/atomic-file.ts";
import { JsonlJournal } from "../../lib/experiment/journal.ts";
import { cacheStats, verifyCache } from "../../lib/llm/cache-admin.ts";
import { CallCache } from "../../lib/llm/call-cache.ts";
import { checkPredictionLines, evaluatePredictions, MAX_PREDICTION_CHARS } from "../../lib/oracle/evaluate.ts";
import { readPredictions } from "../../lib/oracle/predictions.ts";
import { tokenizeSql } from "../../lib/oracle/sql-lexer.ts";
import { ScriptedBackend } from "../llm/fixtures/scripted-backend.ts";
import { loadSpider, REPO, tempDir } from "../helpers/run-fixture.ts";
import { budget } from "../helpers/budget.ts";

const root = tempDir("integrity-files");
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = (name: string) => join(root, `${++n}-${name}`);

function capture() {
  const lines = { out: [] as string[], err: [] as string[] };
  return { lines, io: { out: (l: string) => lines.out.push(l), err: (l: string) => lines.err.push(l) } };
}

describe("errors from node:fs and SQLite become one line (lib/cli.ts via userFixableError)", () => {
  it("ENOSPC, ENOTDIR, SQLITE_FULL and SQLITE_NOTADB get the file (where known) and a fix, exit 2; a bug stays an internal error", async () => {
    const enospc = Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC", path: "/data/out/verdicts.jsonl" });
    expect(userFixableError(enospc)?.message).toBe("/data/out/verdicts.jsonl: no space left on device; free disk space (or write elsewhere) and run the command again; a killed or failed `merit run` or `merit grid` continues with --resume, `merit study run` by itself");
    const notdir = Object.assign(new Error("ENOTDIR"), { code: "ENOTDIR", path: "/data/file/out" });
    expect(userFixableError(notdir)?.message).toMatch(/^\/data\/file\/out: a part of this path is a file, not a folder; /);
    const full = Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
    expect(userFixableError(full)?.message).toMatch(/disk is full.*free disk space/);
    expect(userFixableError(Object.assign(new Error("file is not a database"), { code: "SQLITE_NOTADB" }))?.exitCode).toBe(2);
    expect(userFixableError(new TypeError("x is undefined"))).toBeNull();
    // Through main(): a `merit cache stats` on a folder is one line, not a stack trace.
    const { lines, io } = capture();
    const code = await main(["cache", "stats", "--cache", root], io);
    expect(code).toBe(2);
    expect(lines.err).toHaveLength(1);
    expect(lines.err[0]).not.toMatch(/internal error|\n\s+at /);
  });
});

describe("the LLM call cache", () => {
  it("a hit whose row no longer matches its row_hash is refused with one line naming the file", async () => {
    const file = fresh("calls.sqlite");
    const warm = new CallCache(new ScriptedBackend(), file);
    const first = await warm.generate({ prompt: "q1", maxOutputTokens: 8 });
    await warm.close();
    const db = new Database(file);
    db.prepare("UPDATE calls SET text = ? WHERE 1").run(first.text.slice(0, -1) + "X"); // one byte changed
    db.close();
    const cache = new CallCache(new ScriptedBackend(), file);
    const error = await cache.generate({ prompt: "q1", maxOutputTokens: 8 }).then(() => null, (e: unknown) => e);
    await cache.close();
    const printed = userFixableError(error);
    expect(printed?.exitCode).toBe(2);
    expect(printed?.message).toMatch(/calls\.sqlite: the cached call [0-9a-f]{12} fails its row_hash check .*merit cache verify/);
  });

  it("a garbage cache file: the run, `cache stats` and `cache verify` each give one line, exit 2", async () => {
    const file = fresh("garbage.sqlite");
    writeFileSync(file, "this is not a database, just text that happens to be long enough ".repeat(40));
    expect(() => new CallCache(new ScriptedBackend(), file)).toThrow(/garbage\.sqlite: is not an LLM call cache \(file is not a database\)/);
    expect(() => cacheStats(file)).toThrow(/is not an LLM call cache/);
    expect(() => verifyCache(file)).toThrow(/is not an LLM call cache/);
    for (const action of ["stats", "verify"]) {
      const { lines, io } = capture();
      expect(await main(["cache", action, "--cache", file], io)).toBe(2);
      expect(lines.err).toHaveLength(1);
      expect(lines.err[0]).toMatch(/^merit cache: .*garbage\.sqlite: is not an LLM call cache/);
    }
    expect(readFileSync(file, "utf8")).toMatch(/^this is not a database/); // untouched
  });
});

describe("databases are checked when a dataset loads", () => {
  const pets = join(REPO, "data", "spider", "database", "pets_1", "pets_1.sqlite");

  it("a real database passes; empty, garbage and truncated copies are named with the fix", async () => {
    expect(sqliteFileProblem(pets)).toBeNull();
    const dir = fresh("dbs");
    mkdirSync(join(dir, "a"), { recursive: true });
    const cases: [string, (p: string) => void, RegExp][] = [
      ["empty", (p) => writeFileSync(p, ""), /is empty \(0 bytes\)/],
      ["garbage", (p) => writeFileSync(p, Buffer.alloc(8192, 0x41)), /is not an SQLite database/],
      ["truncated", (p) => (copyFileSync(pets, p), truncateSync(p, statSync(pets).size - 1000)), /is truncated/],
      ["half", (p) => (copyFileSync(pets, p), truncateSync(p, statSync(pets).size / 2)), /is truncated/],
    ];
    for (const [name, make, problem] of cases) {
      const path = join(dir, "a", `${name}.sqlite`);
      make(path);
      expect(sqliteFileProblem(path), name).toMatch(problem);
      rmSync(path);
    }
    // Through discovery: the file is named in one line.
    copyFileSync(pets, join(dir, "a", "a.sqlite"));
    writeFileSync(join(dir, "a", "zz_variant.sqlite"), "");
    const discovery = await discoverDatabases(dir);
    expect(() => verifyDatabaseFiles(discovery)).toThrow(/zz_variant\.sqlite: is empty \(0 bytes\); restore the file/);
  });
});

describe("merit eval stays bounded", () => {
  it("a prediction line over the cap is refused naming the line", () => {
    const file = fresh("pred.sql");
    writeFileSync(file, ["SELECT 1", " ".repeat(MAX_PREDICTION_CHARS + 1), "SELECT 2"].join("\n") + "\n");
    const predictions = readPredictions(file, "utf8", 3);
    expect(() => checkPredictionLines(predictions)).toThrow(/pred\.sql: line 2 is 100,001 characters long, over the limit of 100,000/);
  });

  it("verdicts keep no result rows (memory holds only what the summary and verdicts.jsonl need)", async () => {
    const dataset = await loadSpider();
    const file = fresh("pred-rows.sql");
    // Three real queries with rows; every other line empty (scored without touching a database).
    const lines = dataset.examples.map((e, i) => (i < 3 ? e.goldSql : ""));
    writeFileSync(file, lines.join("\n") + "\n");
    const result = await evaluatePredictions(dataset, readPredictions(file, "utf8", dataset.examples.length), { protocol: "merit", timeoutMs: 30_000, jobs: 1 });
    expect(result.verdicts.slice(0, 3).map((v) => v.status)).toEqual(["CORRECT", "CORRECT", "CORRECT"]);
    expect(result.verdicts.every((v) => v.predictedRows === null)).toBe(true);
  });

  it("the lexer is linear on unclosed block comments (`SELECT 1 ` + 163,840 × `/* `) and loses no character", () => {
    // Before the fix each unclosed `/*` rescanned to the end of the text (~30 s here); the test
    // timeout below is a generous bound, not a benchmark.
    const sql = "SELECT 1 " + "/* ".repeat(163_840);
    const tokens = tokenizeSql(sql);
    expect(tokens.map((t) => t.text).join("")).toBe(sql);
    expect(tokens.filter((t) => t.kind === "comment")).toEqual([]);
    // Closed comments are still one token each, and an unclosed tail after them is not a comment.
    expect(tokenizeSql("a /* x */ b /* y").map((t) => [t.kind, t.text])).toEqual([
      ["word", "a"], ["whitespace", " "], ["comment", "/* x */"], ["whitespace", " "], ["word", "b"], ["whitespace", " "],
      ["operator", "/"], ["operator", "*"], ["whitespace", " "], ["word", "y"],
    ]);
    expect(tokenizeSql("/* a */ /* b */x").map((t) => t.text)).toEqual(["/* a */", " ", "/* b */", "x"]);
  }, budget(20_000));
});

describe("SQL workers die with their parent", () => {
  it("SIGKILL of the parent while a worker runs a runaway recursive CTE: the worker exits too", async () => {
    const db = join(REPO, "data", "spider", "database", "pets_1", "pets_1.sqlite");
    const parent = spawn(process.execPath, [join(REPO, "test", "integrity", "orphan-parent.mjs"), join(REPO, "lib", "oracle", "sql-worker.mjs"), db], { stdio: ["ignore", "pipe", "inherit"] });
    const workerPid = await new Promise<number>((resolve, reject) => {
      parent.stdout.on("data", (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
      parent.on("exit", () => reject(new Error("parent exited early")));
    });
    await new Promise((r) => setTimeout(r, 500)); // the statement is running
    expect(alive(workerPid)).toBe(true);
    parent.kill("SIGKILL");
    let gone = false;
    for (let i = 0; i < 50 && !gone; i++) {
      await new Promise((r) => setTimeout(r, 100));
      gone = !alive(workerPid);
    }
    if (!gone) process.kill(workerPid, "SIGKILL"); // never leave an orphan behind, even when failing
    expect(gone).toBe(true);
  }, budget(60_000));

  it("SIGKILL of a sandbox's process while both its workers run runaways: the pool's watchdog shell kills them", async () => {
    const db = join(REPO, "data", "spider", "database", "pets_1", "pets_1.sqlite");
    const parent = spawn(process.execPath, [join(REPO, "test", "integrity", "orphan-pool-parent.ts"), db], { stdio: ["ignore", "pipe", "inherit"] });
    const pids = await new Promise<number[]>((resolve, reject) => {
      parent.stdout.on("data", (chunk: Buffer) => resolve(chunk.toString().trim().split(" ").map(Number)));
      parent.on("exit", () => reject(new Error("parent exited early")));
    });
    expect(pids).toHaveLength(2);
    await new Promise((r) => setTimeout(r, 500)); // the statements are running
    expect(pids.map(alive)).toEqual([true, true]);
    // They were told to leave the watchdog to the pool (no thread of their own).
    for (const pid of pids) expect(readFileSync(`/proc/${pid}/environ`, "utf8").split("\0")).toContain("MERIT_SQL_WATCHDOG=pool");
    parent.kill("SIGKILL");
    let gone = false;
    for (let i = 0; i < 50 && !gone; i++) {
      await new Promise((r) => setTimeout(r, 100));
      gone = pids.every((pid) => !alive(pid));
    }
    for (const pid of pids) if (alive(pid)) process.kill(pid, "SIGKILL"); // never leave an orphan behind
    expect(gone).toBe(true);
  }, budget(60_000));
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie (exited, not yet reaped by init) counts as gone.
  try {
    return !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true;
  }
}

/** A 64 KiB tmpfs at `dir`, or null when this user cannot mount one (then the test is skipped). */
function tinyTmpfs(dir: string): string | null {
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", dir], { stdio: "ignore" });
    return dir;
  } catch {
    return null;
  }
}

const tmpfs = process.platform === "linux" && process.getuid?.() === 0 ? tinyTmpfs(join(root, "tmpfs")) : null;
afterAll(() => {
  if (tmpfs) execFileSync("umount", [tmpfs]);
});

describe.skipIf(tmpfs === null)("a real full disk (64 KiB tmpfs)", () => {
  it("an atomic replace that does not fit fails with one line and keeps the good file; no temp file remains", () => {
    const good = join(tmpfs!, "initial_cache.json");
    writeFileAtomic(good, "good\n".repeat(2000)); // 10 KB
    let error: unknown = null;
    try {
      writeFileAtomic(good, "x".repeat(200_000));
    } catch (e) {
      error = e;
    }
    const printed = userFixableError(error);
    expect(printed?.exitCode).toBe(2);
    expect(printed?.message).toMatch(/initial_cache\.json: no space left on device after \d+ of 200000 bytes; nothing was replaced; free disk space/);
    expect(readFileSync(good, "utf8")).toBe("good\n".repeat(2000));
    expect(existsSync(`${good}.tmp-${process.pid}`)).toBe(false);
  });

  it("a journal append that does not fit leaves the journal exactly as before", () => {
    const journal = new JsonlJournal(join(tmpfs!, "prompts.jsonl"));
    journal.append(['{"a":1}', '{"a":2}']);
    const before = readFileSync(journal.path);
    expect(() => journal.append([JSON.stringify({ prompt: "p".repeat(300_000) })])).toThrow(/prompts\.jsonl: no space left on device/);
    journal.close();
    expect(readFileSync(journal.path).equals(before)).toBe(true);
    expect(new JsonlJournal(journal.path).recover()).toEqual([{ a: 1 }, { a: 2 }]);
  });
});
