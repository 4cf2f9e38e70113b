/**
 * Test time budgets that follow the machine's speed (issue item "Timeouts under load"): a test's
 * timeout is a bound on work, not a benchmark, so on a machine that is slow or busy (load average 7–10
 * on two cores during a full suite next to a C++ build) the bound grows instead of failing the test.
 *
 * Once per test process the machine is measured with a fixed, deterministic unit of CPU work (a
 * xorshift loop of UNIT_ITERATIONS steps, median of a few runs after a warm-up; about 15 ms on the
 * reference machine, a 2-core VM, idle) and with the one-minute load average per core. The slowdown
 * is the larger of `measured / REFERENCE_UNIT_MS` and `loadavg / cores`, clamped to
 * [MIN_SLOWDOWN, MAX_SLOWDOWN] (never shorter than the written timeout, never unbounded);
 * MERIT_TEST_SLOWDOWN=N fixes it (still clamped). `budget(ms)` is a written timeout scaled by it:
 * every long per-test timeout, hook timeout and child-process timeout in the heavy tests is written
 * as `budget(…)`, and test/helpers/budget-setup.ts (a vitest setup file) scales the default
 * testTimeout/hookTimeout of every file the same way. Nothing here asserts a wall-clock time.
 *
 * The tests that start real servers, clusters or browsers, and why they are slow, are listed in
 * README "Set up" ("Slow tests").
 * @module
 */
import { availableParallelism, loadavg } from "node:os";

/** Steps of the unit of work. */
export const UNIT_ITERATIONS = 10_000_000;
/** Median milliseconds of one unit on the reference machine (2-core VM, idle, Node 20). */
export const REFERENCE_UNIT_MS = 15;
/** The slowdown is never below this (a written timeout is never shortened)… */
export const MIN_SLOWDOWN = 1;
/** …nor above this (a test that hangs still fails, within MAX_SLOWDOWN × its written timeout). */
export const MAX_SLOWDOWN = 10;
/** The default vitest testTimeout/hookTimeout before scaling. */
export const DEFAULT_TIMEOUT_MS = 120_000;

/** The unit of work: UNIT_ITERATIONS xorshift steps; returns the checksum so nothing is optimised away. */
export function unitOfWork(iterations = UNIT_ITERATIONS): number {
  let x = 0x9e3779b9 | 0;
  let sum = 0;
  for (let i = 0; i < iterations; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    sum = (sum + (x & 0xffff)) | 0;
  }
  return sum;
}

export interface SpeedProbe {
  /** Runs one unit of work (default unitOfWork). */
  unit?: () => unknown;
  /** Milliseconds now (default performance.now). */
  now?: () => number;
  /** The one-minute load average (default os.loadavg()[0]). */
  load?: () => number;
  /** Cores (default os.availableParallelism()). */
  cores?: number;
  /** Timed runs after one warm-up run (default 5). */
  runs?: number;
  /** MERIT_TEST_SLOWDOWN (default process.env.MERIT_TEST_SLOWDOWN). */
  override?: string;
}

export interface Speed {
  /** Median milliseconds of one unit here (NaN when fixed by MERIT_TEST_SLOWDOWN). */
  unitMs: number;
  /** Load average per core. */
  loadPerCore: number;
  /** The factor every budget is multiplied by. */
  slowdown: number;
}

/** `value` clamped to [MIN_SLOWDOWN, MAX_SLOWDOWN]; NaN → MIN_SLOWDOWN. */
export function clampSlowdown(value: number): number {
  if (!Number.isFinite(value)) return value === Infinity ? MAX_SLOWDOWN : MIN_SLOWDOWN;
  return Math.min(MAX_SLOWDOWN, Math.max(MIN_SLOWDOWN, value));
}

/** Measures the slowdown of this machine against the reference (see the module comment). */
export function measureSpeed(probe: SpeedProbe = {}): Speed {
  const override = probe.override ?? process.env.MERIT_TEST_SLOWDOWN;
  const cores = Math.max(1, probe.cores ?? availableParallelism());
  const loadPerCore = Math.max(0, (probe.load ?? (() => loadavg()[0]))() / cores);
  if (override !== undefined && override !== "") {
    const fixed = Number(override);
    if (!Number.isFinite(fixed) || fixed <= 0) throw new Error(`MERIT_TEST_SLOWDOWN must be a positive number, got ${JSON.stringify(override)}`);
    return { unitMs: NaN, loadPerCore, slowdown: clampSlowdown(fixed) };
  }
  const unit = probe.unit ?? (() => unitOfWork());
  const now = probe.now ?? (() => performance.now());
  const runs = Math.max(1, probe.runs ?? 5);
  unit(); // warm-up: the first run is mostly the JIT compiling the loop
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = now();
    unit();
    times.push(now() - start);
  }
  times.sort((a, b) => a - b);
  const unitMs = times[Math.floor(times.length / 2)];
  return { unitMs, loadPerCore, slowdown: clampSlowdown(Math.max(unitMs / REFERENCE_UNIT_MS, loadPerCore)) };
}

/** Where the measurement is kept: on globalThis, so every module instance in this process (the setup file's, a test file's) sees the same one. */
const MEASURED = Symbol.for("merit-kit.test-speed");

/** This process's speed, measured on first use. */
export function speed(): Speed {
  const store = globalThis as { [MEASURED]?: Speed };
  store[MEASURED] ??= measureSpeed();
  return store[MEASURED];
}

/** A written timeout `ms` scaled by `slowdown` (default: this process's), rounded up to whole ms. */
export function budget(ms: number, slowdown = speed().slowdown): number {
  return Math.ceil(ms * slowdown);
}
