// A real full disk during a memory method's run (README "Reliability"; lib/memory/file-transaction.ts):
// the scripted MERIT scenario (about 70 kB of files) runs into a 256 KiB tmpfs partly taken by a filler file, for a range of
// filler sizes, so the disk fills at different points — in the journals, in an atomic replace, and in
// a memory write (its redo record or its changes). Each run either completes or stops with one line
// and exit code 2, leaves no `memory_commit.json.tmp`, and after the filler is removed `--resume`
// recovers the reference bytes.
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/run-fixture.ts";
import { cliLine, openScenarioIn, runScenarioInto, stableFiles, type Scenario } from "./fixture.ts";
import { budget } from "../helpers/budget.ts";

const root = tempDir("memory-full-disk");

/** A 256 KiB tmpfs at `dir`, or null when this user cannot mount one (then the test is skipped). */
function tinyTmpfs(dir: string): string | null {
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", dir], { stdio: "ignore" });
    return dir;
  } catch {
    return null;
  }
}

const tmpfs = process.platform === "linux" && process.getuid?.() === 0 ? tinyTmpfs(join(root, "tmpfs")) : null;
let s: Scenario;
let reference: string;

beforeAll(async () => {
  if (tmpfs === null) return;
  s = await openScenarioIn(root);
  reference = join(root, "reference");
  await runScenarioInto(s, reference);
}, budget(180_000));

afterAll(async () => {
  await s?.oracle.close();
  if (tmpfs) execFileSync("umount", [tmpfs]);
  rmSync(root, { recursive: true, force: true });
});

/** Every file below `dir` (relative paths). */
function filesBelow(dir: string, prefix = ""): string[] {
  return readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? filesBelow(join(dir, name), `${prefix}${name}/`) : [`${prefix}${name}`]));
}

describe.skipIf(tmpfs === null)("a memory method on a full disk (256 KiB tmpfs)", () => {
  it("for 11 filler sizes: complete, or one line and exit 2 with no temp file left; --resume after freeing space equals the reference", async () => {
    const failures: string[] = [];
    for (let k = 0; k < 11; k++) {
      const filler = join(tmpfs!, "filler");
      const out = join(tmpfs!, "run");
      const free = 8 + 10 * k; // KiB left for the run, which takes about 100 KiB of tmpfs pages
      writeFileSync(filler, Buffer.alloc((256 - free) * 1024, 1));
      let error: unknown = null;
      try {
        await runScenarioInto(s, out);
      } catch (e) {
        error = e;
      }
      if (error !== null) {
        const printed = cliLine(error);
        expect(printed, `${free} KiB free: ${(error as Error).stack}`).not.toBeNull();
        expect(printed!.exitCode).toBe(2);
        expect(printed!.line).not.toContain("\n");
        expect(printed!.line).toMatch(/no space left on device/);
        failures.push(printed!.line);
        expect(filesBelow(out).filter((f) => /\.tmp(-\d+)?$/.test(f))).toEqual([]);
        rmSync(filler);
        await runScenarioInto(s, out, { resume: true });
      } else {
        rmSync(filler);
      }
      expect(stableFiles(out)).toEqual(stableFiles(reference));
      rmSync(out, { recursive: true, force: true });
    }
    // the disk filled inside a memory write at least once (the case this test exists for)
    expect(failures.some((line) => line.includes("memory write")), failures.join("\n")).toBe(true);
  }, budget(300_000));
});
