// Tests lib/analysis/figure-failures.ts: failure-composition data by hand (mean over seeds, zero segments dropped) and its SVG/PNG with text.
import { describe, expect, it } from "vitest";
import { failureComposition, failureCompositionFigure, failureTypes } from "../../lib/analysis/figure-failures.ts";
import { renderSvg, svgToPng } from "../../lib/analysis/figure-render.ts";
import { summarizeRun } from "../../lib/analysis/run-summary.ts";
import { buildTrajectory, repairTrajectory } from "./build-trajectory.ts";

// Shared initial failures: q1 Syntax (EXECUTION_ERROR), q2 and q3 Result Mismatch (DENOTATION_MISMATCH).
// merit repairs q1 and q2 on both seeds, leaving q3 (Result Mismatch);
// iterative repairs nothing on seed 0 (finals: q1 Syntax, q2 and q3 Result Mismatch) and q2 on seed 1.
function run(method: string, seed: number, repaired: Set<string>) {
  return summarizeRun([
    buildTrajectory({ query_id: "0", attempts: ["SELECT 0"], statuses: ["CORRECT"], method, stream_seed: seed }),
    buildTrajectory({
      query_id: "1",
      attempts: ["SELEC 1", "SELECT 1"],
      statuses: ["EXECUTION_ERROR", repaired.has("1") ? "CORRECT" : "EXECUTION_ERROR"],
      method,
      stream_seed: seed,
    }),
    repairTrajectory("2", 1, repaired.has("2"), { method, stream_seed: seed }),
    repairTrajectory("3", 1, false, { method, stream_seed: seed }),
  ]);
}
const runs = [
  run("merit", 0, new Set(["1", "2"])),
  run("merit", 1, new Set(["1", "2"])),
  run("iterative", 0, new Set()),
  run("iterative", 1, new Set(["2"])),
];

describe("failureComposition", () => {
  it("counts initial and final failures per type, mean over seeds", () => {
    const rows = failureComposition(runs, { labels: { merit: "MERIT" } }).map((s) => `${s.method} ${s.phase} ${s.type} ${s.count}`);
    expect(rows).toEqual([
      // iterative: initial 1 Syntax + 2 Result Mismatch on both seeds;
      // final Syntax 1 on both seeds; final Result Mismatch (2 + 1) / 2 = 1.5
      "iterative Initial Syntax 1",
      "iterative Initial Result Mismatch 2",
      "iterative Final Syntax 1",
      "iterative Final Result Mismatch 1.5",
      "MERIT Initial Syntax 1",
      "MERIT Initial Result Mismatch 2",
      // merit: only q3 stays failed; no final Syntax segment (count 0 is dropped)
      "MERIT Final Result Mismatch 1",
    ]);
  });
  it("shows a classify hook's labels too: METHOD.md §3's types first, the others after, sorted", async () => {
    // a method whose classifier splits Result Mismatch: q2 "Mismatch: join", q3 "Mismatch: filter"; it repairs q2
    const fine = summarizeRun([
      buildTrajectory({ query_id: "1", attempts: ["SELEC 1", "SELECT 1"], statuses: ["EXECUTION_ERROR", "CORRECT"], method: "fine" }),
      buildTrajectory({ query_id: "2", attempts: ["SELECT a FROM t JOIN u", "SELECT 2"], statuses: ["DENOTATION_MISMATCH", "CORRECT"], error_types: ["Mismatch: join" as never, null], method: "fine" }),
      buildTrajectory({ query_id: "3", attempts: ["SELECT a FROM t WHERE b", "SELECT 3 FROM t WHERE c"], statuses: ["DENOTATION_MISMATCH", "DENOTATION_MISMATCH"], error_types: ["Mismatch: filter" as never, "Mismatch: filter" as never], method: "fine" }),
    ]);
    expect(failureTypes([fine]).slice(-2)).toEqual(["Mismatch: filter", "Mismatch: join"]);
    const rows = failureComposition([fine]).map((s) => `${s.phase} ${s.type} ${s.count} ${s.order}`);
    expect(rows).toEqual(["Initial Syntax 1 1", "Initial Mismatch: filter 1 7", "Initial Mismatch: join 1 8", "Final Mismatch: filter 1 7"]);
    // the paper's runs keep their segments, order and colours
    expect(failureTypes(runs)).toEqual(["Schema Linking", "Syntax", "Aggregation", "Filter/Value", "Execution", "Result Mismatch", "Unknown"]);
    const svg = await renderSvg(failureCompositionFigure([fine]));
    for (const text of ["Mismatch: filter", "Mismatch: join"]) expect(svg).toContain(`>${text}</text>`);
  });
  it("renders to SVG and a PNG with drawn text", async () => {
    const svg = await renderSvg(failureCompositionFigure(runs, { labels: { spider: "Spider", merit: "MERIT" } }));
    for (const text of ["MERIT", "Initial", "Final", "Failure type", "Result Mismatch", "Failed queries", "Spider"]) expect(svg).toContain(`>${text}</text>`);
    const png = svgToPng(svg);
    expect([...png.subarray(1, 4)]).toEqual([0x50, 0x4e, 0x47]);
    expect(Buffer.compare(png, svgToPng(svg.replace(/<text[^>]*>[^<]*<\/text>/g, "")))).not.toBe(0);
  });
});
