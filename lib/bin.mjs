#!/usr/bin/env node
// The `merit` command: imports lib/cli.ts as it is — Node 24 strips the TypeScript types itself
// (strip-only: tsconfig's erasableSyntaxOnly keeps the sources within it). No build step, no loader
// hook; Node 24.3 and later print no warning for it (package.json engines). Node's own compile cache
// (keyed by each file's content; in $TMPDIR/node-compile-cache, NODE_COMPILE_CACHE=DIR moves it,
// NODE_DISABLE_COMPILE_CACHE=1 turns it off) keeps the stripped modules and their V8 code between runs,
// so a command starts without stripping its module graph again.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import nodeModule from "node:module";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

// An older Node cannot load the .ts sources at all. It hands the command to the Node 24 that
// scripts/node24.sh (run by `make`) keeps in ~/.cache/merit-kit, or says in one line what to install.
// The cached binary's version is checked before the hand-over (an empty or truncated file, or an
// older Node in a node-v24.* folder, is refused in one line), and a command is handed over once
// only: MERIT_NODE_HANDOVER marks the child, which refuses rather than hand over again.
const HANDOVER = "MERIT_NODE_HANDOVER";
/** "24.22.3" → [24, 22, 3]; anything else → null. */
const parseVersion = (text) => (/^\d+\.\d+\.\d+$/.test(text) ? text.split(".").map(Number) : null);
const recent = ([a, b]) => a > 24 || (a === 24 && b >= 3);
const [major, minor] = process.versions.node.split(".").map(Number);
if (!recent([major, minor])) {
  const fail = (line) => {
    process.stderr.write(`merit: ${line}\n`);
    process.exit(2);
  };
  if (process.env[HANDOVER] !== undefined) {
    fail(`was handed to ${process.env[HANDOVER]}, which runs Node ${process.versions.node}, not 24.3 or later; delete its folder and run \`make install\` again`);
  }
  const cache = join(homedir(), ".cache", "merit-kit");
  const fetched = (existsSync(cache) ? readdirSync(cache) : [])
    .map((d) => ({ dir: join(cache, d), version: parseVersion(/^node-v(\d+\.\d+\.\d+)-linux-x64$/.exec(d)?.[1] ?? "") }))
    .filter((f) => f.version !== null && f.version[0] >= 24)
    .sort((x, y) => y.version[0] - x.version[0] || y.version[1] - x.version[1] || y.version[2] - x.version[2]);
  if (fetched.length === 0) {
    fail(`needs Node 24.3 or later (package.json engines), this is Node ${process.versions.node}; install Node 24 LTS (nvm install 24, fnm install 24, or your package manager), or run \`make install\` (on Linux x64 it fetches one) — README "Set up"`);
  }
  // The newest folder decides: a broken one is named, not skipped for an older one.
  const { dir } = fetched[0];
  const node = join(dir, "bin", "node");
  const probe = spawnSync(node, ["-p", "process.versions.node"], { encoding: "utf8", timeout: 30_000, env: { ...process.env, [HANDOVER]: node } });
  const version = probe.error === undefined && probe.status === 0 ? parseVersion(probe.stdout.trim()) : null;
  if (version === null || !recent(version)) {
    const found = probe.error !== undefined ? probe.error.message : version === null ? `it printed ${JSON.stringify(probe.stdout.trim().slice(0, 40))}, exit ${probe.status ?? probe.signal}` : `it is Node ${version.join(".")}`;
    fail(`${node} does not run as Node 24.3 or later (${found}); delete ${dir} and run \`make install\` again`);
  }
  const child = spawnSync(node, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: "inherit", env: { ...process.env, [HANDOVER]: node } });
  if (child.error) fail(`cannot run ${node} (${child.error.message}); delete ${dir} and run \`make install\` again`);
  process.exit(child.status ?? 1);
}
delete process.env[HANDOVER]; // the kit's own subprocesses start afresh
nodeModule.enableCompileCache();
const { main, quietOnClosedPipes } = await import("./cli.ts");
quietOnClosedPipes(); // `merit report … | head` ends quietly
process.exitCode = await main(process.argv.slice(2));
// the kit closes what it opened; whatever a plugin left holding the event loop is named, not waited for
await (await import("./cli/exit.ts")).settle(process.exitCode);
