// Shorter runs read off one long run (lib/analysis/prefix-runs.ts; issue 37 §2, METHOD.md §13.8): the
// episode cut at K′, the memoryless check, the token-matched K′ by interpolation, and the paired
// comparison with the outcomes at the two K′ mixed by the weight.
import { describe, expect, it } from "vitest";
import { pairedClusterBootstrap } from "../../lib/analysis/bootstrap.ts";
import { assertPrefixMethod, prefixCurve, prefixEpisode, tokenMatch, tokenMatchedComparison, WEIGHT_PARTS } from "../../lib/analysis/prefix-runs.ts";
import { summarizeRun } from "../../lib/analysis/run-summary.ts";
import { getMethod } from "../../lib/methods/index.ts";
import { buildTrajectory, INITIAL_OUTPUT, INITIAL_PROMPT, LATER_OUTPUT, LATER_PROMPT } from "./build-trajectory.ts";

const FIRST = INITIAL_PROMPT + INITIAL_OUTPUT;
const LATER = LATER_PROMPT + LATER_OUTPUT;
const W = "DENOTATION_MISMATCH" as const;

describe("prefixEpisode", () => {
  it("cuts an Iterative episode at every K′: outcome of attempt min(K′, steps), tokens of the calls before repair K′+1", () => {
    const t = buildTrajectory({ query_id: "q1", attempts: ["a", "b", "c", "d"], statuses: [W, W, W, "CORRECT"] });
    const e = prefixEpisode(t, 5);
    expect(e.correct).toEqual([false, false, false, true, true, true]);
    expect(e.tokens).toEqual([FIRST, FIRST + LATER, FIRST + 2 * LATER, FIRST + 3 * LATER, FIRST + 3 * LATER, FIRST + 3 * LATER]);
  });

  it("Reflexion: the reflection after attempt K′ belongs to the K′ run, except at K′ = 0, where none is made", () => {
    // calls: initial, reflection, repair, reflection, repair (correct)
    const t = buildTrajectory({ query_id: "q2", attempts: ["a", "b", "c"], statuses: [W, W, "CORRECT"], method: "reflexion", reflect: true });
    const e = prefixEpisode(t, 3);
    expect(e.correct).toEqual([false, false, true, true]);
    expect(e.tokens).toEqual([FIRST, FIRST + 3 * LATER, FIRST + 4 * LATER, FIRST + 4 * LATER]);
  });

  it("an initially correct query is correct at every K′ for its initial tokens; more repairs than K is refused", () => {
    const t = buildTrajectory({ query_id: "q3", attempts: ["a"], statuses: ["CORRECT"] });
    expect(prefixEpisode(t, 2)).toEqual({ correct: [true, true, true], tokens: [FIRST, FIRST, FIRST] });
    const long = buildTrajectory({ query_id: "q4", attempts: ["a", "b", "c"], statuses: [W, W, W] });
    expect(() => prefixEpisode(long, 1)).toThrow(/has 2 repairs but the run's K is 1; pass the run's own K/);
  });
});

describe("assertPrefixMethod", () => {
  it("accepts Iterative and Reflexion; refuses a memory, hooks and an unknown step, each in one line naming the fix", () => {
    expect(() => assertPrefixMethod("iterative_long", { repairs: true, steps: [] }, "--long-iterative")).not.toThrow();
    expect(() => assertPrefixMethod("reflexion_long", { repairs: true, steps: [{ name: "reflect" }] }, "--long-iterative")).not.toThrow();
    expect(() => assertPrefixMethod("merit", { repairs: true, planner: {}, steps: [] }, "--long-iterative")).toThrow(/^--long-iterative: merit keeps a memory across episodes, so a run at a smaller K is not a prefix of its long run; give the long run to a memoryless method/);
    expect(() => assertPrefixMethod("reasoning_bank", { repairs: true, steps: [], hooks: { memory: {} } }, "x")).toThrow(/keeps a memory across episodes/);
    expect(() => assertPrefixMethod("critic", { repairs: true, steps: [], hooks: { calls: { critic: { most: 1 } } } }, "x")).toThrow(/has hooks/);
    expect(() => assertPrefixMethod("odd", { repairs: true, steps: [{ name: "plan" }] }, "x")).toThrow(/has the step plan/);
    expect(() => assertPrefixMethod("old", undefined, "x")).toThrow(/records no method_parts/);
  });
  it("reads the records manifests hold now (method_parts: repairs, hooks): Iterative and Reflexion's reflect step pass, a memory, a plugin's hooks and step are refused", () => {
    const record = (name: string) => getMethod(name).record;
    expect(() => assertPrefixMethod("iterative_long", record("iterative"), "--long-iterative")).not.toThrow();
    expect(() => assertPrefixMethod("reflexion_long", record("reflexion"), "--long-iterative")).not.toThrow();
    expect(() => assertPrefixMethod("merit", record("merit"), "--long-iterative")).toThrow(/^--long-iterative: merit keeps a memory across episodes, so a run at a smaller K is not a prefix of its long run; give the long run to a memoryless method/);
    expect(() => assertPrefixMethod("reasoning_bank", record("reasoning_bank"), "x")).toThrow(/^x: reasoning_bank keeps a memory across episodes/);
    expect(() => assertPrefixMethod("zeroshot", record("zeroshot"), "x")).toThrow(/^x: zeroshot makes no repairs/);
    expect(() => assertPrefixMethod("typed", { repairs: true, hooks: { calls: {}, classify: { name: "fine", types: ["A"] } } }, "x")).toThrow(/^x: typed has hooks/);
    expect(() => assertPrefixMethod("odd", { repairs: true, hooks: { calls: {}, step: { name: "plan" } } }, "x")).toThrow(/^x: odd has the step plan/);
  });
});

describe("tokenMatch", () => {
  const curve = [100, 200, 300, 300, 500];
  it("interpolates linearly between the two integer K′ around the target", () => {
    expect(tokenMatch(curve, 250)).toEqual({ within: true, lower: 1, weight: 0.5, kStar: 1.5 });
    expect(tokenMatch(curve, 125)).toEqual({ within: true, lower: 0, weight: 0.25, kStar: 0.25 });
    expect(tokenMatch(curve, 450)).toEqual({ within: true, lower: 3, weight: 0.75, kStar: 3.75 });
  });
  it("an exact K′ has weight 0; a flat stretch takes its smallest K′; the ends match; outside is no match", () => {
    expect(tokenMatch(curve, 200)).toEqual({ within: true, lower: 1, weight: 0, kStar: 1 });
    // 300 is reached at K′ = 2 and held at 3: the smallest K′ that spends it
    expect(tokenMatch(curve, 300)).toEqual({ within: true, lower: 2, weight: 0, kStar: 2 });
    expect(tokenMatch(curve, 100)).toEqual({ within: true, lower: 0, weight: 0, kStar: 0 });
    expect(tokenMatch(curve, 500)).toEqual({ within: true, lower: 4, weight: 0, kStar: 4 });
    expect(tokenMatch(curve, 99)).toEqual({ within: false, side: "below" });
    expect(tokenMatch(curve, 501)).toEqual({ within: false, side: "above" });
  });
  it("rounds the weight to 1/WEIGHT_PARTS; a weight that rounds to 1 is the next K′", () => {
    expect(tokenMatch([0, 3], 1)).toMatchObject({ weight: Math.round(WEIGHT_PARTS / 3) / WEIGHT_PARTS });
    expect(tokenMatch([0, 1000], 999.9)).toEqual({ within: true, lower: 1, weight: 0, kStar: 1 });
    expect(() => tokenMatch([10, 5], 7)).toThrow(/fall from K′ = 0 to 1/);
  });
});

describe("tokenMatchedComparison", () => {
  // the long Iterative run at K = 2 over two queries, one stream order: q1 repaired at step 2, q2 never
  const long = [
    buildTrajectory({ query_id: "q1", attempts: ["a", "b", "c"], statuses: [W, W, "CORRECT"], method: "iterative_long" }),
    buildTrajectory({ query_id: "q2", attempts: ["a", "b", "c"], statuses: [W, W, W], method: "iterative_long" }),
  ];
  const curve = prefixCurve([{ trajectories: long, k: 2 }]);

  it("reads EX and tokens per query at every K′ from the one run", () => {
    expect(curve.ex).toEqual([0, 0, 50]);
    expect(curve.tokensPerQuery).toEqual([FIRST, FIRST + LATER, FIRST + 2 * LATER]);
  });

  it("Δ = method − Iterative at the interpolated K′*: the interpolation of the two paired Δ, with the bootstrap of the mixed outcomes", () => {
    // a method that spends 1.5 repairs' tokens per query and repairs q2 only
    const other = summarizeRun([
      buildTrajectory({ query_id: "q1", attempts: ["a", "b"], statuses: [W, W], method: "peer" }),
      buildTrajectory({ query_id: "q2", attempts: ["a", "b", "c"], statuses: [W, W, "CORRECT"], method: "peer" }),
    ]);
    const c = tokenMatchedComparison([other], curve, "peer", { resamples: 500, seed: 0 });
    expect(c.tokensPerQuery).toBe(FIRST + 1.5 * LATER);
    expect(c.match).toEqual({ within: true, lower: 1, weight: 0.5, kStar: 1.5 });
    expect(c.exMatched).toBeCloseTo(25, 10);
    // Δ at K′ = 1: 50 − 0; at K′ = 2: 50 − 50; interpolated: 25
    expect(c.delta).toBeCloseTo(25, 10);
    const at1 = pairedClusterBootstrap([[0], [1]], [[0], [0]], { resamples: 500, seed: 0 });
    expect(at1.delta).toBe(50);
    expect(c.lo).toBeLessThanOrEqual(c.delta!);
    expect(c.hi).toBeGreaterThanOrEqual(c.delta!);
  });

  it("a method cheaper than K′ = 0 or dearer than K is no match; other stream orders are refused", () => {
    const cheap = summarizeRun([
      buildTrajectory({ query_id: "q1", attempts: ["a"], statuses: ["CORRECT"], method: "zero" }),
      buildTrajectory({ query_id: "q2", attempts: ["a"], statuses: ["CORRECT"], method: "zero" }),
    ]);
    // 110 tokens per query: exactly K′ = 0's
    expect(tokenMatchedComparison([cheap], curve, "zero", { resamples: 100 }).match).toEqual({ within: true, lower: 0, weight: 0, kStar: 0 });
    const dear = summarizeRun(["q1", "q2"].map((q) => buildTrajectory({ query_id: q, attempts: ["a", "b", "c", "d"], statuses: [W, W, W, W], method: "dear" })));
    expect(tokenMatchedComparison([dear], curve, "dear").match).toEqual({ within: false, side: "above" });
    const seed1 = summarizeRun(["q1", "q2"].map((q) => buildTrajectory({ query_id: q, attempts: ["a"], statuses: ["CORRECT"], method: "s1", stream_seed: 1 })));
    expect(() => tokenMatchedComparison([seed1], curve, "s1")).toThrow(/s1 has stream orders \[1\] but the long iterative_long run has \[0\]/);
  });
});
