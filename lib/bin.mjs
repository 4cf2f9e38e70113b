#!/usr/bin/env node
// The `merit` command: imports lib/cli.ts as it is — Node 24 strips the TypeScript types itself
// (strip-only: tsconfig's erasableSyntaxOnly keeps the sources within it). No build step, no loader
// hook; Node 24.3 and later print no warning for it (package.json engines). Node's own compile cache
// (keyed by each file's content; in $TMPDIR/node-compile-cache, NODE_COMPILE_CACHE=DIR moves it,
// NODE_DISABLE_COMPILE_CACHE=1 turns it off) keeps the stripped modules and their V8 code between runs,
// so a command starts without stripping its module graph again.
import nodeModule from "node:module";

// An older Node cannot load the .ts sources at all: say so in one line instead of its module error.
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 24 || (major === 24 && minor < 3)) {
  process.stderr.write(`merit: needs Node 24.3 or later (package.json engines), this is Node ${process.versions.node}; install Node 24 LTS (nvm install 24, fnm install 24, or your package manager) — README "Set up"\n`);
  process.exit(2);
}
nodeModule.enableCompileCache();
const { main, quietOnClosedPipes } = await import("./cli.ts");
quietOnClosedPipes(); // `merit report … | head` ends quietly
process.exitCode = await main(process.argv.slice(2));
