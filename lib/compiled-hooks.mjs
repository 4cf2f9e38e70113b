/**
 * Module resolve hook of the compiled CLI (lib/compiled.mjs `allowTypeScriptImports` registers it),
 * so that TypeScript plugins share the compiled kit's modules (one registry of methods, datasets,
 * engines). An import that resolves to a .ts file under lib/ loads, instead:
 * - when the CLI runs the bundle: the module's facade (the bundle's instance of it), if the bundle
 *   holds that module; else its per-file twin under .build/, whose own imports of lib modules come
 *   back here and reach the bundle's instances the same way;
 * - when the CLI runs the per-file tree: the module's twin under .build/.
 * @module
 */
let lib = "";
let build = "";
let bundles = "";
/** { facades, modules: Set of paths under lib/ } of the bundle the CLI runs; null for the per-file tree. */
let bundled = null;

export function initialize(data) {
  ({ lib, build, bundles } = data);
  bundled = data.bundled === null ? null : { facades: data.bundled.facades, modules: new Set(data.bundled.modules) };
}

/** The URL that lib/`path` (X.ts, relative to lib/) loads from. */
function target(path) {
  if (bundled !== null && bundled.modules.has(path)) return bundled.facades + path.slice(0, -3) + ".js";
  return build + path.slice(0, -3) + ".js";
}

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  const url = resolved.url.split("?")[0]; // tsx may add a query
  if (url.startsWith(lib) && url.endsWith(".ts")) return { url: target(url.slice(lib.length)), format: "module", shortCircuit: true };
  // a per-file twin importing another twin (e.g. .build/plugin.js → ./methods/index.js): the bundle's instance
  if (bundled !== null && url.startsWith(build) && !url.startsWith(bundles) && url.endsWith(".js")) {
    const path = url.slice(build.length, -3) + ".ts";
    if (bundled.modules.has(path)) return { url: target(path), format: "module", shortCircuit: true };
  }
  return resolved;
}
