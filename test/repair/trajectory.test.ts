// Tests lib/repair/trajectory.ts: the trajectory schema accepts a consistent record and names each inconsistency (METHOD.md §6.5).
import { describe, expect, it } from "vitest";
import { InputFileError } from "../../lib/errors.ts";
import { parseTrajectoryLines, TrajectorySchema, type Trajectory } from "../../lib/repair/trajectory.ts";
import { buildTrajectory } from "../analysis/build-trajectory.ts";

const good: Trajectory = buildTrajectory({
  query_id: "17",
  attempts: ["SELECT nme FROM singer", "SELECT name FROM singer"],
  statuses: ["EXECUTION_ERROR", "CORRECT"],
  error_types: ["Schema Linking", null],
  reflect: false,
});

/** The first issue message of an altered copy of `good`, or "ok". */
function problem(change: (t: Record<string, unknown>) => void): string {
  const copy = structuredClone(good) as unknown as Record<string, unknown>;
  change(copy);
  const r = TrajectorySchema.safeParse(copy);
  return r.success ? "ok" : `${r.error.issues[0].path.join(".")}: ${r.error.issues[0].message}`;
}

describe("TrajectorySchema", () => {
  it("accepts a consistent record (round trip through JSON)", () => {
    expect(TrajectorySchema.parse(JSON.parse(JSON.stringify(good)))).toEqual(good);
    expect(good.accounting).toMatchObject({ llm_calls: 2, total_tokens: 100 + 10 + 200 + 20, truncations: 0 });
  });
  it("rejects unknown keys", () => expect(problem((t) => (t.extra = 1))).toMatch(/Unrecognized key/));
  it("per-attempt arrays must match attempts", () => expect(problem((t) => (t.statuses = ["EXECUTION_ERROR"]))).toMatch(/statuses: has 1 elements but attempts has 2/));
  it("per-call arrays must match call_kinds", () => expect(problem((t) => (t.truncated_prompt_tokens = [0]))).toMatch(/truncated_prompt_tokens: has 1 elements but call_kinds has 2/));
  it("repair_steps = attempts − 1", () => expect(problem((t) => (t.repair_steps = 2))).toMatch(/repair_steps: is 2 but attempts.length − 1 is 1/));
  it("one retrieval list per repair step", () => expect(problem((t) => (t.retrieved_entry_ids = []))).toMatch(/retrieved_entry_ids: has 0 steps/));
  it("call_kinds start with initial_cache and count the repairs", () => {
    expect(problem((t) => (t.call_kinds = ["repair", "repair"]))).toMatch(/call_kinds: must start/);
    expect(problem((t) => (t.call_kinds = ["initial_cache", "reflection"]))).toMatch(/has 0 repair calls but repair_steps is 1/);
  });
  it("error type is null exactly for CORRECT attempts", () => {
    expect(problem((t) => (t.error_types = [null, null]))).toMatch(/attempt 0: error type must be null exactly when/);
    expect(problem((t) => (t.error_types = ["Syntax", "Syntax"]))).toMatch(/attempt 1/);
  });
  it("correctness flags agree with the statuses where no feedback record says otherwise (the oracle's regime)", () => {
    expect(problem((t) => (t.final_correct = false))).toMatch(/final_correct: disagrees/);
    expect(problem((t) => (t.initial_correct = true))).toMatch(/initial_correct: disagrees/);
    // Under a regime that records its feedback, the oracle's verdict is the record's, not the statuses'.
    const recorded = (t: Record<string, unknown>) => {
      const n = (t.statuses as string[]).length;
      t.feedback_regime = "dbms_only";
      t.feedback = { accepted: (t.statuses as string[]).map((s) => s === "CORRECT"), oracle_correct: Array.from({ length: n }, (_, i) => i === 0 || i === n - 1) };
      t.initial_correct = true;
    };
    expect(problem(recorded)).toBe("ok");
  });
  it("accounting must follow the per-call arrays", () => {
    expect(problem((t) => ((t.accounting as Record<string, number>).total_tokens = 1))).toMatch(/accounting: total_tokens is 1 but the per-call arrays give 330/);
    expect(problem((t) => ((t.accounting as Record<string, number>).llm_calls = 3))).toMatch(/llm_calls is 3/);
    expect(problem((t) => ((t.accounting as Record<string, number>).truncations = 1))).toMatch(/truncations is 1 but the per-call arrays give 0/);
  });
});

describe("parseTrajectoryLines", () => {
  it("parses non-blank lines", () => {
    const text = `${JSON.stringify(good)}\n\n${JSON.stringify({ ...good, query_id: "18" })}\n`;
    expect(parseTrajectoryLines(text, "runs/x/trajectories.jsonl").map((t) => t.query_id)).toEqual(["17", "18"]);
  });
  it("names the file, line and field of a bad line", () => {
    const bad = JSON.stringify({ ...good, repair_steps: 5 });
    expect(() => parseTrajectoryLines(`${JSON.stringify(good)}\n${bad}`, "t.jsonl")).toThrow(InputFileError);
    expect(() => parseTrajectoryLines(`${JSON.stringify(good)}\n${bad}`, "t.jsonl")).toThrow(/^t.jsonl: line 2: repair_steps is 5/);
    expect(() => parseTrajectoryLines("{not json", "t.jsonl")).toThrow(/line 1 is not JSON/);
  });
});
