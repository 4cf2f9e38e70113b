/**
 * Every mistake on the command line gets one stderr line naming the flag (or path) and the fix, then
 * "see `merit X --help`", exit code 2, nothing on stdout — and nothing created or scored first:
 * missing flags and actions, numbers out of range, repeated streams, unwritable output paths, and
 * method names `merit report` does not know. Run in-process through main().
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import { parseConfig } from "../../lib/experiment/config.ts";
import { MeritError } from "../../lib/errors.ts";
import { buildTrajectory, repairTrajectory } from "../analysis/build-trajectory.ts";
import { writeRunDir } from "./run-dir-fixture.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SPIDER = join(ROOT, "data/spider");
const DEEPSEEK = join(ROOT, "data/predictions/spider_dev__Deepseek-Coder-7B.sql");
const tmp = mkdtempSync(join(tmpdir(), "merit-cli-mistakes-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A regular file, so that paths below it cannot be created. */
const FILE = join(tmp, "a-file");
writeFileSync(FILE, "not a directory\n");

/** A config that parses; nothing it names needs to exist for the checks below, which come first. */
const CONFIG = join(tmp, "config.json");
writeFileSync(CONFIG, JSON.stringify({ dataset: "spider", data_dir: SPIDER, initial_cache: join(tmp, "no-initial.json"), call_cache: join(tmp, "calls.sqlite") }));

async function merit(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(...l.split("\n")), err: (l) => err.push(...l.split("\n")) });
  return { code, out, err };
}

/** Exit 2, empty stdout, exactly one stderr line `merit <command>: …; see \`merit <command> --help\``. */
async function oneLine(argv: string[]): Promise<string> {
  const r = await merit(argv);
  expect(r.err).toHaveLength(1);
  expect(r.code).toBe(2);
  expect(r.out).toEqual([]);
  const command = argv[0];
  expect(r.err[0].startsWith(`merit ${command}: `)).toBe(true);
  expect(r.err[0].endsWith(`; see \`merit ${command} --help\``)).toBe(true);
  return r.err[0];
}

describe("missing flags and actions: one line, not the usage block", () => {
  it.each([
    [["eval", "--dataset", "spider"], "missing required flag --pred"],
    [["eval", "--pred", DEEPSEEK], "missing required flag --dataset"],
    [["run", "--config", CONFIG, "--seed", "0"], "missing required flag --method"],
    [["run", "--config", CONFIG, "--method", "merit"], "missing required flag --seed"],
    [["grid", "--config", CONFIG], "missing required flag --methods"],
    [["report", join(tmp, "runs")], "missing required flag --out"],
    [["annotate", "--run", tmp, "--seed", "0", "--out", join(tmp, "c.csv")], "missing required flag --sample"],
    [["classify"], "missing required flag --in"],
    [["initial"], "missing required flag --config"],
    [["stream-order", "--dataset", "spider"], "missing required flag --seed"],
    [["eval", "--dataset", "spider", "--pred", DEEPSEEK, "--bogus"], "Unknown option '--bogus'"],
  ])("%j", async (argv, message) => {
    expect(await oneLine(argv)).toContain(message);
  });

  it("`merit cache` without an action names the actions (before asking for --cache)", async () => {
    const line = await oneLine(["cache"]);
    expect(line).toMatch(/missing action: the actions are stats, verify, prune/);
    expect(line).not.toMatch(/--cache;/);
    expect(await oneLine(["cache", "stat", "--cache", FILE])).toMatch(/unknown action "stat" \(did you mean "stats"\?\)/);
  });
});

describe("stream-order defaults --data like eval", () => {
  it("`merit stream-order --dataset spider --seed 0` reads data/spider", async () => {
    const cwd = process.cwd();
    process.chdir(ROOT);
    try {
      const implicit = await merit(["stream-order", "--dataset", "spider", "--seed", "0"]);
      const explicit = await merit(["stream-order", "--dataset", "spider", "--data", SPIDER, "--seed", "0"]);
      expect(implicit.code).toBe(0);
      expect(implicit.out).toEqual(explicit.out);
      expect((JSON.parse(implicit.out[0]) as number[]).length).toBe(1034);
    } finally {
      process.chdir(cwd);
    }
  });
});

describe("numbers: integers in decimal digits, within range, one line naming the flag", () => {
  const evalArgs = (...rest: string[]) => ["eval", "--dataset", "spider", "--data", SPIDER, "--pred", DEEPSEEK, ...rest];
  const cores = availableParallelism();
  const maxJobs = Math.min(64, 4 * cores);
  it.each([
    [["run", "--config", CONFIG, "--method", "merit", "--seed", "-1"], '--seed: seeds must be non-negative integers, got "-1"'],
    [["run", "--config", CONFIG, "--method", "merit", "--seed", "1e3"], '--seed: seeds must be non-negative integers, got "1e3"'],
    [["run", "--config", CONFIG, "--method", "merit", "--seed", "0", "--limit", "-3"], '--limit must be an integer ≥ 1, got "-3"'],
    [["run", "--config", CONFIG, "--method", "merit", "--seed", "0", "--limit", "2.5"], '--limit must be an integer ≥ 1, got "2.5"'],
    [["run", "--config", CONFIG, "--method", "merit", "--seed", "0", "--sequences", "1000"], "--sequences must be an integer in 1..64"],
    [["run", "--config", CONFIG, "--method", "merit", "--seed", "0", "--threads", String(cores + 1)], `--threads must be an integer in 1..${cores}`],
    [["grid", "--config", CONFIG, "--methods", "merit", "--seeds", "0,-2"], '--seeds: seeds must be non-negative integers, got "-2"'],
    [["stream-order", "--dataset", "spider", "--seed", "-1"], '--seed must be a non-negative integer, got "-1"'],
    [["annotate", "--run", tmp, "--sample", "-3", "--seed", "0", "--out", join(tmp, "c.csv")], '--sample must be an integer ≥ 1, got "-3"'],
    [["annotate", "--run", tmp, "--sample", "3", "--seed", "1e3", "--out", join(tmp, "c.csv")], '--seed must be an integer ≥ 0, got "1e3"'],
    [["report", tmp, "--out", join(tmp, "r"), "--seed", "-1"], '--seed must be an integer ≥ 0, got "-1"'],
    [["report", tmp, "--out", join(tmp, "r"), "--level", "1.5"], '--level must be a number in (0, 1), got "1.5"'],
    [evalArgs("--jobs", "100000"), `--jobs must be an integer in 1..${maxJobs}`],
    [evalArgs("--jobs", "0"), `--jobs must be an integer in 1..${maxJobs}`],
    [evalArgs("--timeout", "1e9"), '--timeout must be a number in 0.001..2147483 (seconds; Node timers hold at most 2^31 − 1 ms), got "1e9"'],
    [evalArgs("--timeout", "2147484"), "--timeout must be a number in 0.001..2147483"],
    [evalArgs("--timeout", "-5"), '--timeout must be a number in 0.001..2147483'],
  ])("%j", async (argv, message) => {
    expect(await oneLine(argv)).toContain(message);
  });

  it("any non-negative seed is accepted (stream-order prints that seed's order)", async () => {
    const r = await merit(["stream-order", "--dataset", "spider", "--data", SPIDER, "--seed", "123456789012345678901234567890"]);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.out[0]) as number[]).length).toBe(1034);
  });

  it("the config's sql_timeout_s is bounded the same way", () => {
    const base = { dataset: "spider", data_dir: SPIDER, initial_cache: "x.json" };
    expect(parseConfig({ ...base, sql_timeout_s: 2_147_483 }, "c.json").sql_timeout_s).toBe(2_147_483);
    expect(() => parseConfig({ ...base, sql_timeout_s: 1e9 }, "c.json")).toThrow(MeritError);
    expect(() => parseConfig({ ...base, sql_timeout_s: 1e9 }, "c.json")).toThrow(/c\.json: invalid config — sql_timeout_s: at most 2147483 seconds/);
  });
});

describe("repeated streams are refused before anything is created", () => {
  it.each([
    [["--methods", "merit,merit"], '--methods names "merit" twice'],
    [["--methods", "merit", "--seeds", "0,0"], '--seeds names "0" twice'],
    [["--methods", "merit", "--seeds", "0,00"], "merit seed 0 is asked for twice"],
    [["--methods", "merit,,iterative"], "--methods has an empty entry"],
  ])("%j", async (flags, message) => {
    const out = join(tmp, `grid-${flags.join("").replace(/\W/g, "")}`);
    expect(await oneLine(["grid", "--config", CONFIG, ...flags, "--out", out])).toContain(message);
    expect(existsSync(out)).toBe(false);
  });
});

describe("output paths are checked before any work", () => {
  const underFile = join(FILE, "sub");
  it("eval --out under a file, or in /proc: one line before scoring, nothing written", async () => {
    const evalArgs = (out: string) => ["eval", "--dataset", "spider", "--data", SPIDER, "--pred", DEEPSEEK, "--out", out];
    // oneLine() also proves scoring never started: its progress lines would be on stderr
    expect(await oneLine(evalArgs(underFile))).toBe(`merit eval: --out ${underFile}: ${FILE} is a file, so nothing can be created under it; choose a writable location; see \`merit eval --help\``);
    expect(await oneLine(evalArgs(FILE))).toContain(`--out ${FILE}: is a file, not a directory`);
    if (existsSync("/proc/self")) expect(await oneLine(evalArgs("/proc/nope"))).toMatch(/--out \/proc\/nope: cannot write in \/proc \(E[A-Z]+\)/);
    expect(await oneLine(["eval", "--dataset", "spider", "--data", SPIDER, "--pred", DEEPSEEK, "--gold-cache", join(underFile, "g.sqlite")])).toContain("--gold-cache");
  });

  it("run / grid --out, report --out, annotate / classify / initial --out, data and models --dir", async () => {
    expect(await oneLine(["run", "--config", CONFIG, "--method", "merit", "--seed", "0", "--out", underFile])).toContain(`--out ${underFile}: ${FILE} is a file`);
    expect(await oneLine(["grid", "--config", CONFIG, "--methods", "merit", "--seeds", "0", "--out", underFile])).toContain(`--out ${join(underFile, "merit-s0")}: ${FILE} is a file`);
    expect(await oneLine(["report", tmp, "--out", underFile])).toContain(`--out ${underFile}: ${FILE} is a file`);
    expect(await oneLine(["annotate", "--run", tmp, "--sample", "2", "--seed", "0", "--out", join(underFile, "c.csv")])).toContain(`${FILE} is a file`);
    expect(await oneLine(["classify", "--in", FILE, "--out", tmp])).toContain(`--out ${tmp}: is a directory, not a file`);
    expect(await oneLine(["initial", "--config", CONFIG, "--from-pred", DEEPSEEK, "--out", join(underFile, "i.json")])).toContain(`${FILE} is a file`);
    expect(await oneLine(["data", "download", "spider", "--dir", underFile])).toContain(`--dir ${underFile}: ${FILE} is a file`);
    expect(await oneLine(["models", "download", "--dir", underFile])).toContain(`--dir ${underFile}: ${FILE} is a file`);
  });

  it("the config's call_cache is checked too", async () => {
    const config = join(tmp, "bad-cache-config.json");
    writeFileSync(config, JSON.stringify({ dataset: "spider", data_dir: SPIDER, initial_cache: "x.json", call_cache: join(underFile, "calls.sqlite") }));
    const out = join(tmp, "run-bad-cache");
    expect(await oneLine(["run", "--config", config, "--method", "merit", "--seed", "0", "--out", out])).toContain(`the config's call_cache ${join(underFile, "calls.sqlite")}: ${FILE} is a file`);
    expect(existsSync(out)).toBe(false);
  });

  it("the probe leaves nothing behind", async () => {
    const dir = join(tmp, "empty");
    mkdirSync(dir);
    await merit(["eval", "--dataset", "spider", "--data", SPIDER, "--pred", join(tmp, "absent.sql"), "--out", join(dir, "new")]);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe("merit report checks every method name it is given", () => {
  const runs = join(tmp, "report-runs");
  for (const method of ["merit", "no_bm25", "iterative"]) {
    writeRunDir(join(runs, `${method}-0`), [
      buildTrajectory({ query_id: "0", attempts: ["SELECT 0"], statuses: ["CORRECT"], method, stream_seed: 0 }),
      repairTrajectory("1", 1, true, { method, stream_seed: 0 }),
    ]);
  }
  const report = (...flags: string[]) => ["report", runs, "--out", join(tmp, "report-out"), "--resamples", "10", "--no-figures", ...flags];
  it.each([
    [["--full", "merritt", "--ablations", "no_bm25"], '--full: no run of method "merritt" (did you mean "merit"?); the runs hold iterative, merit, no_bm25'],
    [["--full", "merit", "--ablations", "no_bm52"], '--ablations: no run of method "no_bm52" (did you mean "no_bm25"?)'],
    [["--full", "merit", "--ablations", "no_bm25,no_bm25"], '--ablations names "no_bm25" twice'],
    [["--full", "merit", "--ablations", "merit,no_bm25"], "--ablations names the --full method merit"],
    [["--reference", "merrit"], '--reference: no run of method "merrit" (did you mean "merit"?)'],
  ])("%j", async (flags, message) => {
    expect(await oneLine(report(...flags))).toContain(message);
    expect(existsSync(join(tmp, "report-out"))).toBe(false);
  });

  it("correct names still report", async () => {
    const r = await merit(report("--full", "merit", "--ablations", "no_bm25", "--reference", "merit"));
    expect(r.code).toBe(0);
    expect(existsSync(join(tmp, "report-out", "tables", "table4.csv"))).toBe(true);
  });
});
