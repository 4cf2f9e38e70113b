/**
 * The ahead-of-time compiled CLI (lib/compiled.mjs, scripts/build-lib.mjs; issue 22 §2): on a copy of
 * the kit in a temporary folder (so the repository's own .build/ is left alone), the compiled tree
 * and the sources through tsx (MERIT_TSX=1) print the same for `merit help`, `stream-order`, `eval`
 * on a six-query dataset and `methods --plugin` with a TypeScript plugin (whose registrations must
 * reach the compiled kit's registry, not a second copy of it); an edited source is recompiled before
 * the next run, so the edit shows at once; and a source that no longer compiles is run through tsx.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { budget } from "../helpers/budget.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const kit = mkdtempSync(join(tmpdir(), "merit-compiled-"));
afterAll(() => rmSync(kit, { recursive: true, force: true }));

/** Runs `merit <argv>` of the copied kit, compiled (the default) or through tsx. */
function merit(argv: string[], path: "compiled" | "per-file" | "tsx" = "compiled") {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1", NODE_LLAMA_CPP_SKIP_DOWNLOAD: "true" };
  delete env.MERIT_TSX;
  delete env.MERIT_BUNDLE;
  if (path === "tsx") env.MERIT_TSX = "1";
  if (path === "per-file") env.MERIT_BUNDLE = "0";
  const r = spawnSync(process.execPath, [join(kit, "lib/bin.mjs"), ...argv], { cwd: kit, env, encoding: "utf8", timeout: budget(120_000) });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

type Manifest = { sources: Record<string, [number, number]>; bundle: { dir: string; modules: Record<string, string> } };
const manifest = () => JSON.parse(readFileSync(join(kit, ".build/manifest.json"), "utf8")) as Manifest;
const bundleDir = () => join(kit, ".build/bundle", manifest().bundle.dir);

beforeAll(() => {
  for (const entry of ["lib", "scripts", "examples", "package.json", "tsconfig.json"]) cpSync(join(ROOT, entry), join(kit, entry), { recursive: true });
  rmSync(join(kit, ".build"), { recursive: true, force: true });
  for (const entry of ["node_modules", "prompts"]) symlinkSync(join(ROOT, entry), join(kit, entry));
  // a six-query Spider: the first six dev questions, their gold, Spider's schemas and databases
  const tiny = join(kit, "tiny");
  mkdirSync(tiny);
  writeFileSync(join(tiny, "dev.json"), JSON.stringify((JSON.parse(readFileSync(join(ROOT, "data/spider/dev.json"), "utf8")) as unknown[]).slice(0, 6)));
  const gold = readFileSync(join(ROOT, "data/spider/dev_gold.sql"), "utf8").split("\n").slice(0, 6);
  writeFileSync(join(tiny, "dev_gold.sql"), gold.join("\n") + "\n");
  for (const entry of ["tables.json", "database"]) symlinkSync(join(ROOT, "data/spider", entry), join(tiny, entry));
  const pred = gold.map((line) => line.split("\t")[0]);
  pred[1] = "SELECT count(*) FROM singer WHERE age > 30"; // one wrong
  writeFileSync(join(kit, "pred.sql"), pred.join("\n") + "\n");
  // a plugin that imports lib/methods/index.ts (registerMethod is one of its `export *`), not lib/plugin.ts
  mkdirSync(join(kit, "plugins"));
  writeFileSync(
    join(kit, "plugins/direct.ts"),
    [
      'import { MERIT_PARTS, registerMethod } from "../lib/methods/index.ts";',
      'registerMethod({ name: "direct_method", description: "MERIT, registered through lib/methods/index.ts", parts: MERIT_PARTS });',
    ].join("\n") + "\n",
  );
  const build = spawnSync(process.execPath, [join(kit, "scripts/build-lib.mjs")], { cwd: kit, encoding: "utf8" });
  expect(build.stdout).toMatch(/^build-lib: compiled \d+ files of lib\/ to \.build/);
}, budget(120_000));

describe("the compiled CLI", () => {
  it("prints what the sources through tsx print", () => {
    const cases = [
      ["help"],
      ["stream-order", "--dataset", "spider", "--data", "tiny", "--seed", "1"],
      ["eval", "--dataset", "spider", "--data", "tiny", "--pred", "pred.sql", "--jobs", "1"],
      ["methods", "--plugin", "examples/mmr.ts"],
      ["methods", "--plugin", "plugins/direct.ts"],
    ];
    const timeless = (text: string) => text.replace(/[\d.]+\/s ETA \S+/g, "R/s ETA T"); // eval's progress rate
    for (const argv of cases) {
      const tsx = merit(argv, "tsx");
      for (const path of ["compiled", "per-file"] as const) {
        const compiled = merit(argv, path);
        expect(compiled.code, `${path} ${argv.join(" ")}: ${compiled.err}`).toBe(0);
        expect(compiled.out, `${path} ${argv.join(" ")}`).toBe(tsx.out);
        expect(timeless(compiled.err), `${path} ${argv.join(" ")}`).toBe(timeless(tsx.err));
      }
    }
    expect(merit(cases[2]).out.trim().split("\n").at(-1)).toBe("EX 83.33 (5/6)");
    // the plugins' registrations reached the registry the compiled `methods` lists
    expect(merit(cases[3]).out).toMatch(/^\| ranker \| `mmr` \|/m);
    expect(merit(cases[4]).out).toMatch(/^\| `direct_method` \|/m);
  }, budget(180_000));

  it("runs the bundle, whose facades export exactly what each source exports", async () => {
    // with the per-file entry broken, `merit` still runs (the bundle); MERIT_BUNDLE=0 runs the broken one
    const entry = join(kit, ".build/cli.js");
    const original = readFileSync(entry, "utf8");
    writeFileSync(entry, "throw new Error('the per-file tree ran');\n");
    try {
      expect(merit(["help"]).code).toBe(0);
      expect(merit(["help"], "per-file").err).toMatch(/the per-file tree ran/);
    } finally {
      writeFileSync(entry, original);
    }
    const { modules } = manifest().bundle;
    expect(Object.keys(modules).length).toBeGreaterThan(150); // cli.ts reaches nearly all of lib/
    expect(new Set(Object.values(modules)).size).toBeLessThan(Object.keys(modules).length / 2); // a few chunks
    for (const path of Object.keys(modules)) {
      const facade = readFileSync(join(bundleDir(), "facades", path.replace(/\.ts$/, ".js")), "utf8");
      const named = /^export const \{ (.*) \} = ns;$/m.exec(facade)?.[1].split(", ") ?? [];
      const names = [...named, ...(/^export default ns\.default;$/m.test(facade) ? ["default"] : [])].sort();
      const source = (await import(join(ROOT, "lib", path))) as Record<string, unknown>;
      expect(names, path).toEqual(Object.keys(source).sort());
    }
  }, budget(180_000));

  it("recompiles an edited source before it runs, and runs tsx when it cannot compile", () => {
    const index = join(kit, "lib/cli/index.ts");
    const original = readFileSync(index, "utf8");
    const stampBefore = manifest().sources["cli/index.ts"];
    const bundleBefore = bundleDir();
    // the running bundle was built two days ago (a checkout left alone, then edited): still kept for
    // the processes running it, since it is superseded only now; a bundle superseded two days ago goes
    const twoDaysAgo = new Date(Date.now() - 48 * 3600 * 1000);
    utimesSync(bundleBefore, twoDaysAgo, twoDaysAgo);
    const longGone = join(kit, ".build/bundle", "old-superseded");
    mkdirSync(longGone);
    utimesSync(longGone, twoDaysAgo, twoDaysAgo);
    writeFileSync(index, original.replace('"score a predictions file with the execution oracle (EX)"', '"score predictions, edited"'));
    const edited = merit(["help"]);
    expect(edited.code).toBe(0);
    expect(edited.out).toMatch(/^ {2}eval +score predictions, edited$/m);
    expect(manifest().sources["cli/index.ts"]).not.toEqual(stampBefore);
    expect(readFileSync(join(kit, ".build/cli/index.js"), "utf8")).toContain("score predictions, edited");
    expect(bundleDir()).not.toBe(bundleBefore); // a new bundle, in a folder of its own
    expect(readFileSync(join(bundleDir(), "cli.js"), "utf8")).toContain("score predictions, edited");
    expect(existsSync(join(bundleBefore, "cli.js"))).toBe(true); // the old one stays for processes still running it
    expect(existsSync(longGone)).toBe(false);

    // a syntax error: the build is left stale, the sources run (and tsx reports the error)
    writeFileSync(index, original.replace("export const SUMMARIES", "export const SUMMARIES ="));
    const broken = merit(["help"]);
    expect(broken.code).not.toBe(0);
    expect(broken.err).toMatch(/index\.ts/);
    expect(readFileSync(join(kit, ".build/cli/index.js"), "utf8")).toContain("score predictions, edited");

    writeFileSync(index, original);
    expect(merit(["help"]).out).toBe(merit(["help"], "tsx").out);
  }, budget(120_000));
});
