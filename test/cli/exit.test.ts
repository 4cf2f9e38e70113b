// The end of a `merit` process (lib/cli/exit.ts, issue 39 #10): an executor a plugin made with
// createExecutor and left open is closed by the kit, so the command exits by itself; a plugin's
// timer still holding the event loop gets one warning line naming it and the plugin, and the
// process exits with the command's code instead of hanging (both hung before).
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { lingeringText } from "../../lib/cli/exit.ts";
import { budget } from "../helpers/budget.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "merit-exit-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const PLUGIN = JSON.stringify(pathToFileURL(join(ROOT, "lib", "plugin.ts")).href);

function methodsWith(name: string, body: string) {
  writeFileSync(join(tmp, "package.json"), '{"type":"module"}\n');
  const file = join(tmp, `${name}.ts`);
  writeFileSync(file, `import { createExecutor, registerMethod } from ${PLUGIN};\n${body}\nregisterMethod({ name: ${JSON.stringify(name)}, description: "x" });\n`);
  return spawnSync(process.execPath, ["lib/bin.mjs", "methods", "--plugin", file], { cwd: ROOT, encoding: "utf8", timeout: budget(60_000), env: { ...process.env, NO_COLOR: "1" } });
}

describe("a command whose plugin leaves something open", () => {
  it("an executor the plugin made and never closed: the kit closes it and the process exits, without a warning", () => {
    const db = join(ROOT, "data", "spider", "database", "concert_singer", "concert_singer.sqlite");
    const r = methodsWith("exit_exec_t", `const ex = createExecutor("sqlite");\nawait ex.execute({ db: ${JSON.stringify(db)}, sql: "SELECT 1" });`);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("exit_exec_t");
    expect(r.stderr).toBe("");
  });

  it("a timer the plugin keeps: one warning naming it and the plugin, then the command's exit code", () => {
    const r = methodsWith("exit_timer_t", "setInterval(() => {}, 1000);");
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("exit_timer_t");
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^merit: warning: the command is done but 1 × Timeout still holds the event loop \(opened by the plugin .*exit_timer_t\.ts\? close what a plugin opens, e\.g\. clearInterval or an executor's close\(\)\); exiting with code 0$/);
  });

  it("names busy resources by type, leaving out the standard streams", () => {
    expect(lingeringText(["TTYWrap", "Timeout", "TCPSocketWrap", "Timeout", "PipeWrap"])).toBe("2 × Timeout, 1 × TCPSocketWrap");
  });
});
