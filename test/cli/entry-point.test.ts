/**
 * The documented entry points (README "The `merit` command"): `npx merit`, `npm run merit --`, and
 * `node lib/bin.mjs`, each as a real subprocess from the repository root; `merit help <command>`.
 * `npx` gets an empty npm cache of its own, as on a fresh clone, so a stale link cannot hide a broken
 * `bin` entry.
 */
import { spawnSync } from "node:child_process";
import { accessSync, chmodSync, constants, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import { COMMANDS } from "../../lib/cli/index.ts";
import { budget } from "../helpers/budget.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const npmCache = mkdtempSync(join(tmpdir(), "merit-npm-cache-"));
afterAll(() => rmSync(npmCache, { recursive: true, force: true }));

const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { bin: Record<string, string>; scripts: Record<string, string> };

function run(command: string, args: string[]) {
  const r = spawnSync(command, args, {
    cwd: ROOT,
    encoding: "utf8",
    timeout: budget(120_000),
    env: { ...process.env, NO_COLOR: "1", npm_config_cache: npmCache, npm_config_update_notifier: "false", npm_config_fund: "false" },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The general help lists every registered command. */
function expectGeneralHelp(stdout: string): void {
  expect(stdout.split("\n")[0]).toMatch(/^usage: merit <command> \[flags\]/);
  for (const name of Object.keys(COMMANDS)) expect(stdout).toMatch(new RegExp(`^  ${name} +\\S`, "m"));
}

describe("the merit entry points", () => {
  it("package.json bin points at an executable node script", () => {
    const bin = join(ROOT, pkg.bin.merit);
    accessSync(bin, constants.X_OK);
    expect(readFileSync(bin, "utf8").split("\n")[0]).toBe("#!/usr/bin/env node");
  });

  it("`node lib/bin.mjs help` (what the Makefile runs)", () => {
    const r = run(process.execPath, ["lib/bin.mjs", "help"]);
    expect(r.code).toBe(0);
    expectGeneralHelp(r.stdout);
  });

  it("`npx merit help` from the repository root", () => {
    const r = run("npx", ["--no", "merit", "help"]);
    expect(r.stderr).not.toMatch(/not found/);
    expect(r.code).toBe(0);
    expectGeneralHelp(r.stdout);
  }, budget(120_000));

  it("`npm run merit -- help`", () => {
    const r = run("npm", ["run", "--silent", "merit", "--", "help"]);
    expect(r.code).toBe(0);
    expectGeneralHelp(r.stdout);
  }, budget(120_000));
});

describe("merit help", () => {
  async function capture(argv: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
    return { code, out: out.join("\n"), err };
  }

  it("`merit help <command>` prints that command's usage, like `merit <command> --help`", async () => {
    for (const name of ["eval", "stream-order", "cache"]) {
      const viaHelp = await capture(["help", name]);
      const viaFlag = await capture([name, "--help"]);
      expect(viaHelp.code).toBe(0);
      expect(viaHelp.out).toBe(viaFlag.out);
      expect(viaHelp.out.startsWith(`usage: merit ${name} `)).toBe(true);
    }
  });

  it("`merit help` alone prints the list and exits 0; no command at all exits 2", async () => {
    const help = await capture(["help"]);
    expect(help.code).toBe(0);
    expectGeneralHelp(help.out);
    expect((await capture([])).code).toBe(2);
  });

  it("a Node older than 24.3 hands the command to the Node 24 that make keeps in ~/.cache/merit-kit, or says in one line what to install (exit 2)", () => {
    // process.versions.node set to 24.2.0 before lib/bin.mjs runs: the check reads it first
    const old = ["--import", 'data:text/javascript,Object.defineProperty(process.versions,"node",{value:"24.2.0"})', "lib/bin.mjs"];
    const home = mkdtempSync(join(tmpdir(), "merit-home-"));
    try {
      const alone = spawnSync(process.execPath, [...old, "help"], { cwd: ROOT, encoding: "utf8", env: { ...process.env, HOME: home } });
      expect(alone.status).toBe(2);
      expect(alone.stdout).toBe("");
      expect(alone.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^merit: needs Node 24\.3 or later \(package\.json engines\), this is Node 24\.2\.0; install Node 24 LTS .*or run `make install`/)]);
      // scripts/node24.sh's cache folder, holding (a link to) this Node 24: the command runs there, exit code and all
      const bin = join(home, ".cache", "merit-kit", "node-v24.22.3-linux-x64", "bin");
      mkdirSync(bin, { recursive: true });
      symlinkSync(process.execPath, join(bin, "node"));
      const handed = spawnSync(process.execPath, [...old, "help"], { cwd: ROOT, encoding: "utf8", env: { ...process.env, HOME: home } });
      expect(handed.status, handed.stderr).toBe(0);
      expectGeneralHelp(handed.stdout);
      expect(spawnSync(process.execPath, [...old, "nosuch"], { cwd: ROOT, encoding: "utf8", env: { ...process.env, HOME: home } }).status).toBe(2);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
  describe("the hand-over from an older Node checks the cached binary first and happens once (issue 39 §17)", () => {
    const FAKE_OLD = 'data:text/javascript,Object.defineProperty(process.versions,"node",{value:"24.2.0"})';
    const old = ["--import", FAKE_OLD, "lib/bin.mjs"];
    /** A temp HOME whose ~/.cache/merit-kit/node-v24.22.3-linux-x64/bin/node is written by `make`; the command's result. */
    function withCachedNode(make: (node: string) => void, argv: string[] = ["help"], start: string[] = [process.execPath, ...old], extraEnv: Record<string, string> = {}) {
      const home = mkdtempSync(join(tmpdir(), "merit-home-"));
      try {
        const bin = join(home, ".cache", "merit-kit", "node-v24.22.3-linux-x64", "bin");
        mkdirSync(bin, { recursive: true });
        make(join(bin, "node"));
        const [cmd, ...pre] = start;
        return spawnSync(cmd!, [...pre, ...argv], { cwd: ROOT, encoding: "utf8", timeout: budget(60_000), env: { ...process.env, HOME: home, ...extraEnv } });
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    }
    const oneLine = (stderr: string) => stderr.trim().split("\n");

    it("an empty `node` file: one line naming it, exit 2 (was exit 0 with nothing printed)", () => {
      const r = withCachedNode((node) => {
        writeFileSync(node, "");
        chmodSync(node, 0o755);
      });
      expect(r.stdout).toBe("");
      expect(r.status).toBe(2);
      expect(oneLine(r.stderr)).toEqual([expect.stringMatching(/^merit: .*node-v24\.22\.3-linux-x64\/bin\/node does not run as Node 24\.3 or later \(it printed "", exit 0\); delete .* and run `make install` again$/)]);
    });

    it("a node-v24.* folder holding an older Node: refused before the hand-over, never handed over again (was a hand-over loop)", () => {
      // A Node that reports 24.2.0. The depth counter stops the old code's endless hand-over after 3 levels (exit 99).
      const r = withCachedNode((node) => {
        writeFileSync(node, `#!/bin/sh\nn=\${MERIT_TEST_DEPTH:-0}\n[ "$n" -ge 3 ] && exit 99\nMERIT_TEST_DEPTH=$((n + 1)) exec "${process.execPath}" --import '${FAKE_OLD}' "$@"\n`);
        chmodSync(node, 0o755);
      });
      expect(r.status, r.stderr).toBe(2);
      expect(r.stdout).toBe("");
      expect(oneLine(r.stderr)).toEqual([expect.stringMatching(/^merit: .*\/bin\/node does not run as Node 24\.3 or later \(it is Node 24\.2\.0\); delete .* and run `make install` again$/)]);
    });

    it("a command already handed over is never handed over again: one line, exit 2", () => {
      const r = withCachedNode((node) => symlinkSync(process.execPath, node), ["help"], [process.execPath, ...old], { MERIT_NODE_HANDOVER: "/somewhere/bin/node" });
      expect(r.status).toBe(2);
      expect(oneLine(r.stderr)).toEqual(["merit: was handed to /somewhere/bin/node, which runs Node 24.2.0, not 24.3 or later; delete its folder and run `make install` again"]);
    });

    it("the newest node-v24.* folder is the one tried (versions compared as numbers, not text)", () => {
      const r = withCachedNode((node) => {
        symlinkSync(process.execPath, node);
        // 24.9.0 sorts after 24.22.3 as text; as a version it is older, so the good 24.22.3 is used
        const older = join(node, "..", "..", "..", "node-v24.9.0-linux-x64", "bin");
        mkdirSync(older, { recursive: true });
        writeFileSync(join(older, "node"), "");
      });
      expect(r.status, r.stderr).toBe(0);
      expectGeneralHelp(r.stdout);
    });

    // The machine's own Node, when it is older than 24.3 (Debian's Node 20 here): the real thing, not a faked version.
    const system = spawnSync("/usr/bin/node", ["-p", "process.versions.node"], { encoding: "utf8" });
    const systemOld = system.status === 0 && /^(1\d|2[0-3])\.|^24\.[0-2]\./.test(system.stdout.trim());
    it.skipIf(!systemOld)("under the machine's older /usr/bin/node: an empty `node` file and an older Node are refused in one line; a good one runs the command", () => {
      const empty = withCachedNode((node) => {
        writeFileSync(node, "");
        chmodSync(node, 0o755);
      }, ["help"], ["/usr/bin/node", "lib/bin.mjs"]);
      expect([empty.status, oneLine(empty.stderr).length]).toEqual([2, 1]);
      const older = withCachedNode((node) => {
        // the machine's Node itself, behind the same depth guard as above
        writeFileSync(node, `#!/bin/sh\nn=\${MERIT_TEST_DEPTH:-0}\n[ "$n" -ge 3 ] && exit 99\nMERIT_TEST_DEPTH=$((n + 1)) exec /usr/bin/node "$@"\n`);
        chmodSync(node, 0o755);
      }, ["help"], ["/usr/bin/node", "lib/bin.mjs"]);
      expect([older.status, oneLine(older.stderr).length]).toEqual([2, 1]);
      expect(older.stderr).toMatch(/\(it is Node \d+\.\d+\.\d+\)/);
      const good = withCachedNode((node) => symlinkSync(process.execPath, node), ["help"], ["/usr/bin/node", "lib/bin.mjs"]);
      expect(good.status, good.stderr).toBe(0);
      expectGeneralHelp(good.stdout);
    });
  });

  it("`merit help evl` suggests the nearest command", async () => {
    const r = await capture(["help", "evl"]);
    expect(r.code).toBe(2);
    expect(r.err).toEqual(['merit: unknown command "evl" (did you mean "eval"?); run `merit help` for the list']);
  });
});
