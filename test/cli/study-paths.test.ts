// `merit study plan` with a study file whose `initial` names a missing predictions file (the study in
// a temporary folder, the command run from the clone): one line naming the study file, the field and
// the path it resolved against the study file's folder — not "check the --pred path", a flag the
// user never passed. The file is checked before any dataset is read.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO } from "../helpers/run-fixture.ts";

const dir = mkdtempSync(join(tmpdir(), "merit-study-paths-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("a study file's paths", () => {
  it("a missing initial file names the study field and the path, relative to the study file", () => {
    writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
    const study = join(dir, "study.ts");
    writeFileSync(study, `import { defineStudy } from ${JSON.stringify(join(REPO, "lib", "experiment", "study.ts"))};\nexport default defineStudy({ name: "paths", methods: ["iterative", "merit"], reference: "merit", initial: { spider: "preds/mine.sql" } });\n`);
    const r = spawnSync(process.execPath, ["lib/bin.mjs", "study", "plan", study, "--runs", join(dir, "runs")], { cwd: REPO, encoding: "utf8", env: { ...process.env, NO_COLOR: "1", MERIT_THREADS: "1" } });
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split("\n")).toEqual([`merit study: ${study}: initial.spider "preds/mine.sql" is not a file (${join(dir, "preds", "mine.sql")}); give the predictions file's path relative to the study file`]);
  });
});
