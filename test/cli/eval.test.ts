/**
 * `merit eval` (DESIGN.md §2 contract, METHOD.md §11.6): the last stdout line, the verdicts.jsonl and
 * summary.json files and their determinism, run through `main()` with a capturing IO and once as a real
 * `node lib/bin.mjs` subprocess; and bad input, each reported as one stderr line that names the file
 * (or flag) and the fix, with exit code 2.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import type { CommandIO } from "../../lib/cli/command.ts";
import { defaultJobs, jobsForWork } from "../../lib/cli/eval.ts";
import { budget } from "../helpers/budget.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SPIDER = join(ROOT, "data/spider");
const LLAMA = join(ROOT, "data/predictions/spider_dev__Llama3-8B.sql");
const DEEPSEEK = join(ROOT, "data/predictions/spider_dev__Deepseek-Coder-7B.sql");
const tmp = mkdtempSync(join(tmpdir(), "merit-cli-eval-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Runs `merit <argv>` in-process; stdout and stderr split into lines. */
async function merit(argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CommandIO = { out: (line) => out.push(...line.split("\n")), err: (line) => err.push(...line.split("\n")) };
  const code = await main(argv, io);
  return { code, out, err };
}

const evalArgs = (pred: string, ...rest: string[]) => ["eval", "--dataset", "spider", "--data", SPIDER, "--pred", pred, "--jobs", "2", ...rest];

describe("merit eval on real data", () => {
  it("prints EX last, writes verdicts.jsonl and a deterministic summary.json", async () => {
    const outA = join(tmp, "run-a");
    const outB = join(tmp, "run-b");
    const a = await merit(evalArgs(LLAMA, "--encoding", "latin1", "--out", outA));
    expect(a.code).toBe(0);
    // 434 / 972 = 0.44650… ⇒ 44.65 (METHOD.md §11.6 calibration).
    expect(a.out.at(-1)).toBe("EX 44.65 (434/972)");
    expect(a.err.some((line) => line.includes("wta_1 (62)"))).toBe(true); // the missing database is warned about

    const lines = readFileSync(join(outA, "verdicts.jsonl"), "utf8").split("\n");
    expect(lines.pop()).toBe(""); // newline-terminated
    expect(lines).toHaveLength(1034);
    const dev = JSON.parse(readFileSync(join(SPIDER, "dev.json"), "utf8")) as Array<{ db_id: string }>;
    const statuses = new Map<string, number>();
    lines.forEach((line, i) => {
      const v = JSON.parse(line) as Record<string, unknown>;
      expect(Object.keys(v)).toEqual(["index", "db_id", "status", "db_error"]);
      expect(v.index).toBe(i);
      expect(v.db_id).toBe(dev[i].db_id);
      statuses.set(v.status as string, (statuses.get(v.status as string) ?? 0) + 1);
    });
    expect(statuses.get("CORRECT")).toBe(434);
    expect(statuses.get("NO_DATABASE")).toBe(62);

    const summary = JSON.parse(readFileSync(join(outA, "summary.json"), "utf8"));
    expect(summary).toMatchObject({ dataset: "spider", n: 972, correct: 434, ex: 44.65, missing_databases: { wta_1: 62 } });

    const b = await merit(evalArgs(LLAMA, "--encoding", "latin1", "--out", outB));
    expect(b.code).toBe(0);
    expect(readFileSync(join(outB, "summary.json"))).toEqual(readFileSync(join(outA, "summary.json")));
    expect(readFileSync(join(outB, "verdicts.jsonl"))).toEqual(readFileSync(join(outA, "verdicts.jsonl")));
  });

  it("exits 0 as a real subprocess and prints EX last", () => {
    const run = spawnSync(process.execPath, ["lib/bin.mjs", ...evalArgs(DEEPSEEK)], { cwd: ROOT, encoding: "utf8", timeout: budget(120_000) });
    expect(run.status).toBe(0);
    // 712 / 972 = 0.73251… ⇒ 73.25.
    expect(run.stdout.trimEnd().split("\n").at(-1)).toBe("EX 73.25 (712/972)");
  });

  it("exits 2 as a real subprocess on bad input", () => {
    const run = spawnSync(process.execPath, ["lib/bin.mjs", ...evalArgs(join(tmp, "absent.sql"))], { cwd: ROOT, encoding: "utf8", timeout: budget(120_000) });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr.trimEnd().split("\n")).toHaveLength(1);
  });
});

describe("merit eval on bad input", () => {
  /** A copy of data/spider (JSON files only) with dev.json replaced by `devJson`. */
  function spiderCopy(name: string, devJson: string): string {
    const dir = join(tmp, name);
    mkdirSync(dir);
    copyFileSync(join(SPIDER, "tables.json"), join(dir, "tables.json"));
    writeFileSync(join(dir, "dev.json"), devJson);
    return dir;
  }

  /** Runs, expects exit 2, nothing on stdout, and exactly one stderr line; returns that line. */
  async function oneLineError(argv: string[]): Promise<string> {
    const r = await merit(argv);
    expect(r.code).toBe(2);
    expect(r.out).toEqual([]);
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toMatch(/^merit eval: /);
    return r.err[0];
  }

  it("malformed dataset JSON", async () => {
    const text = readFileSync(join(SPIDER, "dev.json"), "utf8");
    const dir = spiderCopy("broken-json", text.slice(0, 1000));
    const line = await oneLineError(["eval", "--dataset", "spider", "--data", dir, "--pred", LLAMA, "--encoding", "latin1"]);
    expect(line).toContain(join(dir, "dev.json"));
    expect(line).toContain("malformed JSON");
    expect(line).toMatch(/re-download or repair/);
  });

  it("unknown db_id in dev.json", async () => {
    const dev = JSON.parse(readFileSync(join(SPIDER, "dev.json"), "utf8")) as Array<{ db_id: string }>;
    dev[5].db_id = "no_such_db";
    const dir = spiderCopy("unknown-db", JSON.stringify(dev));
    const line = await oneLineError(["eval", "--dataset", "spider", "--data", dir, "--pred", LLAMA, "--encoding", "latin1"]);
    expect(line).toContain(join(dir, "dev.json"));
    expect(line).toContain('"no_such_db"');
    expect(line).toMatch(/tables file/);
  });

  it("missing predictions file", async () => {
    const absent = join(tmp, "absent.sql");
    const line = await oneLineError(evalArgs(absent));
    expect(line).toContain(absent);
    expect(line).toMatch(/not found; check the --pred path/);
  });

  it("wrong encoding (the Latin-1 Llama3 file read as UTF-8)", async () => {
    const line = await oneLineError(evalArgs(LLAMA));
    expect(line).toContain(LLAMA);
    expect(line).toMatch(/not valid UTF-8/);
    expect(line).toContain("--encoding latin1");
  });

  it("wrong line count", async () => {
    const short = join(tmp, "short.sql");
    writeFileSync(short, "SELECT 1\n".repeat(10));
    const line = await oneLineError(evalArgs(short));
    expect(line).toContain(short);
    expect(line).toMatch(/has 10 lines but the dataset has 1034 examples/);
    expect(line).toMatch(/one SQL per line/);
  });

  it("unknown protocol", async () => {
    const line = await oneLineError(evalArgs(DEEPSEEK, "--protocol", "lenient"));
    expect(line).toContain('"lenient"');
    expect(line).toMatch(/official, merit, strict/);
  });

  it("unknown flag (one line that points at --help, not the whole usage)", async () => {
    const line = await oneLineError(evalArgs(DEEPSEEK, "--bogus", "1"));
    expect(line).toMatch(/^merit eval: .*'--bogus'.*; see `merit eval --help`$/);
  });
});

describe("merit eval's default worker count", () => {
  it("one per 1,000 database files the examples reach, within 1..defaultJobs()", () => {
    expect(jobsForWork(0)).toBe(1);
    expect(jobsForWork(972)).toBe(1); // Spider dev: one file per example
    expect(jobsForWork(1001)).toBe(Math.min(defaultJobs(), 2));
    expect(jobsForWork(9720)).toBe(Math.min(defaultJobs(), 10)); // a test-suite layout of 10 files per database
    expect(jobsForWork(1e9)).toBe(defaultJobs());
  });
});
