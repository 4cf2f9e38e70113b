/**
 * Notebooks, the lib/ loader (DESIGN.md §3): tslab compiles cells to CommonJS with its own
 * TypeScript 5.0 and non-strict options, which cannot compile lib/ (`.ts` import paths, strict
 * narrowing) and cannot `require` node-llama-cpp (ESM with top-level await). So cells load lib/
 * through Node's own ESM loader, which strips the types itself, as for the CLI (lib/bin.mjs) —
 * the same modules, the same single instances (method registry, caches) the CLI uses.
 * Usage in a cell:  const { load } = require("./notebooks/load.cjs");
 *                   const { loadDataset } = await load("lib/data/index.ts");
 */
const { resolve } = require("node:path");
const { pathToFileURL } = require("node:url");

const ROOT = resolve(__dirname, "..");

/** Imports a module of the project by its path from the project root (e.g. "lib/oracle/index.ts"). */
function load(path) {
  return import(pathToFileURL(resolve(ROOT, path)).href);
}

module.exports = { load, ROOT };
