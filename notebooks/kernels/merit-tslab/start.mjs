/**
 * Notebooks, kernel launcher (DESIGN.md §3): starts the tslab kernel in the project root — tslab
 * compiles local modules only under its working directory. `await import("./lib/…/x.ts")` (through
 * notebooks/load.cjs) loads the real lib/ (ESM, `.ts` imports, node-llama-cpp's top-level await)
 * exactly as the CLI does: Node 24 strips the types itself, with its compile cache on as in
 * lib/bin.mjs. Usage (kernel.json): node start.mjs CONNECTION_FILE.
 */
import { createRequire, enableCompileCache } from "node:module";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../../", import.meta.url));
process.chdir(root);
enableCompileCache();
const connectionFile = process.argv[2];
if (!connectionFile) {
  console.error("usage: node start.mjs CONNECTION_FILE (Jupyter passes it; see notebooks/README.md)");
  process.exit(2);
}
const { startKernel } = createRequire(import.meta.url)("tslab/dist/main.js");
startKernel({ configPath: connectionFile, enableFindLocal: false });
