// Compiles lib/**/*.ts ahead of time to .build/ (lib/compiled.mjs), so `merit` starts without tsx's
// on-the-fly transform (issue 22 §2). Run by `npm ci` (package.json `prepare`) and `make install`;
// compiles only what changed since the last build (everything with --force, or when there is none).
// A compile error is one warning, not a failure: `merit` then runs the sources through tsx.
// Usage: node scripts/build-lib.mjs [--force] [--quiet]   (--quiet: say nothing when up to date)
import { BUILD_DIR, buildLib, staleSources } from "../lib/compiled.mjs";
import { relative } from "node:path";

const started = Date.now();
const where = relative(process.cwd(), BUILD_DIR) || BUILD_DIR;
const stale = process.argv.includes("--force") ? null : staleSources();
try {
  if (stale !== null && stale.changed.length === 0 && stale.removed.length === 0) {
    if (!process.argv.includes("--quiet")) console.log(`build-lib: ${where} is up to date`);
  } else {
    const n = await buildLib(stale?.changed);
    console.log(`build-lib: compiled ${n} files of lib/ to ${where} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
} catch (error) {
  console.error(`build-lib: lib/ not compiled, \`merit\` runs the sources through tsx (${error instanceof Error ? error.message.split("\n")[0] : error})`);
}
