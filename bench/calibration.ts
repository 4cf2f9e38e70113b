/**
 * Calibration of the kit's inference by simulation (issue 38 §3; METHOD.md §9.1;
 * lib/analysis/calibration.ts): at the paper's scale (Spider, 1,034 queries × 3 orders, B = 10,000),
 * the coverage of Table 2's 95 % paired query-cluster interval (percentile, and BCa beside it) for
 * planted Δ ∈ {0, 1, 2, 5} pp, the rejection rates of the bootstrap p and McNemar's test under the
 * null, Holm's family-wise error over 6 true nulls (Table 4's family), the power at the MDE the kit
 * reports and at half of it, and the learning-curve band's pointwise coverage. Prints the Markdown
 * tables (bench/README.md, METHOD.md), the CPU seconds per section and the wall time.
 *
 * Run: `node bench/calibration.ts [--reps R] [--band-reps R] [--truth-reps R] [--resamples B]
 * [--family-reps R] [--power-reps R] [--workers W] [--no-bca] [--null-tests-only] [--seed S] [--scenario spider|stress] [--deltas 0,1,2,5]
 * [--spread σ] [--spread-a σ_A] [--decoupled λ] [--order-effect ω] [--json FILE]` (the last four override the scenario's population).
 * Defaults: R = 1,000 (or MERIT_CAL_REPS), band 200, truth 2,000, B = 10,000, W = 2 worker threads.
 * The numbers do not depend on W (each replication has its own generator; rows are merged in order).
 * `--scenario stress` keeps the paper's scale but makes the methods unequal in order sensitivity
 * (B nearly deterministic, A not) and adds a per-order memory effect (ω = 0.3).
 */
import { writeFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import {
  calibrate,
  calibrationMarkdown,
  resolveCalibrationOptions,
  runSection,
  SPIDER_POPULATION,
  type CalibrationOptions,
  type PopulationModel,
  type ResolvedCalibrationOptions,
  type SectionChunk,
  type SectionSpec,
} from "../lib/analysis/calibration.ts";

interface Job {
  id: number;
  spec: SectionSpec;
  from: number;
  to: number;
}

/** The two scenarios: the exchangeable one of METHOD.md's table, and a harder one. */
const SCENARIOS: Record<string, PopulationModel> = {
  spider: SPIDER_POPULATION,
  stress: { ...SPIDER_POPULATION, spread: 6, spreadA: 1.5, orderEffect: 0.3 },
};

if (!isMainThread) {
  const { model, options } = workerData as { model: PopulationModel; options: ResolvedCalibrationOptions };
  parentPort!.on("message", (job: Job) => {
    const chunk = runSection(model, options, job.spec, job.from, job.to);
    parentPort!.postMessage({ id: job.id, chunk });
  });
} else {
  await main();
}

function usage(message: string): never {
  console.error(`bench/calibration.ts: ${message}; usage: node bench/calibration.ts [--reps R] [--band-reps R] [--truth-reps R] [--resamples B] [--family-reps R] [--power-reps R] [--workers W] [--no-bca] [--null-tests-only] [--seed S] [--scenario spider|stress] [--deltas 0,1,2,5] [--spread σ] [--spread-a σ_A] [--decoupled λ] [--order-effect ω] [--json FILE]`);
  process.exit(2);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const value = (name: string): string | undefined => {
    const i = args.indexOf(`--${name}`);
    if (i < 0) return undefined;
    if (i + 1 >= args.length) usage(`--${name} needs a value`);
    return args[i + 1];
  };
  const int = (name: string, fallback: number | undefined): number | undefined => {
    const raw = value(name);
    if (raw === undefined) return fallback;
    const v = Number(raw);
    if (!Number.isSafeInteger(v) || v < 0) usage(`--${name} must be a non-negative integer, got ${JSON.stringify(raw)}`);
    return v;
  };
  const known = new Set(["--deltas", "--spread", "--spread-a", "--decoupled", "--order-effect", "--family-reps", "--power-reps", "--null-tests-only", "--reps", "--band-reps", "--truth-reps", "--resamples", "--workers", "--no-bca", "--seed", "--scenario", "--json"]);
  for (const a of args) if (a.startsWith("--") && !known.has(a)) usage(`unknown option ${a}`);
  const envReps = process.env.MERIT_CAL_REPS;
  if (envReps !== undefined && !/^[1-9][0-9]*$/.test(envReps)) usage(`MERIT_CAL_REPS must be a positive integer, got ${JSON.stringify(envReps)}`);
  const scenario = value("scenario") ?? "spider";
  const base = SCENARIOS[scenario];
  if (base === undefined) usage(`--scenario must be one of ${Object.keys(SCENARIOS).join(", ")}, got ${JSON.stringify(scenario)}`);
  const real = (name: string, fallback: number): number => {
    const raw = value(name);
    if (raw === undefined) return fallback;
    const v = Number(raw);
    if (raw.trim() === "" || !Number.isFinite(v)) usage(`--${name} must be a number, got ${JSON.stringify(raw)}`);
    return v;
  };
  const model: PopulationModel = { ...base, spread: real("spread", base.spread), spreadA: real("spread-a", base.spreadA), decoupled: real("decoupled", base.decoupled), orderEffect: real("order-effect", base.orderEffect) };
  const deltaList = value("deltas");
  const deltas = deltaList?.split(",").map((d) => {
    const v = Number(d);
    if (d.trim() === "" || !Number.isFinite(v)) usage(`--deltas must be numbers separated by commas (e.g. 0,1,2,5), got ${JSON.stringify(deltaList)}`);
    return v;
  });
  const opts: CalibrationOptions = {
 deltas,
    replications: int("reps", envReps === undefined ? undefined : Number(envReps)),
    bandReplications: int("band-reps", undefined),
    truthReplications: int("truth-reps", undefined),
    resamples: int("resamples", undefined),
    seed: int("seed", undefined),
    familyReplications: int("family-reps", undefined),
    powerReplications: int("power-reps", undefined),
    allTests: !args.includes("--null-tests-only"),
    bca: !args.includes("--no-bca"),
  };
  const workers = int("workers", Math.min(2, availableParallelism()))!;
  let options: ResolvedCalibrationOptions;
  try {
    options = resolveCalibrationOptions(model, opts);
  } catch (error) {
    usage((error as Error).message);
  }
  console.log(`Load average ${loadavg().map((x) => x.toFixed(1)).join(" ")} at the start.`);
  const t0 = performance.now();
  const pool = workers > 0 ? startPool(workers, model, options) : undefined;
  const report = await calibrate(model, options, pool?.run);
  await pool?.close();
  const wall = (performance.now() - t0) / 1000;
  console.log(`Scenario ${scenario}.\n`);
  console.log(calibrationMarkdown(report));
  const cpu = Object.entries(report.seconds).map(([k, v]) => `${k} ${v.toFixed(1)} s`);
  console.log(`CPU time per section (summed over ${workers || 1} thread(s)): ${cpu.join(", ")}.`);
  const cpuTotal = Object.values(report.seconds).reduce((x, y) => x + y, 0);
  console.log(`Wall time ${wall.toFixed(1)} s with ${workers} worker thread(s), ${cpuTotal.toFixed(1)} CPU s in all; load average ${loadavg().map((x) => x.toFixed(1)).join(" ")} at the end (${availableParallelism()} CPUs); Node ${process.version}.`);
  const json = value("json");
  if (json !== undefined) writeFileSync(json, JSON.stringify({ scenario, wall_seconds: wall, workers, report }, null, 2) + "\n");
}

/** A pool of worker threads running `runSection` jobs, first come first served. */
function startPool(size: number, model: PopulationModel, options: ResolvedCalibrationOptions) {
  const threads = Array.from({ length: size }, () => new Worker(new URL(import.meta.url), { workerData: { model, options } }));
  const idle = [...threads];
  const queue: Job[] = [];
  const waiting = new Map<number, (chunk: SectionChunk) => void>();
  let next = 0;
  const dispatch = () => {
    while (idle.length > 0 && queue.length > 0) idle.pop()!.postMessage(queue.shift()!);
  };
  for (const w of threads) {
    w.on("message", ({ id, chunk }: { id: number; chunk: SectionChunk }) => {
      waiting.get(id)!(chunk);
      waiting.delete(id);
      idle.push(w);
      dispatch();
    });
    w.on("error", (error) => {
      console.error(`bench/calibration.ts: a worker failed: ${error.message}`);
      process.exit(1);
    });
  }
  return {
    run: (spec: SectionSpec, from: number, to: number) =>
      new Promise<SectionChunk>((resolve) => {
        const id = next++;
        waiting.set(id, resolve);
        queue.push({ id, spec, from, to });
        dispatch();
      }),
    close: () => Promise.all(threads.map((w) => w.terminate())),
  };
}
