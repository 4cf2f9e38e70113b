// Tests lib/cli/annotate.ts: `merit annotate` samples initially failed cases of a run reproducibly (CPython Random.sample), takes questions from the real Spider dev set, and writes a CSV that reads back intact.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { ANNOTATION_COLUMNS } from "../../lib/analysis/annotation-cases.ts";
import { parseCsv } from "../../lib/analysis/csv.ts";
import { annotateCommand } from "../../lib/cli/annotate.ts";
import { datasetChecksum, readJsonFile } from "../../lib/data/index.ts";
import { buildTrajectory } from "../analysis/build-trajectory.ts";
import { writeRunDir } from "./run-dir-fixture.ts";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const SPIDER = join(REPO, "data", "spider");
const root = mkdtempSync(join(tmpdir(), "merit-annotate-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const examples = readJsonFile(join(SPIDER, "dev.json"), "").value as { question: string }[];
const checksum = datasetChecksum("spider", readJsonFile(join(SPIDER, "dev.json"), "").sha256, readJsonFile(join(SPIDER, "tables.json"), "").sha256);

// Spider queries 0–29; the ones with i % 3 === 0 are initially correct, the other 20 fail with nasty SQL.
const nasty = (i: number) => `SELECT "a,b", 'it''s' FROM t${i}\nWHERE x = "${i}";`;
const trajectories = Array.from({ length: 30 }, (_, i) =>
  i % 3 === 0
    ? buildTrajectory({ query_id: String(i), attempts: ["SELECT 1"], statuses: ["CORRECT"] })
    : buildTrajectory({ query_id: String(i), attempts: [nasty(i)], statuses: ["EXECUTION_ERROR"], error_types: ["Schema Linking"] }),
);
const run = writeRunDir(join(root, "run"), trajectories, { dataset_checksum: checksum });

function io() {
  const out: string[] = [];
  return { out, sink: { out: (l: string) => out.push(l), err: () => {} } };
}

describe("merit annotate", () => {
  it("writes a seeded sample of failed cases with questions, reproducibly", async () => {
    const a = join(root, "a.csv");
    const { out, sink } = io();
    expect(await annotateCommand.run(["--run", run, "--sample", "6", "--seed", "3", "--out", a, "--data-dir", SPIDER], sink)).toBe(0);
    expect(JSON.parse(out[0])).toMatchObject({ failed: 20, sampled: 6, seed: 3 });
    const records = parseCsv(readFileSync(a, "utf8"));
    expect(records[0]).toEqual([...ANNOTATION_COLUMNS]);
    // failed ids in source order: 1,2,4,5,7,8,10,11,13,14,16,17,19,20,22,23,25,26,28,29;
    // CPython 3.11: random.Random(3).sample(range(20), 6) == [7, 18, 17, 4, 11, 14] (pool branch, 20 ≤ 21 + 64)
    const failed = Array.from({ length: 30 }, (_, i) => i).filter((i) => i % 3 !== 0);
    const expected = [7, 18, 17, 4, 11, 14].map((k) => failed[k]);
    expect(records.slice(1).map((r) => Number(r[0]))).toEqual(expected);
    for (const r of records.slice(1)) {
      const i = Number(r[0]);
      expect(r).toEqual([String(i), "db", examples[i].question, nasty(i), 'near "x": syntax error', "Schema Linking", "", ""]);
    }
    const b = join(root, "b.csv");
    await annotateCommand.run(["--run", run, "--sample", "6", "--seed", "3", "--out", b, "--data-dir", SPIDER], io().sink);
    expect(readFileSync(b, "utf8")).toBe(readFileSync(a, "utf8"));
  });
  it("refuses a sample larger than the failures, other dataset files and missing flags", async () => {
    const out = join(root, "c.csv");
    await expect(annotateCommand.run(["--run", run, "--sample", "21", "--seed", "0", "--out", out, "--data-dir", SPIDER], io().sink)).rejects.toThrow(/only 20 initially failed queries/);
    const other = writeRunDir(join(root, "other"), trajectories, { dataset_checksum: "not-these-files" });
    await expect(annotateCommand.run(["--run", other, "--sample", "2", "--seed", "0", "--out", out, "--data-dir", SPIDER], io().sink)).rejects.toThrow(/other dataset files than the run used/);
    await expect(annotateCommand.run(["--run", run, "--sample", "2", "--out", out], io().sink)).rejects.toThrow(/--seed/);
  });
});
