#!/usr/bin/env node
// The `merit` command: runs lib/cli.ts compiled ahead of time (.build/, lib/compiled.mjs) when that
// build is fresh or can be freshened now, else registers tsx and runs the TypeScript sources.
// MERIT_TSX=1 always runs the sources through tsx.
import { compiledEntry, useCompiled } from "./compiled.mjs";

let entry = process.env.MERIT_TSX === "1" ? null : await compiledEntry();
if (entry === null) {
  const { register } = await import("tsx/esm/api");
  register();
  entry = "./cli.ts";
} else {
  useCompiled();
}
const { main, quietOnClosedPipes } = await import(entry);
quietOnClosedPipes(); // `merit report … | head` ends quietly
process.exitCode = await main(process.argv.slice(2));
