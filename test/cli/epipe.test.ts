// A closed stdout ends any command quietly (issue 21 §3; lib/cli.ts `quietOnClosedPipes`): `merit …`
// piped into a reader that exits first (`| true`, `| head` after its lines) exits with the command's
// own code and no EPIPE stack trace (the command runs to its end, so files it writes are complete).
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO } from "../helpers/run-fixture.ts";

/** `merit ARGS | true` in bash: merit's exit code and its stderr. */
function pipedIntoTrue(args: string[]): { code: number; stderr: string } {
  const merit = [process.execPath, join(REPO, "lib", "bin.mjs"), ...args].map((a) => `'${a}'`).join(" ");
  const r = spawnSync("bash", ["-c", `${merit} | true; exit "\${PIPESTATUS[0]}"`], { cwd: REPO, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
  return { code: r.status ?? -1, stderr: r.stderr };
}

describe("stdout closed early", () => {
  it("merit methods | true exits 0 with nothing on stderr", () => {
    expect(pipedIntoTrue(["methods"])).toEqual({ code: 0, stderr: "" });
  });
  it("a user error keeps its code and its one stderr line; stream-order's progress line is kept", () => {
    const r = pipedIntoTrue(["stream-order", "--dataset", "spidr", "--seed", "0"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^merit stream-order: --dataset must be one of .*got "spidr".*\n$/);
    expect(pipedIntoTrue(["stream-order", "--dataset", "spider", "--seed", "0"])).toEqual({ code: 0, stderr: "stream-order: dataset=spider n=1034 seed=0\n" });
  });
});
