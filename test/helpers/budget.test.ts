// The time budgets of the tests (test/helpers/budget.ts): the slowdown grows with a slower unit of
// work and with the load per core, is clamped, can be fixed by MERIT_TEST_SLOWDOWN, and scales the
// default timeout of every test file (test/helpers/budget-setup.ts). No wall-clock time is asserted:
// the clock is injected.
import { describe, expect, it } from "vitest";
import { budget, clampSlowdown, DEFAULT_TIMEOUT_MS, MAX_SLOWDOWN, measureSpeed, MIN_SLOWDOWN, REFERENCE_UNIT_MS, speed, unitOfWork } from "./budget.ts";

/** A probe whose unit "takes" `ms` on a fake clock; `load` per `cores`. */
function probe(ms: number, load = 0, cores = 2) {
  let clock = 0;
  return { unit: () => (clock += ms), now: () => clock, load: () => load, cores, override: "" };
}

describe("measureSpeed", () => {
  it("is 1 at the reference speed, and grows in proportion when the unit of work is slower", () => {
    expect(measureSpeed(probe(REFERENCE_UNIT_MS)).slowdown).toBe(1);
    expect(measureSpeed(probe(REFERENCE_UNIT_MS * 3)).slowdown).toBe(3);
    expect(measureSpeed(probe(REFERENCE_UNIT_MS * 4.5)).slowdown).toBe(4.5);
    expect(measureSpeed(probe(REFERENCE_UNIT_MS * 3)).unitMs).toBe(REFERENCE_UNIT_MS * 3);
  });

  it("takes the median of the timed runs after a warm-up run that is not timed", () => {
    let clock = 0;
    const durations = [1000 /* warm-up, ignored */, 15, 150, 30, 45, 15];
    let call = 0;
    const speedOf = measureSpeed({ unit: () => (clock += durations[call++]), now: () => clock, load: () => 0, cores: 2, runs: 5, override: "" });
    expect(call).toBe(6);
    expect(speedOf.unitMs).toBe(30);
    expect(speedOf.slowdown).toBe(2);
  });

  it("follows the load per core when it says more than the unit of work", () => {
    expect(measureSpeed(probe(REFERENCE_UNIT_MS, 8, 2)).slowdown).toBe(4); // load 8 on two cores
    expect(measureSpeed(probe(REFERENCE_UNIT_MS, 1, 2)).slowdown).toBe(1); // half the cores busy: no slower
    expect(measureSpeed(probe(REFERENCE_UNIT_MS * 6, 8, 2)).slowdown).toBe(6); // the larger of the two
  });

  it("is clamped: never below MIN_SLOWDOWN (a written timeout is never shortened), never above MAX_SLOWDOWN", () => {
    expect(measureSpeed(probe(REFERENCE_UNIT_MS / 10)).slowdown).toBe(MIN_SLOWDOWN);
    expect(measureSpeed(probe(REFERENCE_UNIT_MS * 1000)).slowdown).toBe(MAX_SLOWDOWN);
    expect(measureSpeed(probe(REFERENCE_UNIT_MS, 1000, 2)).slowdown).toBe(MAX_SLOWDOWN);
    expect(clampSlowdown(NaN)).toBe(MIN_SLOWDOWN);
    expect(clampSlowdown(Infinity)).toBe(MAX_SLOWDOWN);
    expect(clampSlowdown(0)).toBe(MIN_SLOWDOWN);
  });

  it("MERIT_TEST_SLOWDOWN fixes the slowdown (clamped) without running the unit; a bad value is refused", () => {
    let ran = 0;
    const fixed = (override: string) => measureSpeed({ unit: () => ran++, load: () => 0, cores: 2, override });
    expect(fixed("3").slowdown).toBe(3);
    expect(fixed("0.5").slowdown).toBe(MIN_SLOWDOWN);
    expect(fixed("50").slowdown).toBe(MAX_SLOWDOWN);
    expect(ran).toBe(0);
    expect(() => fixed("fast")).toThrow(/MERIT_TEST_SLOWDOWN must be a positive number, got "fast"/);
    expect(() => fixed("-2")).toThrow(/MERIT_TEST_SLOWDOWN/);
  });
});

describe("budget", () => {
  it("scales a written timeout by the slowdown, rounding up", () => {
    expect(budget(120_000, 1)).toBe(120_000);
    expect(budget(120_000, 2.5)).toBe(300_000);
    expect(budget(1_000, 1.0001)).toBe(1_001);
  });

  it("uses this process's one measurement, which lies within the clamp", () => {
    const here = speed();
    expect(speed()).toBe(here); // measured once per process
    expect(here.slowdown).toBeGreaterThanOrEqual(MIN_SLOWDOWN);
    expect(here.slowdown).toBeLessThanOrEqual(MAX_SLOWDOWN);
    expect(budget(60_000)).toBe(budget(60_000, here.slowdown));
  });

  it("the unit of work is deterministic", () => {
    expect(unitOfWork(1000)).toBe(unitOfWork(1000));
    expect(unitOfWork(1000)).not.toBe(unitOfWork(1001));
  });
});

describe("the default timeouts of every test file", () => {
  it("are DEFAULT_TIMEOUT_MS scaled by this process's slowdown (budget-setup.ts)", ({ task }) => {
    expect(task.timeout).toBe(budget(DEFAULT_TIMEOUT_MS));
  });
});
