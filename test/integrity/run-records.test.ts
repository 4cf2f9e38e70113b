// The records of a finished run (README "Reliability"; lib/experiment/run-records.ts): a completed
// run's manifest records the sha256 of trajectories.jsonl, and `merit report` and `merit audit`
// refuse a run whose trajectories no longer match it or its metrics.json — a coherent hand edit of
// one trajectory (final_correct, the last status and error type changed together) included, and also
// in a run written before the hash was recorded (metrics.json alone then catches it).
import { cpSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import { checkRunComplete } from "../../lib/experiment/completeness.ts";
import { sha256Hex } from "../../lib/hash.ts";
import { tempDir } from "../helpers/run-fixture.ts";
import { openScenarioIn, runScenarioInto, type Scenario } from "./fixture.ts";
import { budget } from "../helpers/budget.ts";

let root: string;
let s: Scenario;
let reference: string;
let n = 0;
const copyOf = (dir: string, name: string) => {
  const to = join(root, `${++n}-${name}`);
  cpSync(dir, to, { recursive: true });
  return to;
};

beforeAll(async () => {
  root = tempDir("run-records");
  s = await openScenarioIn(root);
  reference = join(root, "reference");
  await runScenarioInto(s, reference);
}, budget(180_000));

afterAll(async () => {
  await s?.oracle.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

async function merit(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

/** Flips one trajectory coherently: a repaired episode becomes a failed one, or the reverse. */
function editOneTrajectory(dir: string): void {
  const file = join(dir, "trajectories.jsonl");
  const lines = readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
  const t = lines.find((x) => !x.initial_correct);
  const last = t.statuses.length - 1;
  t.final_correct = !t.final_correct;
  t.statuses[last] = t.final_correct ? "CORRECT" : "DENOTATION_MISMATCH";
  t.error_types[last] = t.final_correct ? null : "Result Mismatch";
  writeFileSync(file, lines.map((x) => JSON.stringify(x) + "\n").join(""));
}

describe("a completed run records its trajectories' hash", () => {
  it("manifest.json has trajectories_sha256 of trajectories.jsonl; the untouched run passes", () => {
    const manifest = JSON.parse(readFileSync(join(reference, "manifest.json"), "utf8"));
    expect(manifest.trajectories_sha256).toBe(sha256Hex(readFileSync(join(reference, "trajectories.jsonl"))));
    expect(checkRunComplete(reference)).toHaveLength(5);
  });
});

describe("an edited trajectory is refused by report and audit", () => {
  it("a coherent edit of one trajectory: `merit report` and `merit audit` give one line naming the file, exit 2", async () => {
    const dir = copyOf(reference, "edited");
    editOneTrajectory(dir);
    const report = await merit(["report", dir, "--out", join(root, "report-edited")]);
    expect(report.code).toBe(2);
    expect(report.err).toHaveLength(1);
    expect(report.err[0]).toMatch(/trajectories\.jsonl: has sha256 \w+… but manifest\.json recorded \w+… when the run completed/);
    const audit = await merit(["audit", dir]);
    expect(audit.code).toBe(2);
    expect(audit.err).toHaveLength(1);
    expect(audit.err[0]).toMatch(/trajectories\.jsonl: has sha256/);
  }, budget(120_000));

  it("a run without the recorded hash (written before it existed): metrics.json names the first metric that differs", async () => {
    const dir = copyOf(reference, "edited-old");
    const manifestFile = join(dir, "manifest.json");
    const { trajectories_sha256: _dropped, ...old } = JSON.parse(readFileSync(manifestFile, "utf8"));
    writeFileSync(manifestFile, JSON.stringify(old, null, 2) + "\n");
    expect(checkRunComplete(dir)).toHaveLength(5); // untouched trajectories still pass
    editOneTrajectory(dir);
    const report = await merit(["report", dir, "--out", join(root, "report-old")]);
    expect(report.code).toBe(2);
    expect(report.err).toHaveLength(1);
    expect(report.err[0]).toMatch(/metrics\.json: says \w+ [\d.]+ but the run's trajectories\.jsonl give [\d.]+; /);
    const audit = await merit(["audit", dir]);
    expect(audit.code).toBe(2);
    expect(audit.err[0]).toMatch(/metrics\.json: says /);
  }, budget(120_000));

  it("an edited metrics.json alone is refused too", () => {
    const dir = copyOf(reference, "metrics-edited");
    const file = join(dir, "metrics.json");
    const metrics = JSON.parse(readFileSync(file, "utf8"));
    metrics.final_accuracy = 0.5;
    writeFileSync(file, JSON.stringify(metrics, null, 2) + "\n");
    expect(() => checkRunComplete(dir)).toThrow(/metrics\.json: says final_accuracy 0\.5 but the run's trajectories\.jsonl give /);
  });
});
