// Tests lib/report/example-episode.ts (issue 20 §9): word wrap, XML escaping and the episode checks of the Figure 2 builder, on hand-built run data.
import { describe, expect, it } from "vitest";
import { defaultExampleQuery, exampleEpisode, exampleEpisodeSvg, wrap, xmlEscape } from "../../lib/report/example-episode.ts";
import type { RunInput } from "../../lib/report/run-reader.ts";
import { buildTrajectory, repairTrajectory } from "../analysis/build-trajectory.ts";

describe("wrap and xmlEscape", () => {
  it("greedy wrap at spaces, long words cut, line breaks kept", () => {
    expect(wrap("SELECT a FROM t WHERE b = 1", 12)).toEqual(["SELECT a", "FROM t WHERE", "b = 1"]);
    expect(wrap("abcdefghijklmnop x", 5)).toEqual(["abcde", "fghij", "klmno", "p x"]);
    expect(wrap("a\nb", 10)).toEqual(["a", "b"]);
  });
  it("escapes markup and replaces characters XML forbids", () => {
    expect(xmlEscape(`a < b && c > "d" 'e'\u0001`)).toBe("a &lt; b &amp;&amp; c &gt; &quot;d&quot; &apos;e&apos;\ufffd");
  });
});

describe("exampleEpisode", () => {
  const common = { method: "merit", stream_seed: 0 };
  const trajectories = [buildTrajectory({ query_id: "0", attempts: ["SELECT 0"], statuses: ["CORRECT"], ...common }), repairTrajectory("1", 1, true, common)];
  const record = {
    query_id: "1", repair_iteration: 1, current_error_type: "Result Mismatch", legal_pool_size: 1, typed_pool_size: 1, fallback_used: false, type_filter_applied: true,
    type_match_used_as_soft_score: false, retrieved_entry_ids: ["e1"], retrieved_polarities: ["positive"], retrieved_error_types: ["Result Mismatch"], source_db_ids: ["db"],
    source_stream_positions: [0], dense_scores: [0.9], bm25_scores: [0.5], type_match_scores: [0], final_scores: [0.8], method_name: "merit",
    legal_pool_size_by_polarity: {}, typed_pool_size_by_polarity: {}, fallback_used_by_polarity: {}, dense_search: "exact",
  };
  const run = (log: RunInput["retrievalLog"]): RunInput => ({ label: "r", dir: "runs/r", dataDir: null, trajectories, retrievalLog: log, memory: null });
  it("the failed attempt before the last step, its retrieval and the repair", () => {
    const e = exampleEpisode(run([record as never]), "1", null);
    expect(e).toMatchObject({ step: 1, attempts: 2, failed: { status: trajectories[1].statuses[0] }, repair: { status: "CORRECT" }, precedents: [{ polarity: "positive", sourceQuery: null, delta: null, score: 0.8 }] });
    const svg = exampleEpisodeSvg(e, { dataset: "Spider", method: "MERIT", subtitle: [] });
    expect(svg).toContain("Failed initial attempt");
    expect(svg).toContain("(not available: the run&apos;s dataset files were not found)");
    expect(svg).toContain("(entry not in the run&apos;s memory files)");
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg" width="960"')).toBe(true);
  });
  it("defaultExampleQuery: the first failed query whose last step retrieved something, repaired first", () => {
    const unrepaired = { ...repairTrajectory("2", 1, false, common), stream_position: 0 };
    const both = { ...run([record as never, { ...record, query_id: "2" } as never]), trajectories: [...trajectories.map((t, i) => ({ ...t, stream_position: i + 1 })), unrepaired] };
    expect(defaultExampleQuery(both)).toBe("1");
    expect(defaultExampleQuery({ ...both, trajectories: [trajectories[0], unrepaired] })).toBe("2");
    expect(defaultExampleQuery(run([{ ...record, retrieved_entry_ids: [] } as never]))).toBeNull();
    expect(defaultExampleQuery(run(null))).toBeNull();
  });
  it("refuses absent, initially correct and memoryless cases with the fix", () => {
    expect(() => exampleEpisode(run([record as never]), "9", null)).toThrow(/query 9 is not in runs\/r \(merit, seed 0\)/);
    expect(() => exampleEpisode(run([record as never]), "0", null)).toThrow(/initially correct .* \(e\.g\. 1\)/);
    expect(() => exampleEpisode(run(null), "1", null)).toThrow(/memoryless run/);
    expect(() => exampleEpisode(run([{ ...record, repair_iteration: 2 } as never]), "1", null)).toThrow(/has no step 1 of query 1/);
  });
});
