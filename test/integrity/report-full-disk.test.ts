// A full disk under `merit report` and `merit study run` (issue 39 §22). The report writes every
// table, figure and HTML file whole or not at all, like the memory files (lib/atomic-file.ts): on a
// full disk it stops with one line naming the file and exit 2, and leaves no truncated figure and no
// temp file. A study whose copy of the replay call cache runs out of space names the full --runs
// disk (the copy's target, not the committed source cache), suggests --runs rather than --resume
// (which `study run` rejects), and leaves no partial cache for the next run to trust. The disk is
// filled by an injected ENOSPC through `fsLayer` (no root needed) and, where this user can mount
// one, by a real 256 KiB tmpfs.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { fsLayer } from "../../lib/atomic-file.ts";
import { main } from "../../lib/cli.ts";
import { userFixableError } from "../../lib/errors.ts";
import { REPLAY_CACHE } from "../../lib/experiment/replay-cache.ts";
import { runStudy } from "../../lib/report/study-run.ts";
import { tokenAccounting } from "../../lib/repair/trajectory-record.ts";
import type { Trajectory } from "../../lib/repair/trajectory.ts";
import { buildTrajectory, repairTrajectory } from "../analysis/build-trajectory.ts";
import { writeRunDir } from "../cli/run-dir-fixture.ts";
import { tempDir } from "../helpers/run-fixture.ts";

const root = tempDir("report-full-disk");
const original = { ...fsLayer };
afterEach(() => Object.assign(fsLayer, original));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** From now on, writes to files whose name matches `target` fail with ENOSPC after `allowed` bytes (a short write first). */
function fillDiskAt(target: RegExp, allowed: number): void {
  const names = new Map<number, string>();
  const written = new Map<number, number>();
  fsLayer.openSync = ((file: string, flags: string | number, mode?: number) => {
    const fd = original.openSync(file, flags, mode);
    names.set(fd, file);
    written.set(fd, 0);
    return fd;
  }) as typeof fsLayer.openSync;
  fsLayer.writeSync = (fd, buffer, offset, length) => {
    if (!target.test(names.get(fd) ?? "")) return original.writeSync(fd, buffer, offset, length);
    const left = allowed - written.get(fd)!;
    if (left <= 0) throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    const n = original.writeSync(fd, buffer, offset, Math.min(length, left));
    written.set(fd, written.get(fd)! + n);
    return n;
  };
}

/** Every file below `dir` (relative paths). */
function filesBelow(dir: string, prefix = ""): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? filesBelow(join(dir, name), `${prefix}${name}/`) : [`${prefix}${name}`]));
}

async function merit(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(...l.split("\n")) });
  // the error lines only (status lines start with "report:" or "study")
  return { code, out, err, errors: err.filter((l) => l.startsWith("merit ")) };
}

/** `t` with one more call of kind `critique` (the peer's own call kind). */
function withCritique(t: Trajectory): Trajectory {
  const prompt = [...t.prompt_tokens, 50];
  const output = [...t.output_tokens, 5];
  return { ...t, prompt_tokens: prompt, output_tokens: output, call_kinds: [...t.call_kinds, "critique"], truncated_prompt_tokens: [...t.truncated_prompt_tokens, 0], accounting: { ...t.accounting, ...tokenAccounting(prompt, output), llm_calls: prompt.length } };
}

// merit, iterative and a peer (expel_online), so the report draws peers-pareto.png too
const RUNS = join(root, "runs");
for (const method of ["merit", "iterative", "expel_online"]) {
  for (const seed of [0, 1]) {
    const common = { method, stream_seed: seed };
    const lines = [buildTrajectory({ query_id: "0", attempts: ["SELECT 0"], statuses: ["CORRECT"], ...common }), repairTrajectory("1", 1, true, common), repairTrajectory("2", 3, method !== "iterative", common)];
    writeRunDir(join(RUNS, `${method}-${seed}`), method === "expel_online" ? lines.map(withCritique) : lines);
  }
}
const REPORT = (out: string) => ["report", RUNS, "--out", out, "--resamples", "50", "--curve-resamples", "20", "--html"];

/** A PNG is whole when it ends with its IEND chunk. */
const wholePng = (file: string) => readFileSync(file).subarray(-8, -4).toString("latin1") === "IEND";

describe("merit report on a full disk", () => {
  it("a figure cut short is one line naming it, exit 2; no truncated figure and no temp file is left", async () => {
    const out = join(root, "report-injected");
    fillDiskAt(/peers-pareto\.png\.tmp-\d+$/, 16_384);
    const r = await merit(REPORT(out));
    expect(r.code).toBe(2);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatch(/^merit report: \S+peers-pareto\.png: no space left on device after 16384 of \d+ bytes; nothing was replaced; free disk space/);
    const files = filesBelow(out);
    expect(files.filter((f) => /\.tmp-\d+$/.test(f))).toEqual([]);
    expect(files).not.toContain("figures/peers-pareto.png");
    for (const f of files.filter((f) => f.endsWith(".png"))) expect(wholePng(join(out, f)), f).toBe(true);
    // with room again the same command writes everything
    Object.assign(fsLayer, original);
    expect((await merit(REPORT(out))).code).toBe(0);
    expect(wholePng(join(out, "figures", "peers-pareto.png"))).toBe(true);
  });

  it("an HTML data chunk or asset cut short: the same one line (the explorer's files are written whole too)", async () => {
    const out = join(root, "report-html");
    fillDiskAt(/assets\/viewer\.css\.tmp-\d+$/, 10);
    const r = await merit(REPORT(out));
    expect(r.code).toBe(2);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatch(/assets\/viewer\.css: no space left on device after 10 of \d+ bytes/);
    expect(filesBelow(out).filter((f) => /\.tmp-\d+$/.test(f) || f === "assets/viewer.css")).toEqual([]);
  });
});

/** A 256 KiB tmpfs at `dir`, or null when this user cannot mount one (then that test is skipped). */
function tinyTmpfs(dir: string): string | null {
  if (process.platform !== "linux" || process.getuid?.() !== 0) return null;
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", dir], { stdio: "ignore" });
    return dir;
  } catch {
    return null;
  }
}

describe("merit report on a real full disk (256 KiB tmpfs)", () => {
  const tmpfs = tinyTmpfs(join(root, "tmpfs"));
  afterAll(() => {
    if (tmpfs) execFileSync("umount", [tmpfs]);
  });
  it.skipIf(tmpfs === null)("stops with one line and exit 2; every file left is whole, no temp file", async () => {
    const out = join(tmpfs!, "report");
    const r = await merit(REPORT(out));
    expect(r.code).toBe(2);
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatch(/: no space left on device/);
    expect(r.errors[0]).not.toMatch(/internal error|\n\s+at /);
    const files = filesBelow(out);
    expect(files.filter((f) => /\.tmp-\d+$/.test(f))).toEqual([]);
    for (const f of files.filter((f) => f.endsWith(".png"))) expect(wholePng(join(out, f)), f).toBe(true);
  });
});

describe("merit study run: the replay cache's copy on a full disk", () => {
  it("names the full --runs disk (the copy's target), suggests --runs, not --resume, and leaves no partial cache", async () => {
    const runs = join(root, "study-runs");
    fillDiskAt(/llm-call-cache\.sqlite\.tmp-\d+$/, 65_536);
    const r = await merit(["study", "run", "studies/template/study.ts", "--runs", runs, "--out", join(root, "study-results")]);
    expect(r.code).toBe(2);
    expect(r.err.filter((l) => l.startsWith("merit study"))).toHaveLength(1);
    const line = r.err.find((l) => l.startsWith("merit study"))!;
    expect(line).toContain(`${join(runs, "llm-call-cache.sqlite")}: no space left on the disk of the study's runs folder ${runs}`);
    expect(line).toContain("pass --runs DIR on a disk with room");
    expect(line).not.toContain("--resume");
    expect(line).not.toMatch(new RegExp(`${REPLAY_CACHE.replace(/[.]/g, "\\.")}:`));
    expect(filesBelow(runs).filter((f) => f.startsWith("llm-call-cache"))).toEqual([]);
  });

  it("the library says the same (runStudy), before any run starts", async () => {
    const runs = join(root, "study-runs-lib");
    fillDiskAt(/llm-call-cache\.sqlite\.tmp-\d+$/, 0);
    await expect(runStudy("studies/template/study.ts", { runs, out: join(root, "study-results-lib") })).rejects.toThrow(/no space left on the disk of the study's runs folder/);
    expect(existsSync(join(runs, "llm-call-cache.sqlite"))).toBe(false);
  });

  it("a raw copy or rename that runs out of space names its target, not its source", () => {
    const copy = Object.assign(new Error("ENOSPC: no space left on device, copyfile"), { code: "ENOSPC", path: "results/demo-call-cache.sqlite", dest: "/full/runs/llm-call-cache.sqlite" });
    expect(userFixableError(copy)?.message).toMatch(/^\/full\/runs\/llm-call-cache\.sqlite: no space left on device; .*`merit study run` by itself$/);
    const missing = Object.assign(new Error("ENOENT"), { code: "ENOENT", path: "results/demo-call-cache.sqlite", dest: "/runs/x.sqlite" });
    expect(userFixableError(missing)?.message).toMatch(/^results\/demo-call-cache\.sqlite: no such file/);
  });
});
