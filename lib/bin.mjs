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
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 24 || (major === 24 && minor < 3)) {
  const cache = join(homedir(), ".cache", "merit-kit");
  const fetched = existsSync(cache) ? readdirSync(cache).filter((d) => /^node-v2[4-9]\.\d+\.\d+-linux-x64$/.test(d)).sort().reverse() : [];
  const node = fetched.map((d) => join(cache, d, "bin", "node")).find((p) => existsSync(p));
  if (node === undefined) {
    process.stderr.write(`merit: needs Node 24.3 or later (package.json engines), this is Node ${process.versions.node}; install Node 24 LTS (nvm install 24, fnm install 24, or your package manager), or run \`make install\` (on Linux x64 it fetches one) — README "Set up"\n`);
    process.exit(2);
  }
  const child = spawnSync(node, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: "inherit" });
  if (child.error) {
    process.stderr.write(`merit: cannot run ${node} (${child.error.message}); delete that folder and run \`make install\` again\n`);
    process.exit(2);
  }
  process.exit(child.status ?? 1);
}
nodeModule.enableCompileCache();
const { main, quietOnClosedPipes } = await import("./cli.ts");
quietOnClosedPipes(); // `merit report … | head` ends quietly
process.exitCode = await main(process.argv.slice(2));
// the kit closes what it opened; whatever a plugin left holding the event loop is named, not waited for
await (await import("./cli/exit.ts")).settle(process.exitCode);
