// Fault injection on experiment runs (README "Reliability"; lib/experiment/run.ts, journal.ts,
// atomic-file.ts, run-lock.ts, completeness.ts): a kill before every file operation, short writes,
// full disks, planted temp files, stale and live locks, damaged journals and changed inputs under
// --resume. Every case ends in a byte-identical recovery (all files but manifest.json and stdout.log
// equal an undisturbed run) or a one-line refusal with exit code 2 that rewrote nothing.
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { hostname } from "node:os";
import { main } from "../../lib/cli.ts";
import { checkRunComplete } from "../../lib/experiment/completeness.ts";
import { fsLayer } from "../../lib/atomic-file.ts";
import { cacheFromChosenSql, loadSpider, SPIDER_DIR, spiderOracle, tempDir } from "../helpers/run-fixture.ts";
import { scenarioInitialSql } from "../helpers/scripted-scenario.ts";
import { cliLine, injectFs, killAtOperation, refusal, restoreFs, runScenarioInto, snapshot, stableFiles, type Scenario } from "./fixture.ts";
import { budget } from "../helpers/budget.ts";

/** The real write, bypassing any injection. */
const originalWrite = fsLayer.writeSync;
const fsLayerWrite = (fd: number, buffer: Uint8Array, offset: number, length: number) => originalWrite(fd, buffer, offset, length);

let root: string;
let s: Scenario;
let reference: string;
let partial: string; // crashed after the 4th LLM call: some episodes committed, status running
let n = 0;
const fresh = (name: string) => join(root, `${++n}-${name}`);
const copyOf = (dir: string, name: string) => {
  const to = fresh(name);
  cpSync(dir, to, { recursive: true });
  return to;
};

beforeAll(async () => {
  root = tempDir("integrity");
  const dataset = await loadSpider();
  const oracle = spiderOracle(dataset);
  const { cache, path: cachePath } = await cacheFromChosenSql(dataset, oracle, scenarioInitialSql(dataset), root);
  s = { dataset, oracle, cache, cachePath };
  reference = fresh("reference");
  await runScenarioInto(s, reference);
  partial = fresh("partial");
  await refusal(runScenarioInto(s, partial, { dieAt: 4 }));
}, budget(180_000));

afterEach(() => restoreFs());
afterAll(async () => {
  await s?.oracle.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

/** Expects a one-line, exit-2 refusal matching every pattern. */
function expectRefusal(error: Error, ...patterns: RegExp[]): string {
  const printed = cliLine(error);
  expect(printed, String(error.stack)).not.toBeNull();
  expect(printed!.exitCode).toBe(2);
  expect(printed!.line).not.toContain("\n");
  for (const p of patterns) expect(printed!.line).toMatch(p);
  return printed!.line;
}

describe("the scenario itself", () => {
  it("the partial run stopped part-way and the reference completed", () => {
    const lines = (dir: string) => readFileSync(join(dir, "trajectories.jsonl"), "utf8").split("\n").length - 1;
    expect(lines(reference)).toBe(5);
    expect(lines(partial)).toBeGreaterThan(0);
    expect(lines(partial)).toBeLessThan(5);
    expect(JSON.parse(readFileSync(join(partial, "manifest.json"), "utf8")).status).toBe("running");
  });
});

describe("a kill before any file operation resumes to the same bytes", () => {
  it("kill before each of the run's file operations (open, write — torn half-way —, fsync, close, rename, truncate), then --resume", async () => {
    // Count the operations of one undisturbed run.
    const counter = killAtOperation(Number.MAX_SAFE_INTEGER);
    await runScenarioInto(s, fresh("count"));
    const total = counter.count();
    restoreFs();
    expect(total).toBeGreaterThan(40);
    const want = stableFiles(reference);
    for (let k = 1; k <= total; k++) {
      const dir = fresh(`kill-${k}`);
      killAtOperation(k);
      // A kill in the final closes (after the last fsync) loses nothing: the run still finishes.
      const error = await runScenarioInto(s, dir).then(() => null, (e: unknown) => e);
      if (error !== null) expect(String(error)).toMatch(/simulated kill|EKILLED/);
      restoreFs();
      if (existsSync(join(dir, "config.json"))) await runScenarioInto(s, dir, { resume: true });
      else await runScenarioInto(s, dir); // killed before config.json existed: a fresh start
      expect(stableFiles(dir), `kill before operation ${k} of ${total}`).toEqual(want);
      rmSync(dir, { recursive: true, force: true });
    }
  }, budget(600_000));
});

describe("short writes and full disks (injected fs layer)", () => {
  it("short writes are completed: a run whose every write lands in pieces equals the reference", async () => {
    injectFs({ writeSync: (fd, buffer, offset, length) => fsLayerWrite(fd, buffer, offset, Math.max(1, Math.ceil(length / 3))) });
    const dir = fresh("short-writes");
    await runScenarioInto(s, dir);
    restoreFs();
    expect(stableFiles(dir)).toEqual(stableFiles(reference));
  });

  it("ENOSPC on a journal append: one line naming the file, the journal keeps no partial line, resume recovers", async () => {
    const dir = copyOf(partial, "enospc");
    const prompts = join(dir, "prompts.jsonl");
    const before = readFileSync(prompts);
    let armed = true;
    injectFs({
      writeSync: (fd, buffer, offset, length) => {
        if (armed && Buffer.from(buffer.subarray(offset, offset + length)).toString("utf8").includes('"prompt_hash"')) {
          armed = false;
          fsLayerWrite(fd, buffer, offset, 37); // some bytes land, then the disk is full
          throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
        }
        return fsLayerWrite(fd, buffer, offset, length);
      },
    });
    const error = await refusal(runScenarioInto(s, dir, { resume: true }));
    restoreFs();
    const line = expectRefusal(error, /no space left on device/, /free disk space/);
    expect(line).toMatch(/prompts\.jsonl: no space left on device after \d+ of \d+ bytes/);
    // Whatever journal took the hit was cut back to whole lines.
    for (const f of ["prompts.jsonl", "retrieval_log.jsonl", "trajectories.jsonl"]) {
      const text = readFileSync(join(dir, f), "utf8");
      expect(text === "" || text.endsWith("\n"), f).toBe(true);
    }
    expect(readFileSync(prompts).subarray(0, before.length).equals(before)).toBe(true);
    await runScenarioInto(s, dir, { resume: true });
    expect(stableFiles(dir)).toEqual(stableFiles(reference));
  });

  it("ENOSPC on an atomic replace keeps the good file and leaves no temp file", async () => {
    const dir = copyOf(reference, "enospc-atomic");
    const metrics = readFileSync(join(dir, "metrics.json"));
    injectFs({
      writeSync: (fd, buffer, offset, length) => {
        if (Buffer.from(buffer.subarray(offset, offset + length)).toString("utf8").includes("final_accuracy")) {
          fsLayerWrite(fd, buffer, offset, 10);
          throw Object.assign(new Error("ENOSPC"), { code: "ENOSPC" });
        }
        return fsLayerWrite(fd, buffer, offset, length);
      },
    });
    const error = await refusal(runScenarioInto(s, dir, { resume: true }));
    restoreFs();
    expectRefusal(error, /metrics\.json: no space left on device after \d+ of \d+ bytes; nothing was replaced/);
    expect(readFileSync(join(dir, "metrics.json")).equals(metrics)).toBe(true);
    expect(Object.keys(snapshot(dir)).filter((f) => f.includes(".tmp-"))).toEqual([]);
  });
});


describe("changed inputs under --resume are refused, naming the field and both values, rewriting nothing", () => {
  it("another initial cache (rebuilt at the same path)", async () => {
    const dir = copyOf(partial, "other-cache");
    const before = snapshot(dir);
    const other = { ...s.cache, cache_hash: "0".repeat(64) };
    const error = await refusal(runScenarioInto(s, dir, { resume: true, cache: other }));
    expectRefusal(error, /manifest\.json: the run was started with another initial cache: initial_cache\.cache_hash is "[0-9a-f]{64}" there but "0{64}" now/);
    expect(snapshot(dir)).toEqual(before);
  });

  it("another model file (same path, other sha256)", async () => {
    const dir = copyOf(partial, "other-model");
    const before = snapshot(dir);
    const error = await refusal(runScenarioInto(s, dir, { resume: true, identity: { modelHash: "f".repeat(64) } }));
    expectRefusal(error, /another model: backend\.modelHash is "none" there but "f{64}" now/);
    expect(snapshot(dir)).toEqual(before);
  });

  it("another code version (code_hash)", async () => {
    const dir = copyOf(partial, "other-code");
    const before = snapshot(dir);
    const error = await refusal(runScenarioInto(s, dir, { resume: true, manifest: { code_hash: "edited-code", git: { commit: "abc123" } } }));
    expectRefusal(error, /another code version: code_hash is "test-code" there but "edited-code" now; finish it with the kit code it started with/);
    expect(snapshot(dir)).toEqual(before);
  });

  it("another prompt template hash", async () => {
    const dir = copyOf(partial, "other-prompts");
    const error = await refusal(runScenarioInto(s, dir, { resume: true, manifest: { code_hash: "test-code", prompt_templates: { "spider-repair-v3": "x" } } }));
    expectRefusal(error, /another prompt templates: prompt_templates is absent there/);
  });

  it("another seed: names the field and both values; a completed run stays completed", async () => {
    const dir = copyOf(reference, "other-seed");
    const before = snapshot(dir);
    const error = await refusal(runScenarioInto(s, dir, { resume: true, seed: 2 }));
    expectRefusal(error, /holds a run with a different seed \(0 in its config\.json, 2 now\)/);
    expect(snapshot(dir)).toEqual(before);
  });

  it("the same inputs resume to the reference bytes", async () => {
    const dir = copyOf(partial, "same");
    await runScenarioInto(s, dir, { resume: true });
    expect(stableFiles(dir)).toEqual(stableFiles(reference));
  });
});

describe("folders whose identity cannot be proven are never adopted", () => {
  it("trajectories but no config.json: refused with and without --resume, nothing written", async () => {
    const dir = copyOf(reference, "no-config");
    rmSync(join(dir, "config.json"));
    const before = snapshot(dir);
    for (const resume of [false, true]) {
      const error = await refusal(runScenarioInto(s, dir, { resume, seed: 1 }));
      expectRefusal(error, /holds trajectories\.jsonl, manifest\.json, .* but no config\.json, so which run it holds cannot be proven/);
      expect(snapshot(dir)).toEqual(before);
    }
  });

  it("trajectories but no manifest.json: refused under --resume", async () => {
    const dir = copyOf(partial, "no-manifest");
    rmSync(join(dir, "manifest.json"));
    const error = await refusal(runScenarioInto(s, dir, { resume: true }));
    expectRefusal(error, /manifest\.json: is missing while trajectories exist/);
  });

  it("--out pointing at a file, or below one: one line, nothing created", async () => {
    const file = fresh("a-file");
    writeFileSync(file, "x");
    expectRefusal(await refusal(runScenarioInto(s, file)), /a-file: is a file, not a folder; choose another --out/);
    expectRefusal(await refusal(runScenarioInto(s, join(file, "run"))), /a-file: is a file, so the run folder .* cannot be created below it/);
    expect(readFileSync(file, "utf8")).toBe("x");
  });
});

describe("damaged run folders are refused before anything is rewritten", () => {
  it("a torn trajectory line in the middle of the file: one line naming file and line; the completed manifest is untouched", async () => {
    const dir = copyOf(reference, "torn-middle");
    const file = join(dir, "trajectories.jsonl");
    const lines = readFileSync(file, "utf8").split("\n");
    lines[1] = lines[1].slice(0, 40);
    writeFileSync(file, lines.join("\n"));
    const before = snapshot(dir);
    const error = await refusal(runScenarioInto(s, dir, { resume: true }));
    expectRefusal(error, /trajectories\.jsonl: line 2 of 5 is not valid JSON although it is complete/);
    expect(snapshot(dir)).toEqual(before);
    expect(JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")).status).toBe("completed");
  });

  it("a lost prompt line (an earlier short write): refused naming prompts.jsonl and both counts", async () => {
    const dir = copyOf(partial, "lost-prompt");
    const file = join(dir, "prompts.jsonl");
    const lines = readFileSync(file, "utf8").split("\n").filter(Boolean);
    writeFileSync(file, lines.slice(0, -1).map((l) => l + "\n").join(""));
    const before = snapshot(dir);
    const error = await refusal(runScenarioInto(s, dir, { resume: true }));
    expectRefusal(error, new RegExp(`prompts\\.jsonl: has ${lines.length - 1} lines but the \\d+ committed episodes wrote ${lines.length}`));
    expect(snapshot(dir)).toEqual(before);
  });

  it("a duplicated trajectory line: refused by resume, by the audit's and the report's completeness check", async () => {
    const dir = copyOf(reference, "duplicate");
    const file = join(dir, "trajectories.jsonl");
    const lines = readFileSync(file, "utf8").split("\n").filter(Boolean);
    writeFileSync(file, [...lines.slice(0, 4), lines[3]].map((l) => l + "\n").join(""));
    expectRefusal(await refusal(runScenarioInto(s, dir, { resume: true })), /stream position 3 occurs twice \(lines 4 and 5\)/);
    expect(() => checkRunComplete(dir)).toThrow(/stream position 3 occurs twice/);
  });

  it("a missing last trajectory of a completed run: the completeness check names stream_length", () => {
    const dir = copyOf(reference, "truncated");
    const file = join(dir, "trajectories.jsonl");
    const lines = readFileSync(file, "utf8").split("\n").filter(Boolean);
    writeFileSync(file, lines.slice(0, -1).map((l) => l + "\n").join(""));
    expect(() => checkRunComplete(dir)).toThrow(/has 4 trajectories but manifest\.json says stream_length 5/);
    expect(checkRunComplete(reference)).toHaveLength(5);
  });

  it("stale temp files of killed writes are removed on resume (the folder equals the reference)", async () => {
    const dir = copyOf(partial, "stale-tmp");
    for (const f of ["config.json", "manifest.json", "metrics.json"]) writeFileSync(join(dir, `${f}.tmp-999999`), "torn");
    await runScenarioInto(s, dir, { resume: true });
    expect(stableFiles(dir)).toEqual(stableFiles(reference));
  });

  it("a corrupt memory store says to delete memory/ and resume, and doing so rebuilds it byte for byte", async () => {
    const dir = copyOf(reference, "memory");
    const meta = join(dir, "memory", "memory_metadata.json");
    writeFileSync(meta, "{ torn");
    const error = await refusal(runScenarioInto(s, dir, { resume: true }));
    expectRefusal(error, /memory_metadata\.json: not valid JSON .*delete the run's memory\/ folder and resume the run \(--resume\)/);
    rmSync(join(dir, "memory"), { recursive: true });
    await runScenarioInto(s, dir, { resume: true });
    expect(stableFiles(dir)).toEqual(stableFiles(reference));
  });
});

describe("the run-folder lock", () => {
  it("a live holder (another process) refuses the run, naming its PID; nothing is written", async () => {
    const dir = copyOf(partial, "locked");
    const holder = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    try {
      writeFileSync(join(dir, "run.lock"), JSON.stringify({ pid: holder.pid, host: (await import("node:os")).hostname() }) + "\n");
      const before = snapshot(dir);
      const error = await refusal(runScenarioInto(s, dir, { resume: true }));
      expectRefusal(error, new RegExp(`is in use by process ${holder.pid} \\(.*run\\.lock\\); wait for it to finish or stop it`));
      expect(snapshot(dir)).toEqual(before);
    } finally {
      holder.kill("SIGKILL");
    }
  });

  it("`merit run --resume` on a locked folder: one line naming the holder's PID, exit 2, before any model loads", async () => {
    const dir = copyOf(partial, "locked-cli");
    const config = join(root, "scenario-config.json");
    writeFileSync(config, JSON.stringify({ dataset: "spider", data_dir: SPIDER_DIR, initial_cache: s.cachePath }));
    const holder = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    try {
      writeFileSync(join(dir, "run.lock"), JSON.stringify({ pid: holder.pid, host: hostname() }) + "\n");
      const before = snapshot(dir);
      const err: string[] = [];
      const code = await main(["run", "--config", config, "--method", "merit", "--seed", "0", "--limit", "5", "--out", dir, "--resume"], { out: () => {}, err: (l) => err.push(l) });
      expect(code).toBe(2);
      const errors = err.filter((l) => l.startsWith("merit run: "));
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(new RegExp(`is in use by process ${holder.pid} \\(`));
      expect(snapshot(dir)).toEqual(before);
    } finally {
      holder.kill("SIGKILL");
    }
  });

  it("two resumes of one folder at once: one runs, the other is refused; the folder equals the reference", async () => {
    const dir = copyOf(partial, "concurrent");
    const results = await Promise.allSettled([runScenarioInto(s, dir, { resume: true }), runScenarioInto(s, dir, { resume: true })]);
    const refused = results.filter((r) => r.status === "rejected") as PromiseRejectedResult[];
    expect(refused).toHaveLength(1);
    expectRefusal(refused[0].reason as Error, new RegExp(`is in use by process ${process.pid}`));
    expect(stableFiles(dir)).toEqual(stableFiles(reference));
    expect(existsSync(join(dir, "run.lock"))).toBe(false);
  });

  it("a stale lock of a dead process is taken over", async () => {
    const dir = copyOf(partial, "stale-lock");
    const dead = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    await new Promise((r) => dead.on("exit", r));
    writeFileSync(join(dir, "run.lock"), JSON.stringify({ pid: dead.pid, host: (await import("node:os")).hostname() }) + "\n");
    await runScenarioInto(s, dir, { resume: true });
    expect(stableFiles(dir)).toEqual(stableFiles(reference));
  });
});
