/**
 * Module resolve hook of the compiled CLI (lib/compiled.mjs `allowTypeScriptImports` registers it):
 * an import that resolves to a .ts file under lib/ loads its compiled twin under .build/ instead, so
 * TypeScript plugins share the compiled kit's modules (one registry of methods, datasets, engines).
 * @module
 */
let lib = "";
let build = "";

export function initialize(data) {
  ({ lib, build } = data);
}

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  const url = resolved.url.split("?")[0]; // tsx may add a query
  if (url.startsWith(lib) && url.endsWith(".ts")) {
    return { url: build + url.slice(lib.length, -3) + ".js", format: "module", shortCircuit: true };
  }
  return resolved;
}
