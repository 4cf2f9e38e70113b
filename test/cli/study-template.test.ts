/**
 * The study template's test (studies/template/study.test.ts) tests whatever the study lists: three
 * studies written by `merit study new` into a git-ignored folder of the clone (runs/, where the
 * generated tests find lib/ and vitest as a study of studies/ does) and edited as a newcomer would,
 * each tested by a child vitest: the template as written passes; a study that drops my_method (and
 * compares iterative with merit) still passes; a study with an arm of its own method (the same hooks
 * under another K) passes; a study whose own method is merit under another name fails, naming the
 * comparison.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { budget } from "../helpers/budget.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
mkdirSync(join(ROOT, "runs"), { recursive: true });
const dir = mkdtempSync(join(ROOT, "runs", ".study-template-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const rel = relative(ROOT, dir).split("\\").join("/");

function run(command: string, args: string[]) {
  const r = spawnSync(command, args, { cwd: ROOT, encoding: "utf8", timeout: budget(300_000), env: { ...process.env, NO_COLOR: "1", MERIT_THREADS: "1", NODE_LLAMA_CPP_SKIP_DOWNLOAD: "true" } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `merit study new NAME` into the folder, then `edit` applied to the study file (and the plugin). */
function newStudy(name: string, edit: (study: string) => string, plugin: (text: string) => string = (t) => t): void {
  const r = run(process.execPath, ["lib/bin.mjs", "study", "new", name, "--dir", rel]);
  expect(r.code, r.stderr).toBe(0);
  const file = (f: string) => join(dir, name, f);
  writeFileSync(file("study.ts"), edit(readFileSync(file("study.ts"), "utf8")));
  writeFileSync(file("my-method.ts"), plugin(readFileSync(file("my-method.ts"), "utf8")));
}

describe("the study template's test", () => {
  it("passes on the template and on a study without my_method; fails on a study whose method is merit renamed", () => {
    newStudy("as-written", (t) => t);
    newStudy("no-my-method", (t) => t.replace(`methods: ["iterative", "merit", "my_method"]`, `methods: ["iterative", "merit"]`).replace(`reference: "my_method"`, `reference: "merit"`));
    newStudy("with-arm", (t) => t.replace(`methods: ["iterative", "merit", "my_method"]`, `methods: ["iterative", "merit", "my_method", "my_method_k3"],\n  arms: { my_method_k3: { method: "my_method", max_repair_steps: 3 } }`));
    newStudy("merit-renamed", (t) => t, (t) => t.replace(`, { scope: "same_database" }));`, "));"));
    expect(readFileSync(join(dir, "merit-renamed", "my-method.ts"), "utf8")).toMatch(/registerMethod\(meritMethod\("my_method", "[^"]*"\)\);/);
    const config = join(dir, "vitest.config.mjs");
    writeFileSync(config, `export default { test: { root: ${JSON.stringify(ROOT)}, include: [${JSON.stringify(`${rel}/*/*.test.ts`)}], environment: "node", pool: "forks", maxWorkers: 1 } };\n`);
    const report = join(dir, "vitest.json");
    const r = run(process.execPath, [join(ROOT, "node_modules", "vitest", "vitest.mjs"), "run", "--config", config, "--root", ROOT, "--reporter=json", `--outputFile=${report}`]);
    const results = (JSON.parse(readFileSync(report, "utf8")) as { testResults: { name: string; status: string; assertionResults: { status: string; failureMessages: string[] }[] }[] }).testResults;
    const byStudy = Object.fromEntries(results.map((f) => [relative(dir, f.name).split(/[\\/]/)[0], f]));
    expect(Object.keys(byStudy).sort(), r.stderr).toEqual(["as-written", "merit-renamed", "no-my-method", "with-arm"]);
    expect(byStudy["as-written"].assertionResults.map((a) => a.status)).toEqual(["passed", "passed", "passed"]);
    expect(byStudy["no-my-method"].assertionResults.map((a) => a.status)).toEqual(["passed", "passed", "passed"]);
    expect(byStudy["with-arm"].assertionResults.map((a) => a.status), JSON.stringify(byStudy["with-arm"].assertionResults.map((a) => a.failureMessages))).toEqual(["passed", "passed", "passed"]);
    const renamed = byStudy["merit-renamed"].assertionResults;
    expect(renamed.map((a) => a.status)).toEqual(["passed", "failed", "passed"]);
    expect(renamed[1].failureMessages.join("\n")).toMatch(/my_method is merit under another name: their Δ is 0 by construction/);
    expect(r.code).toBe(1);
  });
});
