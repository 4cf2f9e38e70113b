// Tests the judge-agreement table (lib/analysis/table-judge.ts, issue 37 §1): a judging method's
// recorded verdicts (trajectory judged_success, from its memory write's `verdict`) against the
// oracle's verdict of the final attempt — counts summed over stream orders, rates the mean over
// orders — and that nothing is written for runs without a judge. Also the write result's `verdict`
// check (stampWrite) and the trajectory schema's rule that only a memory method records one.
import { describe, expect, it } from "vitest";
import { summarizeRun, type RunSummary } from "../../lib/analysis/run-summary.ts";
import { renderCsv, renderMarkdown } from "../../lib/analysis/table.ts";
import { judgeAgreementTable, judgeRates } from "../../lib/analysis/table-judge.ts";
import { stampWrite } from "../../lib/methods/index.ts";
import { TrajectorySchema, type Trajectory } from "../../lib/repair/trajectory.ts";
import { buildTrajectory } from "./build-trajectory.ts";

/** One episode of `method` under `seed`: oracle-correct or not, with the judge's verdict (undefined: none recorded). */
function episode(i: number, correct: boolean, judged: boolean | undefined, seed: number, method = "reasoning_bank"): Trajectory {
  const t = buildTrajectory({ query_id: `q${i}`, attempts: ["SELECT 1"], statuses: [correct ? "CORRECT" : "DENOTATION_MISMATCH"], method, stream_seed: seed });
  return TrajectorySchema.parse({ ...t, stream_position: i, memory_writes: [], ...(judged === undefined ? {} : { judged_success: judged }) });
}

/** A run from [oracle-correct, judged] pairs. */
const runOf = (pairs: [boolean, boolean | undefined][], seed: number, method?: string): RunSummary => summarizeRun(pairs.map(([c, j], i) => episode(i, c, j, seed, method)));

describe("judge-agreement table", () => {
  it("counts true/false accepts and rejects against the oracle, sums counts and averages rates over stream orders", () => {
    // seed 0: 2 true accepts, 1 false accept, 1 true reject → agreement 3/4, sensitivity 1, specificity 1/2
    const s0 = runOf([[true, true], [true, true], [false, true], [false, false]], 0);
    // seed 1: 1 true accept, 1 false reject, 2 true rejects → agreement 3/4, sensitivity 1/2, specificity 1
    const s1 = runOf([[true, true], [true, false], [false, false], [false, false]], 1);
    expect(s0.judge).toEqual({ tp: 2, fp: 1, fn: 0, tn: 1 });
    expect(s1.judge).toEqual({ tp: 1, fp: 0, fn: 1, tn: 2 });
    // a method that does not judge contributes no row
    const other = runOf([[true, undefined], [false, undefined]], 0, "expel");
    expect(other.judge).toBeUndefined();
    const table = judgeAgreementTable([s1, other, s0])!;
    expect(table.id).toBe("judge-agreement");
    expect(table.data).toEqual([{ dataset: "spider", method: "reasoning_bank", orders: 2, seeds: "0 1", episodes: 8, tp: 3, fp: 1, fn: 1, tn: 3, agreement: 0.75, sensitivity: 0.75, specificity: 0.75 }]);
    expect(table.rows[0].map((c) => c.text)).toEqual(["spider", "reasoning_bank", "2", "8", "75.0", "75.0", "75.0", "3", "1", "1", "3"]);
    expect(table.notes[0]).toMatch(/oracle's verdict of the same final attempt/);
    expect(table.notes[0]).toMatch(/mean over stream orders/);
    expect(renderCsv(table).split("\n")[0]).toBe("Dataset,Method,Orders,Episodes judged,Agreement (%),Sensitivity (%),Specificity (%),True accepts,False accepts,False rejects,True rejects");
    expect(renderMarkdown(table)).toContain("| spider | reasoning_bank | 2 | 8 | 75.0 |");
  });

  it("lists a judging method even when the selection's method list (the paper's) leaves it out", () => {
    const t = judgeAgreementTable([runOf([[true, true]], 0)], { methods: ["merit", "iterative"] })!;
    expect(t.data.map((d) => d.method)).toEqual(["reasoning_bank"]);
  });

  it("is absent when no run judges, and a rate without its episodes is —", () => {
    expect(judgeAgreementTable([runOf([[true, undefined]], 0)])).toBeNull();
    expect(judgeRates({ tp: 2, fp: 0, fn: 0, tn: 0 })).toEqual({ agreement: 1, sensitivity: 1, specificity: null });
    const t = judgeAgreementTable([runOf([[true, true], [true, true]], 0)])!;
    expect(t.rows[0][6].text).toBe("—");
  });

  it("records a write's verdict and refuses one that is not a boolean; the schema refuses judged_success without a memory hook", () => {
    const here = { queryId: "q1", dbId: "db", streamPosition: 0, episodeId: "e" };
    expect(stampWrite("m", here, { notes: [], verdict: false }, []).verdict).toBe(false);
    expect(stampWrite("m", here, [], []).verdict).toBeNull();
    expect(() => stampWrite("m", here, { notes: [], verdict: "success" }, [])).toThrow(/^method "m": memory\.write's verdict for query q1 is "success"; give true .*, false, or leave it out$/);
    const plain = buildTrajectory({ query_id: "q1", attempts: ["SELECT 1"], statuses: ["CORRECT"] });
    expect(() => TrajectorySchema.parse({ ...plain, judged_success: true })).toThrow(/judged_success/);
  });
});
