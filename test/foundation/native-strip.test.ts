// Node 24 runs the kit's TypeScript itself (issue "One way to load the code" §1): every module of
// lib/, every example plugin and the study template load under Node's own type stripping, with no
// transform — no enum, namespace or constructor parameter property (which strip-only mode refuses).
// A child process of the Node that runs the suite imports each file; on a Node before 24 (no native
// stripping by default) the test is skipped with that reason.
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { budget } from "../helpers/budget.ts";

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
});
