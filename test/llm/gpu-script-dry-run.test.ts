// bench/gpu.sh (issue 16 §4) end to end on CPU: `--dry-run` runs the same pipeline — model generation
// with bench/make-model.ts, bench/throughput.ts in deterministic and throughput mode — on the
// 0.5B-shape model with a 2-stream, 4-token slice and writes its one JSON file.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO, tempDir } from "../helpers/run-fixture.ts";
import { budget } from "../helpers/budget.ts";

const dir = tempDir("gpu-sh");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("bench/gpu.sh --dry-run", () => {
  it("writes one JSON with both modes' measurements", () => {
    const out = join(dir, "gpu.json");
    const r = spawnSync("bash", [join(REPO, "bench", "gpu.sh"), "--dry-run", "--out", out], { cwd: REPO, encoding: "utf8", env: { ...process.env, MERIT_THREADS: "1" }, timeout: budget(600_000) });
    expect(r.status, r.stderr.slice(-2000)).toBe(0);
    const written = join(dir, "gpu-dry-run.json");
    expect(existsSync(written)).toBe(true);
    const json = JSON.parse(readFileSync(written, "utf8")) as Record<string, unknown>;
    const text = JSON.stringify(json);
    expect(text).toMatch(/deterministic/);
    expect(text).toMatch(/throughput/);
  }, budget(600_000));

  it("refuses an unknown argument in one line, exit 2", () => {
    const r = spawnSync("bash", [join(REPO, "bench", "gpu.sh"), "--fast"], { cwd: REPO, encoding: "utf8" });
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^gpu\.sh: unknown argument '--fast'; usage: /)]);
  });
});
