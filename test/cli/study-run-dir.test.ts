// A study's run folder that cannot be resumed (issue 39 #9): a failed run, left with other inputs,
// blocks `merit study run`, whose message must say what to do with the study's own folders — delete
// that run's folder and run the study again — never `--out`, which `study run` does not take for runs.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { MeritError } from "../../lib/errors.ts";
import { studyRunDirError } from "../../lib/report/study-run.ts";
import { budget } from "../helpers/budget.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "merit-study-dir-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("a study run folder that cannot be resumed", () => {
  it("the error names the folder to delete and the study command, not --out", () => {
    const streams = [{ method: "merit", seed: 0, outDir: "runs/studies/x/spider/merit-s0" }];
    const e = studyRunDirError(new MeritError("runs/studies/x/spider/merit-s0 holds a run with a different dataset (\"a\" in its config.json, \"b\" now); resume it with the same inputs or choose another --out"), streams as never, "studies/x/study.ts") as Error;
    expect(e.message).toBe("runs/studies/x/spider/merit-s0 holds a run with a different dataset (\"a\" in its config.json, \"b\" now); this run of the study cannot be resumed: delete runs/studies/x/spider/merit-s0 and run `merit study run studies/x/study.ts` again (it recomputes that run and keeps the finished ones), or restore the inputs the run started with to resume it");
    const other = new MeritError("something else; choose another --out");
    expect(studyRunDirError(other, streams as never, "f")).toBe(other);
  });

  it("merit study run over a folder left by another run: exit 2, one line naming it", () => {
    writeFileSync(join(tmp, "package.json"), '{"type":"module"}\n');
    const file = join(tmp, "study.ts");
    writeFileSync(file, `import { defineStudy } from ${JSON.stringify(pathToFileURL(join(ROOT, "lib", "experiment", "study.ts")).href)};\nexport default defineStudy({ name: "blocked", methods: ["iterative", "merit"], reference: "merit", queries: 2 });\n`);
    const runs = join(tmp, "runs");
    mkdirSync(join(runs, "spider", "merit-s0"), { recursive: true });
    writeFileSync(join(runs, "spider", "merit-s0", "config.json"), '{"left":"by a failed run"}\n');
    const r = spawnSync(process.execPath, ["lib/bin.mjs", "study", "run", file, "--runs", runs, "--out", join(tmp, "out"), "--no-html"], { cwd: ROOT, encoding: "utf8", timeout: budget(300_000), env: { ...process.env, NO_COLOR: "1", MERIT_THREADS: "1", NODE_LLAMA_CPP_SKIP_DOWNLOAD: "true" } });
    expect(r.status, r.stderr).toBe(2);
    const last = r.stderr.trim().split("\n").at(-1)!;
    expect(last).toContain(`delete ${join(runs, "spider", "merit-s0")} and run \`merit study run ${file}\` again`);
    expect(last).not.toContain("--out");
  }, budget(300_000));
});
