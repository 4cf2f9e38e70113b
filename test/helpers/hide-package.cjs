// Test helper (not a suite), loaded with `node --require`: the child `merit` sees an npm package as an
// interrupted `npm ci` leaves it, without touching node_modules. MERIT_TEST_HIDE_ADDON=<package>[,<package>…]:
// the package's compiled `.node` files are not found (the `bindings` loader then fails exactly as it
// does without them); MERIT_TEST_HIDE_PACKAGE=<package>: importing the package fails as it does when
// it is not installed.
const Module = require("node:module");

const addons = (process.env.MERIT_TEST_HIDE_ADDON ?? "").split(",").filter(Boolean);
if (addons.length > 0) {
  const resolveFilename = Module._resolveFilename;
  Module._resolveFilename = function (request, ...rest) {
    const file = resolveFilename.call(this, request, ...rest);
    if (file.endsWith(".node") && addons.some((addon) => file.includes(`/node_modules/${addon}/`))) throw Object.assign(new Error(`Cannot find module '${request}'`), { code: "MODULE_NOT_FOUND" });
    return file;
  };
}

const hidden = process.env.MERIT_TEST_HIDE_PACKAGE;
if (hidden) {
  const hook = `export async function resolve(specifier, context, next) {
    if (specifier === ${JSON.stringify(hidden)} || specifier.startsWith(${JSON.stringify(hidden + "/")})) {
      throw Object.assign(new Error("Cannot find package '" + specifier + "' imported from " + context.parentURL), { code: "ERR_MODULE_NOT_FOUND" });
    }
    return next(specifier, context);
  }`;
  Module.register(`data:text/javascript,${encodeURIComponent(hook)}`);
}
