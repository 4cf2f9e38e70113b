// Tests the upper bounds of numeric flags a person could mistype (issue 39 §20): `--resamples`,
// `--curve-resamples`, `--max-repair-steps` and the config's `max_repair_steps` each get one stderr
// line naming the flag and its range, exit 2, before any work — not hours of bootstrap, a RangeError
// stack trace from an array too large to allocate, or a run that plans 10^11 repair calls. The
// library refuses the same values in one line (MeritError, never a RangeError).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { MAX_RESAMPLES, pairedClusterBootstrap } from "../../lib/analysis/bootstrap.ts";
import { MAX_CURVE_RESAMPLES, methodCurves } from "../../lib/analysis/learning-curves.ts";
import { orderSpread } from "../../lib/analysis/order-sensitivity.ts";
import { summarizeRun } from "../../lib/analysis/run-summary.ts";
import { main } from "../../lib/cli.ts";
import { MeritError } from "../../lib/errors.ts";
import { MAX_REPAIR_STEPS, parseConfig } from "../../lib/experiment/config.ts";
import { buildReport } from "../../lib/report/build-report.ts";
import { buildTrajectory, repairTrajectory } from "../analysis/build-trajectory.ts";
import { writeRunDir } from "./run-dir-fixture.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "merit-flag-bounds-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const CONFIG = join(tmp, "config.json");
writeFileSync(CONFIG, JSON.stringify({ dataset: "spider", data_dir: join(ROOT, "data/spider"), initial_cache: join(tmp, "no-initial.json"), call_cache: join(tmp, "calls.sqlite") }));

const trajectories = (method: string, seed: number) => [
  buildTrajectory({ query_id: "0", attempts: ["SELECT 0"], statuses: ["CORRECT"], method, stream_seed: seed }),
  repairTrajectory("1", 1, true, { method, stream_seed: seed }),
];
const RUNS = join(tmp, "runs");
for (const method of ["merit", "iterative"]) for (const seed of [0, 1]) writeRunDir(join(RUNS, `${method}-${seed}`), trajectories(method, seed));

async function merit(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(...l.split("\n")), err: (l) => err.push(...l.split("\n")) });
  return { code, out, err };
}

describe("numeric flags are bounded: one line, exit 2, nothing computed", () => {
  const report = (...flags: string[]) => ["report", RUNS, "--out", join(tmp, "report"), ...flags];
  it.each([
    [report("--resamples", "1000000000"), `--resamples must be an integer in 1..${MAX_RESAMPLES} (ten times the default), got "1000000000"`],
    [report("--curve-resamples", "1000000000"), `--curve-resamples must be an integer in 1..${MAX_CURVE_RESAMPLES} (ten times the default), got "1000000000"`],
    [["grid", "--config", CONFIG, "--methods", "merit", "--seeds", "0", "--max-repair-steps", "99999999999"], `--max-repair-steps must be an integer in 0..${MAX_REPAIR_STEPS} (up to K model calls per failed query; the paper's K is 7), got "99999999999"`],
    [["grid", "--config", CONFIG, "--methods", "merit", "--seeds", "0", "--max-repair-steps", "101"], `--max-repair-steps must be an integer in 0..${MAX_REPAIR_STEPS}`],
  ])("%j", async (argv, message) => {
    const r = await merit(argv);
    expect(r.code).toBe(2);
    expect(r.out).toEqual([]);
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toContain(message);
    expect(r.err[0]).not.toMatch(/RangeError|\n/);
  });

  it("the largest K is accepted", () => {
    expect(parseConfig({ dataset: "spider", data_dir: "d", initial_cache: "i.json", call_cache: "c.sqlite", max_repair_steps: MAX_REPAIR_STEPS }, "config.json").max_repair_steps).toBe(MAX_REPAIR_STEPS);
  });

  it("a config's max_repair_steps above the bound is refused naming the field", () => {
    expect(() => parseConfig({ dataset: "spider", data_dir: "d", initial_cache: "i.json", call_cache: "c.sqlite", max_repair_steps: 99999999999 }, "config.json")).toThrow(/max_repair_steps.*at most 100 \(up to K model calls per failed query/);
  });
});

describe("the library refuses the same values in one line", () => {
  const runs = [0, 1].map((s) => summarizeRun(trajectories("merit", s)));
  it("buildReport: --resamples / --curve-resamples named before any run is read", async () => {
    await expect(buildReport([RUNS], { out: join(tmp, "lib-report"), bootstrap: { resamples: MAX_RESAMPLES + 1 } })).rejects.toThrow(/--resamples must be an integer in 1\.\.100000/);
    await expect(buildReport([RUNS], { out: join(tmp, "lib-report"), curves: { resamples: 1e9 } })).rejects.toThrow(/--curve-resamples must be an integer in 1\.\.10000/);
  });
  it("bootstrap, learning curves and order sensitivity: MeritError, not a RangeError", () => {
    expect(() => pairedClusterBootstrap([[1]], [[0]], { resamples: 1e9 })).toThrow(MeritError);
    expect(() => methodCurves(runs, { resamples: 1e9 })).toThrow(MeritError);
    expect(() => orderSpread(runs, { resamples: 1e9 })).toThrow(MeritError);
  });
});
