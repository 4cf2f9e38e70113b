// Tests the paths a study's log prints (issue 39 §13): a study file inside the working folder whose
// `initial` names a predictions file beside it is logged relative to the working folder
// (`study: initial cache of spider from test/.tmp/…/preds.sql`), never as this machine's absolute path,
// and so does an error about that file.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runStudy } from "../../lib/report/study-run.ts";

mkdirSync("test/.tmp", { recursive: true });
const dir = relative(process.cwd(), mkdtempSync(join(process.cwd(), "test", ".tmp", "study-log-")));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("a study's log", () => {
  it("names the study's predictions file relative to the working folder", async () => {
    const file = join(dir, "study.ts");
    const lib = relative(dir, "lib/experiment/study.ts").split("\\").join("/");
    writeFileSync(file, `import { defineStudy, tinyModels } from "${lib}";\nexport default defineStudy({ name: "log_paths", datasets: ["spider"], methods: ["iterative", "merit"], seeds: [0], reference: "merit", queries: 2, models: tinyModels(), initial: { spider: "preds.sql" } });\n`);
    writeFileSync(join(dir, "preds.sql"), "SELECT 1\n"); // one line for 1,034 questions: the build stops right after the log line
    const lines: string[] = [];
    const failed = await runStudy(file, { runs: join(dir, "runs"), out: join(dir, "results"), reporter: { log: (l) => lines.push(l) } }).then(() => null, (e: unknown) => e);
    expect(failed, lines.join("\n")).toBeInstanceOf(Error);
    expect(String(failed)).toMatch(new RegExp(`^InputFileError: ${dir.replace(/[.]/g, "\\.")}/preds\\.sql: has 1 lines`)); // the error too
    const line = lines.find((l) => l.startsWith("study: initial cache of spider from "));
    expect(line).toBe(`study: initial cache of spider from ${dir}/preds.sql -> ${dir}/runs/initial/spider.json`);
    expect(lines.join("\n")).not.toContain(process.cwd());
  });
});
