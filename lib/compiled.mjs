/**
 * The ahead-of-time compiled lib/ (issue 22 §2): lib/X.ts compiled to .build/X.js (git-ignored) by
 * `npm ci` / `make install` (scripts/build-lib.mjs), so `merit` starts without tsx's on-the-fly
 * transform. Plain JavaScript, never compiled itself, so the compiled tree and the sources share this
 * one module. Freshness is a stat per source against the build's manifest (size and mtime of every
 * lib/**\/*.ts); lib/bin.mjs recompiles just the changed files before it runs (about 0.05 s for a
 * few, plus the bundle: about 0.3 s), so an edited source takes effect at once, and runs the sources
 * through tsx when it cannot.
 *
 * Two compiled forms are built: the per-file tree (.build/X.js for every lib/X.ts) and the bundle
 * (buildBundle: the CLI in a few chunks, which is what `merit` runs, because loading a few files
 * instead of hundreds is a third of a command's start-up). The per-file tree serves plugins'
 * imports of modules the bundle does not hold, and is what runs when the bundle cannot be built.
 *
 * A per-file compiled file is esbuild's transform of the source (the one tsx applies) with two changes:
 * imports of the kit's .ts files name the .js twins, imports of its other files (sql-rules.mjs) point
 * back into lib/; and `import.meta.url` is the SOURCE file's URL, so every path a module finds next
 * to itself (prompts/, report assets, sql-worker.mjs, the lib/ tree code_hash covers) is unchanged.
 * @module
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const LIB = fileURLToPath(new URL(".", import.meta.url));
const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** The compiled tree: lib/X.ts is BUILD_DIR/X.js. */
export const BUILD_DIR = join(ROOT, ".build");
const MANIFEST = join(BUILD_DIR, "manifest.json");
/** Bumped when buildLib compiles differently: an older build is then recompiled whole. */
const FORMAT = 3;

/** The parsed manifest; null when there is none (or it is unreadable). Read once per process unless `again`. */
function readManifest(again = false) {
  if (manifestRead === undefined || again) {
    try {
      manifestRead = JSON.parse(readFileSync(MANIFEST, "utf8"));
    } catch {
      manifestRead = null;
    }
  }
  return manifestRead;
}
let manifestRead;

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
  const manifest = readManifest();
  if (manifest === null) return null;
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

/** `export * from "…"` of a source: the re-exports a per-file build cannot list (their names live in the target). */
const STAR_EXPORT = /^export \* from "(\.[^"]+\.ts)";/gm;

/**
 * Compiles the given sources (paths under lib/; all of them when omitted) into BUILD_DIR, deletes the
 * twins of removed sources, bundles the CLI (buildBundle), then records the stamps. Safe while other
 * processes run or build: each file is replaced whole, each bundle is a new folder, and a source edited
 * meanwhile keeps a stale stamp, so it is rebuilt next time. Returns the number of files compiled;
 * throws on a compile error (nothing recorded then).
 */
export async function buildLib(only) {
  const current = sourceStamps(); // stamped before reading: an edit from now on makes it stale again
  const stale = staleSources(current);
  const previous = stale === null ? null : readManifest(true);
  const paths = only ?? Object.keys(current);
  const esbuild = loadEsbuild();
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
        metafile: true,
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
      const stars = [...readFileSync(source, "utf8").matchAll(STAR_EXPORT)].map((m) => relative(LIB, resolve(dirname(source), m[1])).split(sep).join("/"));
      return { path, target, text: result.outputFiles[0].text, exports: { names: Object.values(result.metafile.outputs)[0].exports, stars } };
    }),
  );
  for (const { target, text } of outputs) writeAtomically(target, text);
  for (const path of stale?.removed ?? []) rmSync(join(BUILD_DIR, path.slice(0, -3) + ".js"), { force: true });
  const fresh = new Map(outputs.map((output) => [output.path, output.exports]));
  const exports = {};
  for (const path of Object.keys(current)) exports[path] = fresh.get(path) ?? previous?.exports?.[path] ?? { names: [], stars: [] };
  let bundle;
  try {
    bundle = await buildBundle(esbuild, exports);
  } catch (error) {
    bundle = { error: error instanceof Error ? error.message.split("\n")[0] : String(error) }; // the per-file tree runs; retried after the next edit
  }
  writeAtomically(MANIFEST, JSON.stringify({ format: FORMAT, sources: current, exports, bundle }) + "\n");
  markSuperseded(previous?.bundle?.dir, bundle.dir);
  removeOldBundles(bundle.dir);
  return outputs.length;
}

/** tsx's own esbuild (the transform tsx applies to the sources). */
function loadEsbuild() {
  const require = createRequire(import.meta.url);
  return createRequire(require.resolve("tsx/package.json"))("esbuild");
}

/** Where the bundles are: one folder per build, BUNDLES/<id>/. */
const BUNDLES = join(BUILD_DIR, "bundle");
/** A bundle another process may still be running from is kept this long after a newer one is made. */
const BUNDLE_KEEP_MS = 24 * 3600 * 1000;
/** The key under which every bundled module's namespace is registered on globalThis (lib path → namespace). */
const MODULES_KEY = "merit-kit.modules";

/**
 * The CLI bundled (issue 22 §2): lib/cli.ts and everything it imports, statically or not, as a few
 * ES module chunks (esbuild's code splitting keeps every dynamic import lazy), so a command loads
 * tens of files instead of hundreds; packages and lib's .mjs files stay outside. Each module keeps
 * its own `import.meta.url` (its source's URL, as in the per-file tree) and registers its namespace
 * under globalThis[Symbol.for(MODULES_KEY)]. For each bundled module, facades/<path>.js re-exports
 * that namespace after loading its chunk: the compiled CLI's resolve hook (compiled-hooks.mjs) maps
 * a plugin's `import … from "lib/X.ts"` to it, so the plugin gets the very instances the bundle runs
 * (one registry). Written to a new folder, so a process running an older bundle is not disturbed.
 * Returns { dir, modules } (dir under BUNDLES; modules: lib path → chunk file).
 */
async function buildBundle(esbuild, exports) {
  const id = `${Date.now().toString(36)}-${process.pid}`;
  const outdir = join(BUNDLES, id);
  const rootFromOutput = relative(outdir, ROOT).split(sep).join("/") + "/";
  const sources = {
    name: "merit-bundle-sources",
    setup(build) {
      // lib's plain JavaScript (compiled.mjs, sql-rules.mjs) is loaded from lib/, one instance for all
      build.onResolve({ filter: /\.mjs$/ }, (args) => ({ path: `${rootFromOutput}lib/${relative(LIB, resolve(args.resolveDir, args.path)).split(sep).join("/")}`, external: true }));
      build.onLoad({ filter: /\.ts$/ }, async (args) => {
        const key = relative(ROOT, args.path).split(sep).join("/");
        if (!key.startsWith("lib/")) return undefined;
        const text = readFileSync(args.path, "utf8").replaceAll("import.meta.url", `__merit_url(${JSON.stringify(key)})`);
        const self = `./${args.path.split(sep).at(-1)}`;
        return {
          contents: `${text}\nimport * as __merit_self from ${JSON.stringify(self)};\n(globalThis[Symbol.for(${JSON.stringify(MODULES_KEY)})] ??= new Map()).set(${JSON.stringify(key)}, __merit_self);\n`,
          loader: "ts",
        };
      });
    },
  };
  const result = await esbuild.build({
    entryPoints: [join(LIB, "cli.ts")],
    outdir,
    absWorkingDir: ROOT,
    bundle: true,
    splitting: true,
    packages: "external",
    plugins: [sources],
    format: "esm",
    platform: "node",
    target: "node20",
    tsconfig: join(ROOT, "tsconfig.json"),
    keepNames: true,
    metafile: true,
    logLevel: "silent",
    entryNames: "[name]",
    chunkNames: "chunk-[hash]",
    banner: { js: `const __merit_root = new URL(${JSON.stringify(rootFromOutput)}, import.meta.url); const __merit_url = (path) => new URL(path, __merit_root).href;` },
  });
  const modules = {};
  for (const [output, meta] of Object.entries(result.metafile.outputs)) {
    for (const input of Object.keys(meta.inputs)) if (input.startsWith("lib/") && input.endsWith(".ts")) modules[input.slice(4)] = output.split("/").at(-1);
  }
  const names = (path, seen = new Set()) => {
    if (seen.has(path)) return [];
    seen.add(path);
    const entry = exports[path] ?? { names: [], stars: [] };
    return [...entry.names, ...entry.stars.flatMap((star) => names(star, seen).filter((name) => name !== "default"))];
  };
  for (const [path, chunk] of Object.entries(modules)) {
    const facade = join(outdir, "facades", path.slice(0, -3) + ".js");
    const toChunk = relative(dirname(facade), join(outdir, chunk)).split(sep).join("/");
    const exported = [...new Set(names(path))].sort();
    const named = exported.filter((name) => name !== "default");
    const lines = [
      `// lib/${path} as the bundled CLI runs it (lib/compiled.mjs buildBundle)`,
      `import ${JSON.stringify(toChunk)};`,
      `const ns = globalThis[Symbol.for(${JSON.stringify(MODULES_KEY)})]?.get(${JSON.stringify(`lib/${path}`)});`,
      `if (ns === undefined) throw new Error(${JSON.stringify(`lib/${path} is not in the bundle's ${chunk}; rebuild with: node scripts/build-lib.mjs --force`)});`,
      ...(named.length > 0 ? [`export const { ${named.join(", ")} } = ns;`] : []),
      ...(exported.includes("default") ? ["export default ns.default;"] : []),
    ];
    mkdirSync(dirname(facade), { recursive: true });
    writeFileSync(facade, lines.join("\n") + "\n");
  }
  return { dir: id, modules };
}

/**
 * Stamps the bundle the manifest named until now (`dir`, unless it is `current`) with the time it was
 * superseded, so removeOldBundles keeps it BUNDLE_KEEP_MS from now: a process started from it (maybe
 * days after it was built) may still import its chunks lazily. Without the stamp its folder's mtime is
 * its build time, and a bundle older than BUNDLE_KEEP_MS would be deleted under the processes running it.
 */
function markSuperseded(dir, current) {
  if (typeof dir !== "string" || dir === current || dir.includes("/") || dir.includes(sep) || dir === "." || dir === "..") return;
  const now = new Date();
  try {
    utimesSync(join(BUNDLES, dir), now, now);
  } catch {
    // already gone
  }
}

/** Deletes the bundles superseded (or, never current, built) more than BUNDLE_KEEP_MS ago, but `keep` (a process may still import chunks of the one before). */
function removeOldBundles(keep) {
  let entries;
  try {
    entries = readdirSync(BUNDLES);
  } catch {
    return;
  }
  for (const entry of entries) {
    if (entry === keep) continue;
    try {
      if (Date.now() - statSync(join(BUNDLES, entry)).mtimeMs > BUNDLE_KEEP_MS) rmSync(join(BUNDLES, entry), { recursive: true, force: true });
    } catch {
      // another process removed it first
    }
  }
}

/**
 * The compiled CLI's entry when it is usable now: fresh, or made fresh by compiling the changed
 * sources. The bundle's cli.js when the bundle is built, else the per-file tree's .build/cli.js;
 * null when there is no build (or it cannot be brought up to date): run tsx.
 * MERIT_BUNDLE=0 runs the per-file tree.
 */
export async function compiledEntry() {
  const stale = staleSources();
  if (stale === null) return null;
  const rebuild = stale.changed.length > 0 || stale.removed.length > 0;
  if (rebuild) {
    try {
      await buildLib(stale.changed);
    } catch {
      return null; // a syntax error or a read-only checkout: tsx reports or copes as before
    }
  }
  const bundle = readManifest(rebuild)?.bundle;
  if (process.env.MERIT_BUNDLE !== "0" && typeof bundle?.dir === "string" && bundle.modules !== null && typeof bundle.modules === "object") {
    const entry = join(BUNDLES, bundle.dir, "cli.js");
    if (existsSync(entry)) {
      bundled = { facades: pathToFileURL(join(BUNDLES, bundle.dir, "facades")).href + "/", modules: Object.keys(bundle.modules) };
      return pathToFileURL(entry).href;
    }
  }
  return pathToFileURL(join(BUILD_DIR, "cli.js")).href;
}

/** The bundle compiledEntry chose ({ facades, modules }), for the resolve hook; null for the per-file tree. */
let bundled = null;

/** "compiled" once lib/bin.mjs runs the compiled tree; "typescript" once .ts files can be imported then. */
let mode = "sources";

/** lib/bin.mjs, before it imports the compiled entry. */
export function useCompiled() {
  mode = "compiled";
}

/**
 * Call before importing a user file that may be TypeScript (a plugin, a study). Under tsx or vitest
 * nothing to do; in the compiled CLI it registers tsx (the first time only, about 0.2 s) and then a
 * resolve hook that maps lib/X.ts to the bundle's facade of X (or BUILD_DIR/X.js for the per-file
 * tree), so a plugin's `import … from "../lib/plugin.ts"` gets the very module instances (the
 * registries) the compiled CLI already uses.
 */
export async function allowTypeScriptImports() {
  if (mode !== "compiled") return;
  mode = "typescript";
  const { register } = await import("node:module");
  const { register: registerTsx } = await import("tsx/esm/api");
  registerTsx();
  // registered after tsx, so it runs first and maps what tsx resolves to
  register("./compiled-hooks.mjs", import.meta.url, { data: { lib: pathToFileURL(LIB).href, build: pathToFileURL(BUILD_DIR).href + "/", bundles: pathToFileURL(BUNDLES).href + "/", bundled } });
}
