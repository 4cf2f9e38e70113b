// Node 24 runs the kit's TypeScript itself (issue "One way to load the code" §1): every module of
// lib/, every example plugin and the study template load under Node's own type stripping, with no
// transform — no enum, namespace or constructor parameter property (which strip-only mode refuses).
// A child process of the Node that runs the suite imports each file; on a Node before 24 (no native
// stripping by default) the test is skipped with that reason. And the CLI runs that way (issue 30 §1,
// one load path): `node lib/bin.mjs` loads lib/cli.ts and every module after it as Node's own
// "module-typescript" — no build output, no loader package (tsx, esbuild), with a plugin and a study.
import { spawnSync } from "node:child_process";
import { readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it, onTestFinished } from "vitest";
import { budget } from "../helpers/budget.ts";
import { tempDir } from "../helpers/run-fixture.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const major = Number(process.versions.node.split(".")[0]);

function tsFiles(dir: string, skipTests = true): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const rel = join(dir, name);
    if (statSync(join(ROOT, rel)).isDirectory()) return tsFiles(rel, skipTests);
    return rel.endsWith(".ts") && !rel.endsWith(".d.ts") && !(skipTests && rel.endsWith(".test.ts")) ? [rel] : [];
  });
}

describe.skipIf(major < 24)(`Node ${process.versions.node}'s type stripping`, () => {
  it("strips every lib/ module, example plugin and study file, and imports every lib/ module, without a transform", () => {
    const lib = tsFiles("lib").sort();
    const plugins = [...tsFiles("examples"), ...tsFiles("studies/template")].sort();
    expect(lib.length).toBeGreaterThan(200);
    // stripTypeScriptTypes refuses what strip-only mode cannot erase (it parses, never runs the file);
    // the lib modules are imported too (their .ts imports resolve natively; none runs on import).
    const script = `import { readFileSync } from "node:fs";
import { stripTypeScriptTypes } from "node:module";
import { pathToFileURL } from "node:url";
const bad = [];
for (const f of ${JSON.stringify([...lib, ...plugins])}) {
  try { stripTypeScriptTypes(readFileSync(f, "utf8")); } catch (e) { bad.push(f + ": " + String(e.message).split("\\n")[0]); }
}
for (const f of ${JSON.stringify(lib)}) {
  try { await import(pathToFileURL(f).href); } catch (e) { bad.push(f + " (import): " + String(e.message).split("\\n")[0]); }
}
console.log(JSON.stringify(bad));`;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: ROOT, encoding: "utf8", timeout: budget(120_000), env: { ...process.env, NODE_LLAMA_CPP_SKIP_DOWNLOAD: "true", NO_COLOR: "1" } });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim().split("\n").at(-1)!)).toEqual([]);
  }, budget(180_000));

  it("runs the CLI, a plugin and a study file through it: every kit module loads as module-typescript, nothing else transforms", () => {
    // a load hook (module.registerHooks, Node's own) records the URL and format of every module the process loads
    const dir = tempDir("native-strip");
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const hook = join(dir, "record-loads.mjs");
    writeFileSync(
      hook,
      `import { registerHooks } from "node:module";
const loads = [];
registerHooks({ load(url, context, nextLoad) { const r = nextLoad(url, context); loads.push({ url, format: r.format }); return r; } });
process.on("exit", () => process.stderr.write("LOADS " + JSON.stringify(loads) + "\\n"));
`,
    );
    for (const argv of [["help"], ["methods", "--plugin", "examples/lesson-memory.ts"], ["study", "plan", "studies/template/study.ts"]]) {
      const r = spawnSync(process.execPath, ["--import", hook, "lib/bin.mjs", ...argv], { cwd: ROOT, encoding: "utf8", timeout: budget(60_000), env: { ...process.env, NODE_LLAMA_CPP_SKIP_DOWNLOAD: "true", NO_COLOR: "1", NODE_OPTIONS: "" } });
      expect(r.status, `${argv.join(" ")}: ${r.stderr}`).toBe(0);
      const loads = JSON.parse(r.stderr.split("\n").find((line) => line.startsWith("LOADS "))!.slice(6)) as { url: string; format: string }[];
      const ours = loads.filter((l) => l.url.startsWith("file:") && !l.url.includes("/node_modules/")).map((l) => ({ path: fileURLToPath(l.url).slice(ROOT.length), format: l.format }));
      expect(ours[0], argv.join(" ")).toEqual({ path: "lib/bin.mjs", format: "module" });
      expect(ours[1], argv.join(" ")).toEqual({ path: "lib/cli.ts", format: "module-typescript" });
      for (const l of ours.filter((m) => m.path.endsWith(".ts"))) expect(l.format, l.path).toBe("module-typescript");
      if (argv[0] !== "help") expect(ours.map((m) => m.path), argv.join(" ")).toContain(argv.at(-1));
      expect(loads.filter((l) => /\/node_modules\/(tsx|esbuild|@esbuild)\//.test(l.url)), argv.join(" ")).toEqual([]);
      expect(ours.filter((m) => m.path.startsWith(".build/")), argv.join(" ")).toEqual([]);
    }
  }, budget(120_000));
});
