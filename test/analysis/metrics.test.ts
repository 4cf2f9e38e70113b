// Tests lib/experiment/run-metrics.ts and aggregate.ts: hand-computed METHOD.md §8 metrics on a small synthetic run, aggregation across seeds.
import { describe, expect, it } from "vitest";
import { aggregateMetrics, meanStd } from "../../lib/analysis/aggregate.ts";
import { populationVariance, runMetrics } from "../../lib/experiment/run-metrics.ts";
import { MeritError } from "../../lib/errors.ts";
import { buildTrajectory, repairTrajectory } from "./build-trajectory.ts";

const DM = "DENOTATION_MISMATCH" as const;
const EE = "EXECUTION_ERROR" as const;
const TO = "TIMEOUT" as const;
const OK = "CORRECT" as const;

// Eight queries of one run (spider, iterative, seed 0), K = 7.
const run = [
  // T0, T1: initially correct, no repairs
  buildTrajectory({ query_id: "0", attempts: ["SELECT a FROM t"], statuses: [OK] }),
  buildTrajectory({ query_id: "1", attempts: ["SELECT b FROM t"], statuses: [OK] }),
  // T2: Schema Linking failure repaired at step 1
  buildTrajectory({ query_id: "2", attempts: ["SELECT nme FROM t", "SELECT name FROM t"], statuses: [EE, OK], error_types: ["Schema Linking", null] }),
  // T3: repaired at step 3; attempt 2 repeats attempt 0 up to case/semicolon → oscillates
  buildTrajectory({ query_id: "3", attempts: ["SELECT x FROM t", "SELECT y FROM t", "select x from t;", "SELECT z FROM t"], statuses: [DM, DM, DM, OK] }),
  // T4: Syntax failure never repaired, 7 distinct repairs; call 2 truncated
  buildTrajectory({ query_id: "4", attempts: Array.from({ length: 8 }, (_, i) => `SELEC c${i}`), statuses: Array(8).fill(EE), truncatedCall: 2 }),
  // T5: never repaired; attempts 2 and 5 are both "" → oscillates
  buildTrajectory({
    query_id: "5",
    attempts: ["SELECT q FROM t", "SELECT r FROM t", "", "SELECT s FROM t", "SELECT u FROM t", "", "SELECT v FROM t", "SELECT w FROM t"],
    statuses: [DM, DM, EE, DM, DM, EE, DM, DM],
    error_types: ["Result Mismatch", "Result Mismatch", "Unknown", "Result Mismatch", "Result Mismatch", "Unknown", "Result Mismatch", "Result Mismatch"],
  }),
  // T6: TIMEOUT never repaired; the last attempt repeats the initial one with other whitespace → oscillates
  buildTrajectory({
    query_id: "6",
    attempts: ["SELECT * FROM big", "SELECT 1", "SELECT 2", "SELECT 3", "SELECT 4", "SELECT 5", "SELECT 6", "  select *   from big "],
    statuses: Array(8).fill(TO),
  }),
  // T7: Schema Linking then Syntax, repaired at step 2
  buildTrajectory({ query_id: "7", attempts: ["SELECT k FROM t", "SELEC k FROM t", "SELECT kk FROM t"], statuses: [EE, EE, OK], error_types: ["Schema Linking", "Syntax", null] }),
];

describe("runMetrics on eight hand-built trajectories", () => {
  const m = runMetrics(run);
  it("counts and rates", () => {
    expect(m.total).toBe(8);
    expect(m.initial_correct_count).toBe(2); // T0, T1
    expect(m.final_correct_count).toBe(5); // T0, T1, T2, T3, T7
    expect(m.repaired_count).toBe(3); // T2, T3, T7
    expect(m.failed_count).toBe(3); // 8 − 5
    expect(m.success_at_1).toBe(0.25); // 2/8
    expect(m.final_accuracy).toBe(0.625); // 5/8
  });
  it("Steps: repaired count their steps, unrepaired count K = 7", () => {
    // initial failures T2..T7: 1 + 3 + 7 + 7 + 7 + 2 = 27 over 6 → 4.5
    expect(m.steps).toBe(4.5);
    // with K = 9 the three unrepaired count 9: (1 + 3 + 2 + 27) / 6 = 5.5
    expect(runMetrics(run, { maxRepairSteps: 9 }).steps).toBe(5.5);
  });
  it("oscillation rate over ALL trajectories", () => {
    // T3, T5, T6 oscillate; denominator 8 includes the initially-correct T0, T1 → 3/8
    expect(m.oscillation_rate).toBe(0.375);
  });
  it("convergence variance over final-correct trajectories incl. initially-correct ones", () => {
    // steps {0, 0, 1, 3, 2}: mean 1.2; squared deviations 1.44 + 1.44 + 0.04 + 3.24 + 0.64 = 6.8; / 5 = 1.36
    expect(m.convergence_variance).toBeCloseTo(1.36, 12);
    expect(populationVariance([5])).toBe(0);
    expect(populationVariance([])).toBe(0);
  });
  it("failure composition of initial and final attempts", () => {
    // initial failures: T2 SL, T3 RM, T4 Syntax, T5 RM, T6 Execution, T7 SL
    expect(m.initial_failure_breakdown).toEqual({ Execution: 1, "Result Mismatch": 2, "Schema Linking": 2, Syntax: 1 });
    expect(Object.keys(m.initial_failure_breakdown)).toEqual(["Execution", "Result Mismatch", "Schema Linking", "Syntax"]);
    // final failures: T4 Syntax, T5 RM, T6 Execution
    expect(m.final_failure_breakdown).toEqual({ Execution: 1, "Result Mismatch": 1, Syntax: 1 });
  });
  it("token and call sums", () => {
    const a = m.accounting;
    // calls: 8 initial + 27 repairs = 35; prompts 8·100 + 27·200 = 6,200; outputs 8·10 + 27·20 = 620
    expect(a.llm_calls).toBe(35);
    expect(a.total_prompt_tokens).toBe(6200);
    expect(a.initial_prompt_tokens).toBe(800);
    expect(a.repair_prompt_tokens).toBe(5400);
    expect(a.total_output_tokens).toBe(620);
    expect(a.total_tokens).toBe(6820);
    expect(a.truncations).toBe(1); // T4's call 2
    expect(a.db_executions).toBe(35); // one per attempt: 8 + 27
    expect(a.embedding_calls).toBe(0);
    expect(a.retrieval_calls).toBe(0);
  });
});

describe("mean_edit_distance_by_step", () => {
  it("averages per step over the trajectories that reach it", () => {
    const m = runMetrics([
      // step 1: 1 substitution / 4 = 0.25; step 2: 4 insertions / 8 = 0.5
      buildTrajectory({ query_id: "1", attempts: ["SELECT a FROM t", "SELECT b FROM t", "SELECT b FROM t WHERE x = 1"], statuses: [DM, DM, OK] }),
      // step 1: equal after normalisation → 0
      buildTrajectory({ query_id: "2", attempts: ["SELECT count(*) FROM t", "select COUNT(*) from t;"], statuses: [DM, DM] }),
      // no steps
      buildTrajectory({ query_id: "3", attempts: ["SELECT 1"], statuses: [OK] }),
      // step 1: [select, x] → [] = 2 deletions / 2 = 1
      buildTrajectory({ query_id: "4", attempts: ["SELECT x", ""], statuses: [DM, EE] }),
    ]);
    // step 1: (0.25 + 0 + 1) / 3; step 2: 0.5 / 1; steps 3..7: nobody
    expect(m.mean_edit_distance_by_step).toEqual([1.25 / 3, 0.5, null, null, null, null, null]);
  });
});

describe("runMetrics refuses malformed runs", () => {
  it("empty run", () => expect(() => runMetrics([])).toThrow(MeritError));
  it("mixed methods or seeds", () => {
    const other = repairTrajectory("9", 1, true, { method: "merit" });
    expect(() => runMetrics([run[0], other])).toThrow(/belongs to run \(spider, merit, seed 0\)/);
    expect(() => runMetrics([run[0], repairTrajectory("9", 1, true, { stream_seed: 1 })])).toThrow(/seed 1/);
  });
  it("duplicate query id", () => expect(() => runMetrics([run[0], run[0]])).toThrow(/query id 0 appears twice/));
  it("more than K repair steps", () => expect(() => runMetrics([repairTrajectory("1", 8, false)])).toThrow(/8 repair steps, more than K = 7/));
});

describe("meanStd (sample std, n − 1)", () => {
  it("known values", () => {
    // mean 2; deviations 1, 0, 1 → 2 / (3 − 1) = 1 → std 1
    expect(meanStd([1, 2, 3])).toEqual({ mean: 2, std: 1, n: 3 });
    // mean 5; squares 9 + 1 + 1 + 1 + 0 + 0 + 4 + 16 = 32 / 7 → std √(32/7)
    expect(meanStd([2, 4, 4, 4, 5, 5, 7, 9]).std).toBeCloseTo(Math.sqrt(32 / 7), 12);
    expect(meanStd([42])).toEqual({ mean: 42, std: null, n: 1 });
  });
  it("refuses no values and non-finite values", () => {
    expect(() => meanStd([])).toThrow(MeritError);
    expect(() => meanStd([1, NaN])).toThrow(/not a finite number/);
  });
});

describe("aggregateMetrics", () => {
  it("mean ± sample std of every scalar metric across seeds", () => {
    // seed 0 repairs q1 at step 1; seed 1 does not (7 steps); q0 correct in both.
    const seed0 = runMetrics([buildTrajectory({ query_id: "0", attempts: ["SELECT 0"], statuses: [OK] }), repairTrajectory("1", 1, true)]);
    const seed1 = runMetrics([buildTrajectory({ query_id: "0", attempts: ["SELECT 0"], statuses: [OK], stream_seed: 1 }), repairTrajectory("1", 7, false, { stream_seed: 1 })]);
    const agg = aggregateMetrics([seed0, seed1]);
    // EX 1 and 0.5 → mean 0.75, std √((0.0625 + 0.0625)/1) = 0.35355
    expect(agg.final_accuracy.mean).toBe(0.75);
    expect(agg.final_accuracy.std).toBeCloseTo(Math.SQRT1_2 / 2, 12);
    // Steps 1 and 7 → mean 4, std √(9 + 9) = 4.2426; calls 3 and 9 → 6 ± 4.2426
    expect(agg.steps).toEqual({ mean: 4, std: Math.sqrt(18), n: 2 });
    expect(agg.llm_calls).toEqual({ mean: 6, std: Math.sqrt(18), n: 2 });
    expect(agg.total.std).toBe(0);
  });
});
