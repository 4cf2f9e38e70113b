// Tests lib/experiment/run-dir.ts: the run directory's file names, listRuns over a grid folder, and the typed readers with their one-line errors.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { InputFileError } from "../../lib/errors.ts";
import {
  isRunDir,
  listRuns,
  memoryFiles,
  readJsonLines,
  readMemoryEntries,
  readPrompts,
  readRetrievalLog,
  readRunDataDir,
  readRunJson,
  readRunManifest,
  readRunMetrics,
  readRunSpec,
  readTrajectories,
  RUN_CONTENT,
  RUN_FILES,
  runContentIn,
  runFile,
  runJsonText,
} from "../../lib/experiment/run-dir.ts";
import { runMetrics } from "../../lib/experiment/run-metrics.ts";
import { buildTrajectory, repairTrajectory } from "../analysis/build-trajectory.ts";
import { writeRunDir } from "../cli/run-dir-fixture.ts";
import { tempDir } from "../helpers/run-fixture.ts";

const run = [buildTrajectory({ query_id: "0", attempts: ["SELECT 0"], statuses: ["CORRECT"], method: "merit" }), repairTrajectory("1", 2, true, { method: "merit" })];

describe("file names", () => {
  it("are the names the paper's run directories use", () => {
    expect(RUN_FILES).toEqual({
      config: "config.json",
      manifest: "manifest.json",
      trajectories: "trajectories.jsonl",
      retrievalLog: "retrieval_log.jsonl",
      prompts: "prompts.jsonl",
      metrics: "metrics.json",
      stdout: "stdout.log",
      memoryDir: "memory",
      lock: "run.lock",
    });
    expect(runFile("runs/x", "retrievalLog")).toBe(join("runs/x", "retrieval_log.jsonl"));
  });

  it("run content (what forbids adopting a folder without config.json) excludes config.json, stdout.log and the lock", () => {
    const dir = tempDir("rundir-content");
    expect(runContentIn(dir)).toEqual([]);
    writeFileSync(join(dir, "stdout.log"), "");
    writeFileSync(join(dir, "metrics.json"), "{}");
    mkdirSync(join(dir, "memory"));
    writeFileSync(join(dir, "trajectories.jsonl"), "");
    expect(runContentIn(dir)).toEqual(["trajectories.jsonl", "metrics.json", "memory"]);
    expect(RUN_CONTENT).not.toContain("config.json");
  });

  it("runJsonText writes sorted keys, two-space indent and a final newline", () => {
    expect(runJsonText({ b: 1, a: { d: [1, 2], c: null } })).toBe('{\n  "a": {\n    "c": null,\n    "d": [\n      1,\n      2\n    ]\n  },\n  "b": 1\n}\n');
  });
});

describe("listRuns", () => {
  it("finds the run directories of a grid folder, sorted, depth first, and the folder itself when it is a run", () => {
    const root = tempDir("rundir-list");
    writeRunDir(join(root, "merit-s1"), run);
    writeRunDir(join(root, "iterative-s0"), run.map((t) => ({ ...t, method: "iterative", retrieved_entry_ids: t.retrieved_entry_ids.map(() => []) })));
    writeRunDir(join(root, "nested", "merit-s0"), run);
    mkdirSync(join(root, "empty"));
    writeFileSync(join(root, "notes.txt"), "");
    expect(listRuns(root)).toEqual([join(root, "iterative-s0"), join(root, "merit-s1"), join(root, "nested", "merit-s0")]);
    expect(listRuns(join(root, "merit-s1") + "/")).toEqual([join(root, "merit-s1")]);
    expect(isRunDir(join(root, "empty"))).toBe(false);
    expect(listRuns(join(root, "empty"))).toEqual([]);
  });

  it("refuses a path that is not a directory", () => {
    const root = tempDir("rundir-list-bad");
    expect(() => listRuns(join(root, "nope"))).toThrow(/nope: is not a directory; pass run directories or a folder that contains them/);
    writeFileSync(join(root, "file"), "");
    expect(() => listRuns(join(root, "file"))).toThrow(InputFileError);
  });
});

describe("readers", () => {
  it("read back what a finished run holds", () => {
    const dir = writeRunDir(join(tempDir("rundir-read"), "merit-s0"), run, { memory: [{ polarity: "negative", position: 1 }, { polarity: "positive", position: 0 }] });
    expect(readTrajectories(dir).map((t) => t.query_id)).toEqual(["0", "1"]);
    expect(readRunManifest(dir, { fix: "x" })).toMatchObject({ status: "completed", method: "merit", stream_seed: 0 });
    expect(readRunDataDir(dir)).toBe("data/spider");
    expect(readRunSpec(dir)).toMatchObject({ method: "merit", seed: 0, limit: null, config: { max_repair_steps: 7 } });
    expect(readRetrievalLog(dir)).toHaveLength(2);
    expect(readPrompts(dir)).toHaveLength(2);
    expect(readMemoryEntries(dir)?.map((e) => e.polarity)).toEqual(["positive", "negative"]);
    expect(memoryFiles(dir)?.entries).toEqual([join(dir, "memory", "memory_positive.jsonl"), join(dir, "memory", "memory_negative.jsonl")]);
    const metrics = runMetrics(readTrajectories(dir));
    writeFileSync(runFile(dir, "metrics"), runJsonText(metrics));
    expect(readRunMetrics(dir)).toEqual(metrics);
  });

  it("say absent optional files as null or []", () => {
    const dir = tempDir("rundir-absent");
    expect(readRetrievalLog(dir)).toBeNull();
    expect(readPrompts(dir)).toEqual([]);
    expect(readMemoryEntries(dir)).toBeNull();
    expect(memoryFiles(dir)).toBeNull();
    expect(readRunDataDir(dir)).toBeNull();
    expect(readRunJson(dir, "config", { fix: "x" })).toBeUndefined();
  });

  it("fail with one line naming the file, the problem and the fix", () => {
    const dir = tempDir("rundir-broken");
    expect(() => readTrajectories(dir)).toThrow(/has no trajectories\.jsonl; pass directories written by `merit run`/);
    expect(() => readRunManifest(dir, { fix: "pass a run" })).toThrow(/manifest\.json: is missing; pass a run/);
    expect(() => readRunMetrics(dir)).toThrow(/metrics\.json: is missing \(the run has not finished\)/);
    writeFileSync(join(dir, "config.json"), "{not json");
    expect(() => readRunDataDir(dir)).toThrow(/config\.json: is not JSON; restore the run's config\.json/);
    expect(() => readRunJson(dir, "config", { fix: "a", invalid: "is broken", invalidFix: "b" })).toThrow(/config\.json: is broken; b/);
    expect(() => readRunSpec(dir)).toThrow(/config\.json: is not JSON; pass a directory written by `merit run`/);
    writeFileSync(join(dir, "config.json"), JSON.stringify({ config: {}, method: "merit", seed: -1, limit: null }));
    expect(() => readRunSpec(dir)).toThrow(/config\.json: lacks seed/);
    writeFileSync(join(dir, "manifest.json"), JSON.stringify({ status: "completed" }));
    expect(() => readRunManifest(dir, { fix: "x" })).toThrow(/manifest\.json: lacks method/);
    writeFileSync(join(dir, "prompts.jsonl"), '{"kind":"repair"}\n\n{oops\n');
    expect(() => readPrompts(dir, "fix it")).toThrow(/prompts\.jsonl: line 3 is not JSON; fix it/);
    expect(() => readJsonLines(join(dir, "prompts.jsonl"))).toThrow(/line 3 is not JSON; re-run the run or delete the partial line/);
  });
});
