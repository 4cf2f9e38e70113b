// Repair stage under the `dbms_only` feedback regime (METHOD.md §2.5, §4.3, §6.1): the model only
// learns whether its SQL executed. An executing attempt ends the episode and is shown as
// DENOTATION_MISMATCH even when it is right; final correctness is computed offline; memory keeps no
// entry for an episode whose final attempt executed, and never a positive (oracle_correct is null).
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Dataset } from "../../lib/data/index.ts";
import { parseConfig } from "../../lib/experiment/config.ts";
import { runExperiment } from "../../lib/experiment/run.ts";
import type { Oracle } from "../../lib/oracle/oracle.ts";
import { getMethod } from "../../lib/methods/index.ts";
import { createRetriever } from "../../lib/retrieval/retriever.ts";
import { HashedEmbedder } from "../helpers/hashed-embedder.ts";
import { cacheFromChosenSql, loadSpider, readRun, SPIDER_DIR, spiderOracle, tempDir, type RunFiles } from "../helpers/run-fixture.ts";
import { ScriptedBackend } from "../helpers/scripted-backend.ts";
import { A, B, C, SCENARIO_IDS, SCENARIO_LIMIT, SCENARIO_SEED, scenarioInitialSql, scenarioScript } from "../helpers/scripted-scenario.ts";
import { budget } from "../helpers/budget.ts";

let root: string;
let dataset: Dataset;
let oracle: Oracle;
let run: RunFiles;
let metrics: Record<string, unknown>;

beforeAll(async () => {
  root = tempDir("episode-dbms-only");
  dataset = await loadSpider();
  oracle = spiderOracle(dataset);
  const { cache, path } = await cacheFromChosenSql(dataset, oracle, scenarioInitialSql(dataset), root);
  // A and C as in the shared scenario; B never produces an executing query (7 syntax errors).
  const script = scenarioScript(dataset);
  const questionB = dataset.examples.find((e) => e.id === B)!.question;
  script.set(questionB, [1, 2, 3, 4, 5, 6, 7].map((k) => `SELECT Title FROM Cartoon LIMIT ${k} ORDER BY Title`));
  const outDir = join(root, "merit");
  const result = await runExperiment({
    spec: { config: parseConfig({ dataset: "spider", data_dir: SPIDER_DIR, initial_cache: path, feedback_regime: "dbms_only" }), method: "merit", seed: SCENARIO_SEED, limit: SCENARIO_LIMIT },
    method: getMethod("merit"),
    dataset,
    initialCache: cache,
    outDir,
    services: { backend: new ScriptedBackend(script), oracle, embedder: new HashedEmbedder(), retriever: createRetriever() },
  });
  metrics = result.metrics as unknown as Record<string, unknown>;
  run = readRun(outDir);
}, budget(120_000));

afterAll(async () => {
  await oracle?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

const byQuery = (id: string) => run.trajectories.find((t) => t.query_id === id)!;

describe("merit under dbms_only on the scripted Spider scenario", () => {
  it("never shows CORRECT; initially correct queries execute and end at attempt 0, correct offline", () => {
    expect(run.trajectories.map((t) => t.query_id)).toEqual(SCENARIO_IDS);
    for (const t of run.trajectories) {
      expect(t.feedback_regime).toBe("dbms_only");
      expect(t.statuses).not.toContain("CORRECT");
    }
    for (const id of ["426", "278"]) {
      const t = byQuery(id);
      expect([t.statuses, t.initial_correct, t.final_correct, t.repair_steps]).toEqual([["DENOTATION_MISMATCH"], true, true, 0]);
    }
  });

  it("A stops at its first executing attempt (step 3) and is correct offline", () => {
    const a = byQuery(A);
    expect(a.statuses).toEqual(["EXECUTION_ERROR", "EXECUTION_ERROR", "EXECUTION_ERROR", "DENOTATION_MISMATCH"]);
    expect([a.initial_correct, a.final_correct, a.repair_steps]).toEqual([false, true, 3]);
  });

  it("B uses all K = 7 repairs without executing once", () => {
    const b = byQuery(B);
    expect(b.repair_steps).toBe(7);
    expect(b.statuses.every((s) => s === "EXECUTION_ERROR")).toBe(true);
    expect(b.final_correct).toBe(false);
  });

  it("memory: no entry for A or C (final attempt executed), one negative for B", () => {
    expect(run.positives).toEqual([]);
    expect(run.negatives.map((e) => e.source_query_id)).toEqual([B]);
    const b = byQuery(B);
    const entry = run.negatives[0];
    expect(entry.attempted_sql_delta).toBe(`${b.attempts[6]} => ${b.attempts[7]}`);
    expect(entry.observed_outcome).toBe("EXECUTION_ERROR");
    expect(entry.provenance.feedback_regime).toBe("dbms_only");
    // A's episode wrote nothing: B's retrievals see an empty memory; C (later) sees B's negative.
    expect(run.retrievals.filter((r) => r.query_id === B).every((r) => r.legal_pool_size === 0)).toBe(true);
    expect(run.retrievals.find((r) => r.query_id === C)!.retrieved_entry_ids).toEqual([entry.entry_id]);
  });

  it("metrics count offline correctness: 4 of 5 final, 2 repaired (A and C)", () => {
    expect([metrics.total, metrics.initial_correct_count, metrics.final_correct_count, metrics.repaired_count]).toEqual([5, 2, 4, 2]);
  });
});
