// Tests lib/experiment/run-metrics.ts against the paper's Table 3 identities (METHOD.md §9) on synthetic Spider-sized runs.
import { describe, expect, it } from "vitest";
import { runMetrics } from "../../lib/experiment/run-metrics.ts";
import type { Trajectory } from "../../lib/repair/trajectory.ts";
import { buildTrajectory, repairTrajectory } from "./build-trajectory.ts";

const SPIDER = 1034;
const INITIAL_FAILURES = 425; // Spider initial EX 58.90% = 609/1,034

/**
 * A Spider-sized run: 609 initially-correct queries, then the 425 initial failures as groups of
 * [count, repair steps, repaired?].
 */
function spiderRun(method: string, groups: [number, number, boolean][], reflect = false): Trajectory[] {
  const out: Trajectory[] = [];
  for (let i = 0; i < SPIDER - INITIAL_FAILURES; i++) {
    out.push(buildTrajectory({ query_id: String(out.length), attempts: ["SELECT 1"], statuses: ["CORRECT"], method }));
  }
  for (const [count, steps, repaired] of groups) {
    for (let i = 0; i < count; i++) out.push(repairTrajectory(String(out.length), steps, repaired, { method, reflect }));
  }
  return out;
}

describe("paper Table 3 identities on Spider (1,034 queries, 425 initial failures)", () => {
  it("Iterative: calls 3,619 = 1,034 + 425 × 6.082", () => {
    // Repairs must total 3,619 − 1,034 = 2,585. Repaired count is our choice (the paper gives calls only):
    // 355 unrepaired × 7 = 2,485, so 70 repaired share 100 steps: 40 at step 1 + 30 at step 2.
    const m = runMetrics(spiderRun("iterative", [[40, 1, true], [30, 2, true], [355, 7, false]]));
    expect(m.total).toBe(1034);
    expect(m.total - m.initial_correct_count).toBe(425);
    expect(m.success_at_1 * 100).toBeCloseTo(58.9, 2); // 609 / 1,034 = 58.897%
    expect(m.accounting.llm_calls).toBe(3619);
    expect(m.steps).toBeCloseTo(6.082, 3); // 2,585 / 425 = 6.08235
    expect(m.accounting.llm_calls).toBe(1034 + Math.round(425 * m.steps));
    expect(m.repaired_count).toBe(70);
  });

  it("MERIT: calls 3,419 ≈ 1,034 + 425 × 5.611", () => {
    // Repairs total 3,419 − 1,034 = 2,385: 305 unrepaired × 7 = 2,135; 120 repaired share 250 = 110 × 2 + 10 × 3.
    const m = runMetrics(spiderRun("merit", [[110, 2, true], [10, 3, true], [305, 7, false]]));
    expect(m.accounting.llm_calls).toBe(3419);
    expect(Math.abs(m.steps - 5.611)).toBeLessThan(0.001); // 2,385 / 425 = 5.61176
    expect(m.repaired_count).toBe(120);
  });

  it("Reflexion: calls 6,309 = 1,034 + repairs (425 × 5.821) + reflections (425 + repairs − 98)", () => {
    // 98 repaired; 327 unrepaired × 7 = 2,289 repairs; repairs must total 425 × 5.821 ≈ 2,474, so the
    // 98 repaired share 185 steps: 20 at step 1 + 69 at step 2 + 9 at step 3 (20 + 138 + 27 = 185).
    // Reflections: a repaired query with r steps reflects r times (after the initial failure and the
    // r − 1 failed repairs); an unrepaired one 1 + 7 = 8 times → 185 + 327 × 8 = 2,801 = 425 + 2,474 − 98.
    const m = runMetrics(spiderRun("reflexion", [[20, 1, true], [69, 2, true], [9, 3, true], [327, 7, false]], true));
    expect(m.repaired_count).toBe(98);
    expect(m.steps).toBeCloseTo(5.821, 3); // 2,474 / 425 = 5.82118
    const repairs = Math.round(425 * m.steps);
    expect(repairs).toBe(2474);
    expect(m.accounting.llm_calls).toBe(1034 + repairs + (425 + repairs - 98));
    expect(m.accounting.llm_calls).toBe(6309);
  });
});
