/**
 * Benchmark, paired query-cluster bootstrap (METHOD.md §9) on its first call in a fresh process — what
 * a notebook cell or `merit report` pays: B = 10,000 resamples of 1,034 queries × 3 seeds (a Spider-
 * sized Table 2 cell). One run alternates, repetition by repetition, fresh processes of
 *   (a) the kit: one `pairedClusterBootstrap`, timed around the call alone (type stripping and the
 *       module load are not the bootstrap's cost), then the warm calls in the same process;
 *   (b) the plain definition: the same bootstrap with one `randbelow(n)` call per index (how the kit
 *       drew before the bulk draw, on today's PyRandom), on the same input — its interval must equal (a)'s;
 *   (c) numpy (bench/bootstrap_numpy.py: the same resampling with numpy's own generator), timed around
 *       its call alone, for each python3 found (`python3` on PATH, `/usr/bin/python3`), run with
 *       OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE removed from its environment;
 * and prints medians over the repetitions, the whole-process wall times, the ratios to numpy's first
 * call (targets: first call ≤ 1.5× numpy, issue 30 §2 — it was ≤ 1.0× while a WebAssembly kernel drew the words —, warm ≤ 0.3×) and the load average. Never asserted by tests.
 * `measureBootstrapFirstCall` is the measurement (bench/cost.ts runs it too).
 * Run: node bench/bootstrap-first-call.ts [--reps 7]
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { pairedClusterBootstrap } from "../lib/analysis/bootstrap.ts";
import { PyRandom } from "../lib/random.ts";

const QUERIES = 1034;
const SEEDS = 3;
const RESAMPLES = 10_000;
const SEED = 0;

interface Input {
  a: number[][];
  b: number[][];
  resamples: number;
  seed: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

/** Child (a): the kit's first call, then warm calls (same seed: the index memo hits; new seeds: it misses). */
function kitChild(input: Input): void {
  let start = process.hrtime.bigint();
  const first = pairedClusterBootstrap(input.a, input.b, { resamples: input.resamples, seed: input.seed });
  const firstMs = ms(start);
  const afterFirst = process.hrtime.bigint();
  const warm: number[] = [];
  for (let i = 0; i < 5; i++) {
    start = process.hrtime.bigint();
    pairedClusterBootstrap(input.a, input.b, { resamples: input.resamples, seed: input.seed });
    warm.push(ms(start));
  }
  const warmNewSeed: number[] = [];
  for (let i = 1; i <= 3; i++) {
    start = process.hrtime.bigint();
    pairedClusterBootstrap(input.a, input.b, { resamples: input.resamples, seed: input.seed + i });
    warmNewSeed.push(ms(start));
  }
  console.log(JSON.stringify({ first_ms: firstMs, after_first_ms: ms(afterFirst), warm_ms: median(warm), warm_new_seed_ms: median(warmNewSeed), result: first }));
}

/**
 * Child (b): the same bootstrap with each index drawn by its own `rng.randbelow(n)` call (how
 * bootstrap.ts drew before the bulk draw), percentile interval as the kit computes it.
 */
function perDrawChild(input: Input): void {
  const start = process.hrtime.bigint();
  const n = input.a.length;
  const diff = new Float64Array(n);
  for (let q = 0; q < n; q++) for (let s = 0; s < SEEDS; s++) diff[q] += input.a[q][s] - input.b[q][s];
  const indices = new Uint16Array(n * input.resamples);
  const rng = new PyRandom(input.seed);
  for (let k = 0; k < indices.length; k++) indices[k] = rng.randbelow(n);
  const deltas = new Float64Array(input.resamples);
  for (let r = 0, k = 0; r < input.resamples; r++) {
    let total = 0;
    for (let i = 0; i < n; i++) total += diff[indices[k++]];
    deltas[r] = (total * 100) / (n * SEEDS);
  }
  deltas.sort();
  const q = (p: number) => {
    const h = (deltas.length - 1) * p;
    const below = Math.floor(h);
    return deltas[below] + (h - below) * (deltas[Math.min(below + 1, deltas.length - 1)] - deltas[below]);
  };
  const lo = q(0.025);
  const hi = q(0.975);
  console.log(JSON.stringify({ first_ms: ms(start), lo, hi }));
}

/**
 * Run one fresh child process; returns its JSON line and the wall time of the whole process up to
 * its first answer (spawn to exit, less the `after_first_ms` the child spent on its warm calls).
 */
function runChild(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): { out: Record<string, unknown>; processMs: number } {
  const start = process.hrtime.bigint();
  const res = spawnSync(command, args, { encoding: "utf8", env, maxBuffer: 1 << 24 });
  const wall = ms(start);
  if (res.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${res.status}: ${res.stderr}`);
  const lines = res.stdout.trim().split("\n");
  const out = JSON.parse(lines[lines.length - 1]) as Record<string, unknown>;
  return { out, processMs: wall - ((out.after_first_ms as number | undefined) ?? 0) };
}

function pythons(): { label: string; command: string; version: string }[] {
  const found: { label: string; command: string; version: string }[] = [];
  for (const command of ["python3", "/usr/bin/python3"]) {
    const r = spawnSync(command, ["-c", "import numpy, sys; print(numpy.__version__, sys.version.split()[0])"], { encoding: "utf8" });
    if (r.status !== 0) continue;
    const [numpyVersion, pythonVersion] = r.stdout.trim().split(" ");
    if (found.some((p) => p.version === `${numpyVersion} ${pythonVersion}`)) continue;
    found.push({ label: `numpy ${numpyVersion} (${command}, Python ${pythonVersion})`, command, version: `${numpyVersion} ${pythonVersion}` });
  }
  return found;
}

/** One run's medians (ms) and what they were measured on; `pythons[i]` goes with `numpy[i]`. */
export interface BootstrapFirstCallResult {
  reps: number;
  loadBefore: number[];
  loadAfter: number[];
  pythons: { label: string; command: string; version: string }[];
  kit: { first: number[]; process: number[]; warm: number[]; warmNewSeed: number[] };
  perDraw: { first: number[]; process: number[] };
  numpy: { first: number[]; process: number[]; second: number[] }[];
  kitResult: unknown;
  /** The plain definition gave the kit's interval in every repetition. */
  identical: boolean;
}

/**
 * The measurement: `reps` repetitions, each running fresh processes of the kit, the plain definition
 * and numpy (every python3 found) in turn, the order reversed every other repetition.
 */
export function measureBootstrapFirstCall(reps: number, log: (line: string) => void = () => undefined): BootstrapFirstCallResult {
  const self = fileURLToPath(import.meta.url);
  const here = join(self, "..");
  const dir = mkdtempSync(join(tmpdir(), "merit-bench-bootstrap-"));
  const file = join(dir, "input.json");
  const rng = new PyRandom(12345);
  const outcomes = (p: number) => Array.from({ length: QUERIES }, () => Array.from({ length: SEEDS }, () => (rng.random() < p ? 1 : 0)));
  const input: Input = { a: outcomes(0.5), b: outcomes(0.45), resamples: RESAMPLES, seed: SEED };
  writeFileSync(file, JSON.stringify(input));
  const pyEnv = { ...process.env };
  delete pyEnv.OPENBLAS_CORETYPE;
  delete pyEnv.OPENBLAS_L2_SIZE;
  const pys = pythons();
  const loadBefore = loadavg();
  log(`bootstrap, first call in a fresh process: B = ${RESAMPLES} × ${QUERIES} queries × ${SEEDS} seeds, ${reps} alternating repetitions`);
  log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? "?"}; node ${process.version}; load average before ${loadBefore.map((x) => x.toFixed(2)).join(" ")}`);
  const kitFirst: number[] = [], kitProc: number[] = [], kitWarm: number[] = [], kitWarmNew: number[] = [];
  const perDraw: number[] = [], perDrawProc: number[] = [];
  const npFirst = pys.map(() => [] as number[]), npProc = pys.map(() => [] as number[]), npSecond = pys.map(() => [] as number[]);
  let identical = true;
  let kitResult: unknown;
  for (let rep = 0; rep < reps; rep++) {
    // Alternate the order too, so a load spike does not always land on the same contender.
    const jobs: (() => void)[] = [
      () => {
        const { out, processMs } = runChild(process.execPath, [self, "--child", "kit", file]);
        kitFirst.push(out.first_ms as number); kitWarm.push(out.warm_ms as number); kitWarmNew.push(out.warm_new_seed_ms as number); kitProc.push(processMs);
        kitResult = out.result;
      },
      () => {
        const { out, processMs } = runChild(process.execPath, [self, "--child", "per-draw", file]);
        perDraw.push(out.first_ms as number); perDrawProc.push(processMs);
        // Same input and seed in every repetition, so every kit result is the same one (rep 0 runs the kit first).
        const r = kitResult as { lo: number; hi: number } | undefined;
        if (r !== undefined && (r.lo !== out.lo || r.hi !== out.hi)) identical = false;
      },
      ...pys.map((py, i) => () => {
        const { out, processMs } = runChild(py.command, [join(here, "bootstrap_numpy.py"), file], pyEnv);
        npFirst[i].push(out.first_ms as number); npSecond[i].push(out.second_ms as number); npProc[i].push(processMs);
      }),
    ];
    if (rep % 2 === 1) jobs.reverse();
    for (const job of jobs) job();
  }
  const loadAfter = loadavg();
  rmSync(dir, { recursive: true, force: true });
  return {
    reps,
    loadBefore,
    loadAfter,
    pythons: pys,
    kit: { first: kitFirst, process: kitProc, warm: kitWarm, warmNewSeed: kitWarmNew },
    perDraw: { first: perDraw, process: perDrawProc },
    numpy: pys.map((_, i) => ({ first: npFirst[i], process: npProc[i], second: npSecond[i] })),
    kitResult,
    identical,
  };
}

function parent(reps: number): void {
  const m = measureBootstrapFirstCall(reps, (line) => console.log(line));
  const pys = m.pythons;
  const { identical, kitResult, loadAfter } = m;
  const kitFirst = m.kit.first;
  const npFirst = m.numpy.map((n) => n.first);
  const refs = npFirst.map(median);
  const row = (label: string, call: number, proc: number | undefined) =>
    console.log(`| ${label} | ${call.toFixed(1)} | ${proc === undefined ? "–" : proc.toFixed(0)} | ${refs.map((ref) => (call / ref).toFixed(2)).join(" | ")} |`);
  console.log(`\n| contender (median of ${reps}) | call ms | whole process to the answer, ms | ${pys.map((py) => `ratio to ${py.label} first call`).join(" | ")} |`);
  console.log(`| --- | --- | --- | ${pys.map(() => "---").join(" | ")} |`);
  row("kit, first call in a fresh process (target ≤ 1.5×, issue 30)", median(kitFirst), median(m.kit.process));
  row("kit, warm: same seed again (index memo hit; target ≤ 0.3×)", median(m.kit.warm), undefined);
  row("kit, warm: a new seed (memo miss, JIT warm)", median(m.kit.warmNewSeed), undefined);
  row("kit, the plain definition: one randbelow(n) call per index, first call", median(m.perDraw.first), median(m.perDraw.process));
  pys.forEach((py, i) => {
    row(`${py.label}, first call`, median(npFirst[i]), median(m.numpy[i].process));
    row(`${py.label}, second call`, median(m.numpy[i].second), undefined);
  });
  console.log(`\nkit first calls (ms): ${kitFirst.map((x) => x.toFixed(0)).join(", ")}`);
  pys.forEach((py, i) => console.log(`${py.label} first calls (ms): ${npFirst[i].map((x) => x.toFixed(0)).join(", ")}`));
  console.log(`kit interval ${JSON.stringify(kitResult)}; plain definition gives the same lo/hi: ${identical}`);
  console.log(`load average after ${loadAfter.map((x) => x.toFixed(2)).join(" ")}; python children ran without OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE`);
}

const args = process.argv.slice(2);
if (process.argv[1] !== fileURLToPath(import.meta.url)) {
  // imported (bench/cost.ts): the measurement only
} else if (args[0] === "--child") {
  const input = JSON.parse(readFileSync(args[2], "utf8")) as Input;
  if (args[1] === "kit") kitChild(input);
  else perDrawChild(input);
} else {
  const i = args.indexOf("--reps");
  const reps = i >= 0 ? Number(args[i + 1]) : 7;
  if (!Number.isInteger(reps) || reps < 1) throw new Error(`--reps must be a positive integer, got ${args[i + 1]}`);
  parent(reps);
}
