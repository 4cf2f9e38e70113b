#!/usr/bin/env node
// The `merit` command: registers tsx (TypeScript without a build step), then runs lib/cli.ts.
import { register } from "tsx/esm/api";

register();
const { main, quietOnClosedPipes } = await import("./cli.ts");
quietOnClosedPipes(); // `merit report … | head` ends quietly
process.exitCode = await main(process.argv.slice(2));
