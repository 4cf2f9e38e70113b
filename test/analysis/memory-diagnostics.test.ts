// Tests lib/analysis/memory-diagnostics.ts: the retrieval utility table and the memory size curves on
// hand-made trajectories and retrieval logs (a MERIT entry memory over two seeds, a hook-note memory
// under a non-oracle feedback regime), every share worked out by hand in the comments.
import { describe, expect, it } from "vitest";
import { renderSvg } from "../../lib/analysis/figure-render.ts";
import { memorySizeCsv, memorySizeFigure, memoryUtilityTable, retrievalUtility, type RunDiagnostics } from "../../lib/analysis/memory-diagnostics.ts";
import { renderCsv } from "../../lib/analysis/table.ts";
import type { AttemptStatus } from "../../lib/oracle/types.ts";
import type { Trajectory } from "../../lib/repair/trajectory.ts";
import type { RetrievalLogRecord } from "../../lib/retrieval/retrieval-log.ts";
import { buildTrajectory } from "./build-trajectory.ts";

const C: AttemptStatus = "CORRECT", EE: AttemptStatus = "EXECUTION_ERROR", DM: AttemptStatus = "DENOTATION_MISMATCH";

function traj(method: string, seed: number, position: number, id: string, statuses: AttemptStatus[], extra: Partial<Trajectory> = {}): Trajectory {
  return { ...buildTrajectory({ query_id: id, attempts: statuses.map((_, i) => `SELECT ${i}`), statuses, method, stream_seed: seed }), stream_position: position, ...extra };
}

/** A retrieval_log.jsonl record with only the fields the diagnostics read filled in meaningfully. */
function rec(query_id: string, repair_iteration: number, items: [string, string, string][]): RetrievalLogRecord {
  return {
    query_id, repair_iteration, current_error_type: "Syntax", legal_pool_size: 0, typed_pool_size: 0, fallback_used: false, type_filter_applied: false, type_match_used_as_soft_score: false,
    retrieved_entry_ids: items.map((i) => i[0]), retrieved_polarities: items.map((i) => i[1]), retrieved_error_types: items.map((i) => i[2]),
    source_db_ids: items.map(() => "db"), source_stream_positions: items.map(() => 0), dense_scores: [], bm25_scores: [], type_match_scores: [], final_scores: [],
    method_name: "m", legal_pool_size_by_polarity: {}, typed_pool_size_by_polarity: {}, fallback_used_by_polarity: {}, dense_search: "none",
  };
}

/** The trajectory's retrieved_entry_ids as the log says. */
const ids = (log: RetrievalLogRecord[], id: string, steps: number) => Array.from({ length: steps }, (_, s) => log.find((r) => r.query_id === id && r.repair_iteration === s + 1)?.retrieved_entry_ids ?? []);

// merit seed 0: q0 correct; q1 [EE, DM, C] step 1 retrieves p1 (positive Syntax) and n1 (negative Syntax), step 2 p2 (positive Result Mismatch);
// q2 [DM, DM] step 1 retrieves n1 and n2 (both negative Syntax). Entries born: positive at 1, negative at 2.
const log0 = [rec("q1", 1, [["p1", "positive", "Syntax"], ["n1", "negative", "Syntax"]]), rec("q1", 2, [["p2", "positive", "Result Mismatch"]]), rec("q2", 1, [["n1", "negative", "Syntax"], ["n2", "negative", "Syntax"]])];
// merit seed 1: q1 [EE, C] step 1 retrieves p1; q2 [DM, DM, DM] step 1 retrieves nothing (an empty record), step 2 has no record. Entry born: positive at 0.
const log1 = [rec("q1", 1, [["p1", "positive", "Syntax"]]), rec("q2", 1, [])];
const merit0: RunDiagnostics = {
  dataset: "spider", method: "merit", stream_seed: 0, retrievalLog: log0, entryBirths: [{ polarity: "positive", position: 1 }, { polarity: "negative", position: 2 }],
  trajectories: [traj("merit", 0, 0, "q0", [C]), traj("merit", 0, 1, "q1", [EE, DM, C], { retrieved_entry_ids: ids(log0, "q1", 2) }), traj("merit", 0, 2, "q2", [DM, DM], { retrieved_entry_ids: ids(log0, "q2", 1) })],
};
const merit1: RunDiagnostics = {
  dataset: "spider", method: "merit", stream_seed: 1, retrievalLog: log1, entryBirths: [{ polarity: "positive", position: 0 }],
  trajectories: [traj("merit", 1, 0, "q1", [EE, C], { retrieved_entry_ids: ids(log1, "q1", 1) }), traj("merit", 1, 1, "q2", [DM, DM, DM])],
};

// A hook-note memory under a non-oracle regime (statuses show what the feedback accepted, feedback.oracle_correct the truth):
// q0 (pos 0) correct, writes N0 (positive lesson); q1 (pos 1) [EE, accepted] but oracle-wrong, step 1 retrieves N0, writes N1 (negative lesson), N2 (neutral tip);
// q2 (pos 2) [EE, EE, C] all oracle-agreed, step 1 retrieves N1 and N2, step 2 retrieves N0.
const note = (id: string, polarity: "positive" | "negative" | "neutral", kind: string, query: string, position: number) => ({
  note_id: id, kind, text: `${kind} ${id}`, key: id, polarity, data: null, source_query_id: query, source_db_id: "db", source_stream_position: position, source_episode_id: `e-${query}`,
});
const logL = [rec("q1", 1, [["N0", "positive", "lesson"]]), rec("q2", 1, [["N1", "negative", "lesson"], ["N2", "neutral", "tip"]]), rec("q2", 2, [["N0", "positive", "lesson"]])];
const regime = (accepted: boolean[], oracle: boolean[]) => ({ feedback_regime: "execution_only", feedback: { accepted, oracle_correct: oracle }, final_correct: oracle[oracle.length - 1] });
const lessons: RunDiagnostics = {
  dataset: "spider", method: "lessons", stream_seed: 0, retrievalLog: logL, entryBirths: null,
  trajectories: [
    traj("lessons", 0, 0, "q0", [C], { ...regime([true], [true]), memory_writes: [note("N0", "positive", "lesson", "q0", 0)] }),
    traj("lessons", 0, 1, "q1", [EE, C], { ...regime([false, true], [false, false]), retrieved_entry_ids: ids(logL, "q1", 1), memory_writes: [note("N1", "negative", "lesson", "q1", 1), note("N2", "neutral", "tip", "q1", 1)] }),
    traj("lessons", 0, 2, "q2", [EE, EE, C], { ...regime([false, false, true], [false, false, true]), retrieved_entry_ids: ids(logL, "q2", 2), memory_writes: [] }),
  ],
};
// a memoryless run: no memory/, no notes, no log
const iterative: RunDiagnostics = { dataset: "spider", method: "iterative", stream_seed: 0, retrievalLog: [], entryBirths: null, trajectories: [traj("iterative", 0, 0, "q1", [EE, C])] };

const row = (r: ReturnType<typeof retrievalUtility>[number]) =>
  `${r.method} ${r.polarity}/${r.kind}: ${r.retrievals} ret, ${r.steps} steps, correct ${r.step_correct}, accepted ${r.step_accepted}, episode ${r.episode_correct} | base ${r.base_steps}: ${r.base_step_correct}, ${r.base_step_accepted}, ${r.base_episode_correct}`;

describe("retrievalUtility", () => {
  it("pools a method's repair steps over seeds and splits them by the retrieved items' polarity and kind", () => {
    // merit's 6 repair steps (correct / episode-correct): S1 seed 0 q1 step 1 (no / yes; p1, n1), S2 q1 step 2 (yes / yes; p2),
    // S3 q2 step 1 (no / no; n1, n2), S4 seed 1 q1 step 1 (yes / yes; p1), S5 q2 step 1 (no / no; none), S6 q2 step 2 (no / no; none).
    // Under the oracle regime accepted = correct.
    const rows = retrievalUtility([merit0, merit1, iterative]).filter((r) => r.method === "merit").map(row);
    expect(rows).toEqual([
      // {S1, S4}: correct 1/2, episode 2/2; base {S2, S3, S5, S6}: correct 1/4, episode 1/4
      "merit positive/Result Mismatch: 1 ret, 1 steps, correct 1, accepted 1, episode 1 | base 5: 0.2, 0.2, 0.4",
      "merit positive/Syntax: 2 ret, 2 steps, correct 0.5, accepted 0.5, episode 1 | base 4: 0.25, 0.25, 0.25",
      // 3 retrievals over {S1, S3}: correct 0/2, episode 1/2; base {S2, S4, S5, S6}: 2/4, 2/4
      "merit negative/Syntax: 3 ret, 2 steps, correct 0, accepted 0, episode 0.5 | base 4: 0.5, 0.5, 0.5",
      // {S5, S6}; base {S1..S4}: correct 2/4, episode 3/4
      "merit none/none: 0 ret, 2 steps, correct 0, accepted 0, episode 0 | base 4: 0.5, 0.5, 0.75",
    ]);
  });

  it("reads hook notes' kinds and the oracle's verdict under a non-oracle regime; memoryless runs have no rows", () => {
    // T1 q1 step 1 (oracle no, accepted yes, episode no; N0), T2 q2 step 1 (no, no, yes; N1, N2), T3 q2 step 2 (yes, yes, yes; N0)
    expect(retrievalUtility([iterative, lessons]).map(row)).toEqual([
      "lessons positive/lesson: 2 ret, 2 steps, correct 0.5, accepted 1, episode 0.5 | base 1: 0, 0, 1",
      "lessons negative/lesson: 1 ret, 1 steps, correct 0, accepted 0, episode 1 | base 2: 0.5, 1, 0.5",
      "lessons neutral/tip: 1 ret, 1 steps, correct 0, accepted 0, episode 1 | base 2: 0.5, 1, 0.5",
    ]);
    expect(retrievalUtility([iterative])).toEqual([]);
    expect(memoryUtilityTable([iterative])).toBeNull();
  });

  it("refuses a log that names a missing step, and a retrieving step without a record", () => {
    expect(() => retrievalUtility([{ ...merit1, retrievalLog: [...log1, rec("q1", 2, [])] }])).toThrow(/record of query q1, repair step 2, which its trajectories do not hold/);
    expect(() => retrievalUtility([{ ...merit0, retrievalLog: log0.slice(1) }])).toThrow(/no record of query q1, repair step 1, which retrieved p1, n1/);
  });
});

describe("memoryUtilityTable", () => {
  it("shows percentages with one decimal, the accepted shares in the CSV only, a rule between methods", () => {
    const table = memoryUtilityTable([merit0, merit1, lessons], { methods: ["merit", "lessons"], labels: { merit: "MERIT" } })!;
    const csv = renderCsv(table).trim().split("\n");
    expect(csv[0]).toBe("Dataset,Method,Polarity,Kind,Retrievals,Steps,Step correct,Episode correct,Base steps,Base step correct,Base episode correct,Step accepted,Base step accepted");
    expect(csv[1]).toBe("spider,MERIT,positive,Result Mismatch,1,1,100.0,100.0,5,20.0,40.0,100.0,20.0");
    expect(csv[5]).toBe("spider,lessons,positive,lesson,2,2,50.0,50.0,1,0.0,100.0,100.0,0.0");
    expect(table.rulesBefore).toEqual([4]);
    expect(table.csvOnly).toEqual([11, 12]);
  });
});

describe("memory size", () => {
  it("counts entries at their births and hook notes from the episode after the one that wrote them, neutral notes as a third polarity", () => {
    const lines = memorySizeCsv([merit0, merit1, iterative, lessons]).trim().split("\n");
    expect(lines).toEqual([
      "dataset,method,polarity,episodes,items",
      // merit positive: seed 0 born at 1 (counts from 2 episodes), seed 1 at 0 (from 1); streams of 3 and 2 → 0, 0.5, 1, 1
      "spider,merit,positive,0,0.0000",
      "spider,merit,positive,1,0.5000",
      "spider,merit,positive,2,1.0000",
      "spider,merit,positive,3,1.0000",
      // negative: seed 0 only, born at 2
      "spider,merit,negative,0,0.0000",
      "spider,merit,negative,3,0.5000",
      // lessons: N0 written at position 0, N1 and N2 at 1; stream of 3
      "spider,lessons,positive,0,0.0000",
      "spider,lessons,positive,1,1.0000",
      "spider,lessons,positive,3,1.0000",
      "spider,lessons,negative,0,0.0000",
      "spider,lessons,negative,2,1.0000",
      "spider,lessons,negative,3,1.0000",
      "spider,lessons,neutral,0,0.0000",
      "spider,lessons,neutral,2,1.0000",
      "spider,lessons,neutral,3,1.0000",
    ]);
  });
  it("draws every memory method with its polarities", async () => {
    const svg = await renderSvg(memorySizeFigure([merit0, merit1, lessons], { labels: { merit: "MERIT" } }));
    for (const text of ["MERIT", "lessons", "positive", "negative", "neutral", "Items in memory"]) expect(svg).toContain(`>${text}</text>`);
  });
});
