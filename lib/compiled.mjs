/**
 * The ahead-of-time compiled lib/ (issue 22 §2): lib/X.ts compiled to .build/X.js (git-ignored) by
 * `npm ci` / `make install` (scripts/build-lib.mjs), so `merit` starts without tsx's on-the-fly
 * transform. Plain JavaScript, never compiled itself, so the compiled tree and the sources share this
 * one module. Freshness is a stat per source against the build's manifest (size and mtime of every
 * lib/**\/*.ts); lib/bin.mjs recompiles just the changed files before it runs (about 0.05 s for a
 * few), so an edited source takes effect at once, and runs the sources through tsx when it cannot.
 *
 * The compiled file is esbuild's transform of the source (the one tsx applies) with two changes:
 * imports of the kit's .ts files name the .js twins, imports of its other files (sql-rules.mjs) point
 * back into lib/; and `import.meta.url` is the SOURCE file's URL, so every path a module finds next
 * to itself (prompts/, report assets, sql-worker.mjs, the lib/ tree code_hash covers) is unchanged.
 * @module
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const LIB = fileURLToPath(new URL(".", import.meta.url));
const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** The compiled tree: lib/X.ts is BUILD_DIR/X.js. */
export const BUILD_DIR = join(ROOT, ".build");
const MANIFEST = join(BUILD_DIR, "manifest.json");
/** Bumped when buildLib compiles differently: an older build is then recompiled whole. */
const FORMAT = 2;

/** path under lib/ (with `/`) → [size, mtimeMs] of every .ts file of lib/. */
export function sourceStamps() {
  const stamps = {};
  const walk = (prefix) => {
    for (const entry of readdirSync(LIB + prefix, { withFileTypes: true })) {
      const path = prefix + entry.name; // with `/`, relative to lib/ (no path.join: this runs every start)
      if (entry.isDirectory()) walk(path + "/");
      else if (entry.isFile() && entry.name.endsWith(".ts")) {
        const stat = statSync(LIB + path);
        stamps[path] = [stat.size, stat.mtimeMs];
      }
    }
  };
  walk("");
  return stamps;
}

/** The stamps the build was made from ({} for a build of another FORMAT); null when there is no (readable) build. */
function builtStamps() {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(MANIFEST, "utf8"));
  } catch {
    return null;
  }
  if (manifest?.format !== FORMAT) return {};
  return manifest.sources !== null && typeof manifest.sources === "object" ? manifest.sources : null;
}

/**
 * What the build lacks: the sources added or changed since (`changed`) and those removed (`removed`);
 * both empty when the build is fresh; null when there is no build at all.
 */
export function staleSources(current = sourceStamps()) {
  const built = builtStamps();
  if (built === null) return null;
  const same = (a, b) => Array.isArray(a) && a[0] === b[0] && a[1] === b[1];
  return {
    changed: Object.keys(current).filter((path) => !same(built[path], current[path])),
    removed: Object.keys(built).filter((path) => !(path in current)),
  };
}

/** Writes `text` to `file` by renaming a temporary file over it, so a reader never sees half of it. */
function writeAtomically(file, text) {
  mkdirSync(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, file);
}

/** The import of `specifier` in the compiled twin of `source` (an absolute path under lib/). */
function compiledSpecifier(specifier, source) {
  if (!specifier.startsWith(".")) return specifier; // a package or a node: builtin
  if (specifier.endsWith(".ts")) return specifier.slice(0, -3) + ".js";
  const path = relative(dirname(join(BUILD_DIR, relative(LIB, source))), resolve(dirname(source), specifier)).split(sep).join("/");
  return path.startsWith(".") ? path : `./${path}`;
}

/**
 * Compiles the given sources (paths under lib/; all of them when omitted) into BUILD_DIR, deletes the
 * twins of removed sources, then records the stamps. Safe while other processes run or build: each
 * file is replaced whole, and a source edited meanwhile keeps a stale stamp, so it is rebuilt next time.
 * Returns the number of files compiled; throws on a compile error (nothing recorded then).
 */
export async function buildLib(only) {
  const current = sourceStamps(); // stamped before reading: an edit from now on makes it stale again
  const stale = staleSources(current);
  const paths = only ?? Object.keys(current);
  const require = createRequire(import.meta.url);
  const esbuild = createRequire(require.resolve("tsx/package.json"))("esbuild"); // tsx's own esbuild
  const keepImports = {
    name: "merit-keep-imports",
    setup(build) {
      build.onResolve({ filter: /.*/ }, (args) => (args.kind === "entry-point" ? undefined : { path: compiledSpecifier(args.path, args.importer), external: true }));
    },
  };
  const outputs = await Promise.all(
    paths.map(async (path) => {
      const source = join(LIB, path);
      const target = join(BUILD_DIR, path.slice(0, -3) + ".js");
      const back = relative(dirname(target), source).split(sep).join("/");
      const result = await esbuild.build({
        entryPoints: [source],
        outfile: target,
        write: false,
        bundle: true, // only so that onResolve sees (and rewrites) every import; all of them stay external
        plugins: [keepImports],
        format: "esm",
        platform: "node",
        target: "node20",
        tsconfig: join(ROOT, "tsconfig.json"),
        treeShaking: false,
        keepNames: true, // as tsx: functions and classes keep their .name
        logLevel: "silent",
        define: { "import.meta.url": "__merit_source_url" },
        banner: { js: `const __merit_source_url = new URL(${JSON.stringify(back)}, import.meta.url).href;` },
      });
      return { target, text: result.outputFiles[0].text };
    }),
  );
  for (const { target, text } of outputs) writeAtomically(target, text);
  for (const path of stale?.removed ?? []) rmSync(join(BUILD_DIR, path.slice(0, -3) + ".js"), { force: true });
  writeAtomically(MANIFEST, JSON.stringify({ format: FORMAT, sources: current }) + "\n");
  return outputs.length;
}

/**
 * The compiled CLI's entry (.build/cli.js) when it is usable now: fresh, or made fresh by compiling
 * the changed sources; null when there is no build (or it cannot be brought up to date): run tsx.
 */
export async function compiledEntry() {
  const stale = staleSources();
  if (stale === null) return null;
  if (stale.changed.length > 0 || stale.removed.length > 0) {
    try {
      await buildLib(stale.changed);
    } catch {
      return null; // a syntax error or a read-only checkout: tsx reports or copes as before
    }
  }
  return pathToFileURL(join(BUILD_DIR, "cli.js")).href;
}

/** "compiled" once lib/bin.mjs runs the compiled tree; "typescript" once .ts files can be imported then. */
let mode = "sources";

/** lib/bin.mjs, before it imports the compiled entry. */
export function useCompiled() {
  mode = "compiled";
}

/**
 * Call before importing a user file that may be TypeScript (a plugin, a study). Under tsx or vitest
 * nothing to do; in the compiled CLI it registers tsx (the first time only, about 0.2 s) and then a
 * resolve hook that maps lib/X.ts to BUILD_DIR/X.js, so a plugin's `import … from "../lib/plugin.ts"`
 * gets the very module instances (the registries) the compiled CLI already uses.
 */
export async function allowTypeScriptImports() {
  if (mode !== "compiled") return;
  mode = "typescript";
  const { register } = await import("node:module");
  const { register: registerTsx } = await import("tsx/esm/api");
  registerTsx();
  // registered after tsx, so it runs first and maps what tsx resolves to
  register("./compiled-hooks.mjs", import.meta.url, { data: { lib: pathToFileURL(LIB).href, build: pathToFileURL(BUILD_DIR).href + "/" } });
}
