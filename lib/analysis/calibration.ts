/**
 * Analysis stage, calibration of the kit's inference by simulation (METHOD.md §9.1,
 * bench/calibration.ts, notebooks/10-calibration): replications of a study whose true difference is
 * known, pushed through the very functions Table 2, Table 4 and the learning curves call
 * (`pairedClusterBootstrap`, `bootstrapPValue`, `mcnemarExact`, `pairedPower`, `holmAdjust`,
 * `methodCurves`), to measure how often their intervals cover the truth and their tests reject a
 * true null. No engine runs: the outcomes are drawn directly.
 *
 * Population (per replication, n queries × S stream orders, two methods A and B):
 * - query q failed initially with probability F (the shared initial cache: both methods keep an
 *   initially correct query correct under every order, as a repair loop does);
 * - a failed query has a difficulty z_q ~ N(0, 1) and method B repairs it under each order with
 *   probability p_B = Φ(μ + σ z_q), μ = Φ⁻¹(m) · √(1 + σ²) so that E[p_B] = m exactly (a large σ
 *   makes a query nearly always or never repaired: outcomes are clustered within the query);
 * - method A shares the difficulty, except that with probability λ (per query) it draws its own
 *   z'_q ~ N(0, 1) (queries one method repairs and the other does not, in both directions); its base
 *   probability is Φ(μ_A + σ_A z), E = m likewise;
 * - order effects: under order s query q sits at position i = π_s(q) (a uniform random permutation),
 *   and A's repair probability is p_A + c · (1 + η_s) · g(i / n) · (1 − p_A), with g(x) = 1 − e^{−3x}
 *   (memory helps more as it fills) and η_s ~ U(−ω, ω) a per-order multiplier (some orders are
 *   better for the memory than others); outcomes are independent Bernoulli draws given these.
 * The planted difference is exact: Δ = 100 · F · (1 − m) · c · ḡ pp, ḡ = (1/n) Σ_i g(i / n), so c is
 * solved from the Δ asked for. At Δ = 0 with σ_A = σ and ω = 0 the two methods are exchangeable and
 * every null the tests assume holds.
 *
 * Randomness: replication r of a section draws from its own `PyRandom(seed · 1,000,003 + section ·
 * 100,003 + r)`; the bootstrap keeps the kit's defaults (seed 0, so every replication reuses the same
 * resample indices: the warm path, as a report comparing many pairs does). Same options ⇒ same numbers.
 * @module
 */
import { MeritError } from "../errors.ts";
import { PyRandom } from "../random.ts";
import { bootstrapPValue, pairedClusterBootstrap } from "./bootstrap.ts";
import { holmAdjust } from "./holm.ts";
import { methodCurves } from "./learning-curves.ts";
import { mcnemarExact } from "./mcnemar.ts";
import { normalCdf, normalQuantile } from "./normal.ts";
import { pairedPower } from "./power.ts";
import type { QueryOutcome, RunSummary } from "./run-summary.ts";

/** The simulated population (see the module comment). */
export interface PopulationModel {
  /** Queries n. */
  queries: number;
  /** Stream orders S. */
  orders: number;
  /** F: share of queries that fail initially. */
  initialFailure: number;
  /** m: mean repair probability of an initial failure (both methods, before A's memory effect). */
  repair: number;
  /** σ of method B's probit difficulty (larger: more clustered within the query). */
  spread: number;
  /** σ_A of method A's; equal to `spread` makes A and B exchangeable at Δ = 0. */
  spreadA: number;
  /** λ: share of failed queries on which A draws its own difficulty. */
  decoupled: number;
  /** ω: per-order multiplier of A's memory effect, η_s ~ U(−ω, ω). */
  orderEffect: number;
}

/**
 * Spider at the paper's scale: 1,034 queries × 3 orders, 425 initial failures (METHOD.md §9), m =
 * 18.1 % (Iterative's 66.34 % EX from 58.90 % initial, paper Table 1), σ = 2.5 (outcomes nearly fixed
 * per query, as greedy decoding makes them), λ = 0.5 so that the bootstrap SE at Δ = 0 is about the
 * paper's MERIT vs Iterative SE (0.76 pp from its interval [1.97, 4.96]), ω = 0.
 */
export const SPIDER_POPULATION: PopulationModel = {
  queries: 1034,
  orders: 3,
  initialFailure: 425 / 1034,
  repair: (66.34 - 58.9) / (100 * (425 / 1034)),
  spread: 2.5,
  spreadA: 2.5,
  decoupled: 0.5,
  orderEffect: 0,
};

/** g(x) = 1 − e^{−3x}: the share of A's memory effect at relative stream position x. */
function growth(x: number): number {
  return 1 - Math.exp(-3 * x);
}

/** ḡ = (1/n) Σ_{i<n} g(i / n). */
function meanGrowth(n: number): number {
  let sum = 0;
  for (let i = 0; i < n; i++) sum += growth(i / n);
  return sum / n;
}

/** The memory-effect scale c that plants Δ pp (A − B); throws when the model cannot reach it. */
export function effectScale(model: PopulationModel, delta: number): number {
  const c = delta / (100 * model.initialFailure * (1 - model.repair) * meanGrowth(model.queries));
  if (!(Math.abs(c) * (1 + model.orderEffect) <= 1)) {
    throw new MeritError(`calibration: Δ = ${delta} pp needs a memory effect of ${c.toFixed(3)} (× ${1 + model.orderEffect} at the best order), beyond ±1; plant a smaller Δ or raise the initial failure rate`);
  }
  return c;
}

/** The true cumulative EX curve of A (%) at 1-based stream positions, exact under the model. */
export function trueExCurve(model: PopulationModel, delta: number, positions: readonly number[]): number[] {
  const c = effectScale(model, delta);
  const n = model.queries;
  const F = model.initialFailure;
  const m = model.repair;
  return positions.map((p) => {
    let sum = 0;
    for (let i = 0; i < p; i++) sum += 1 - F + F * (m + c * growth(i / n) * (1 - m));
    return (100 * sum) / p;
  });
}

function checkModel(model: PopulationModel): void {
  const bad = (what: string) => new MeritError(`calibration: population ${what}; see SPIDER_POPULATION (lib/analysis/calibration.ts) for the paper's values`);
  if (!Number.isInteger(model.queries) || model.queries < 2) throw bad(`queries must be an integer ≥ 2, got ${model.queries}`);
  if (!Number.isInteger(model.orders) || model.orders < 1) throw bad(`orders must be a positive integer, got ${model.orders}`);
  for (const [k, v] of [["initialFailure", model.initialFailure], ["repair", model.repair], ["decoupled", model.decoupled]] as const) {
    if (!(v >= 0 && v <= 1)) throw bad(`${k} must lie in [0, 1], got ${v}`);
  }
  if (!(model.repair > 0 && model.repair < 1)) throw bad(`repair must lie in (0, 1), got ${model.repair}`);
  if (!(model.spread >= 0) || !(model.spreadA >= 0)) throw bad(`spread and spreadA must be ≥ 0`);
  if (!(model.orderEffect >= 0 && model.orderEffect < 1)) throw bad(`orderEffect must lie in [0, 1), got ${model.orderEffect}`);
}

/** One standard normal draw (Box–Muller, one of the pair). */
function gauss(rng: PyRandom): number {
  const u = rng.random();
  const v = rng.random();
  return Math.sqrt(-2 * Math.log(1 - u)) * Math.cos(2 * Math.PI * v);
}

/** A simulated study of methods sharing one initial cache: outcomes[k][q][s] for method k, and the orders. */
export interface SimulatedStudy {
  /** outcomes[k][q][s] ∈ {0, 1}: method k (0 = the reference B, 1.. = the others), query q, order s. */
  outcomes: number[][][];
  /** position[s][q]: 0-based stream position of query q under order s. */
  position: Int32Array[];
  /** failed[q] = 1 when q failed initially. */
  failed: Uint8Array;
}

/**
 * Draws one study: method 0 is B, methods 1..others are A-like, each planting `deltas[k − 1]` pp
 * against B (one family; every A-like method couples to B's difficulties independently).
 */
export function simulateStudy(model: PopulationModel, deltas: readonly number[], rng: PyRandom): SimulatedStudy {
  checkModel(model);
  const { queries: n, orders: S, initialFailure: F, repair: m, spread, spreadA, decoupled } = model;
  const muB = normalQuantile(m) * Math.sqrt(1 + spread * spread);
  const muA = normalQuantile(m) * Math.sqrt(1 + spreadA * spreadA);
  const scales = deltas.map((d) => effectScale(model, d));
  const K = deltas.length + 1;
  const position: Int32Array[] = [];
  const orderMultiplier: number[][] = [];
  for (let s = 0; s < S; s++) {
    // Fisher–Yates: perm[i] = query at position i
    const perm = new Int32Array(n);
    for (let i = 0; i < n; i++) perm[i] = i;
    for (let i = n - 1; i > 0; i--) {
      const j = rng.randbelow(i + 1);
      const t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
    const pos = new Int32Array(n);
    for (let i = 0; i < n; i++) pos[perm[i]] = i;
    position.push(pos);
    orderMultiplier.push(scales.map(() => 1 + model.orderEffect * (2 * rng.random() - 1)));
  }
  const failed = new Uint8Array(n);
  const outcomes: number[][][] = Array.from({ length: K }, () => new Array<number[]>(n));
  for (let q = 0; q < n; q++) {
    if (rng.random() >= F) {
      for (let k = 0; k < K; k++) outcomes[k][q] = new Array<number>(S).fill(1);
      continue;
    }
    failed[q] = 1;
    const z = gauss(rng);
    const pB = normalCdf(muB + spread * z);
    outcomes[0][q] = Array.from({ length: S }, () => (rng.random() < pB ? 1 : 0));
    for (let k = 1; k < K; k++) {
      const zA = rng.random() < decoupled ? gauss(rng) : z;
      const pA = normalCdf(muA + spreadA * zA);
      const c = scales[k - 1];
      outcomes[k][q] = Array.from({ length: S }, (_, s) => {
        const lift = c * orderMultiplier[s][k - 1] * growth(position[s][q] / n);
        const p = lift >= 0 ? pA + lift * (1 - pA) : pA * (1 + lift);
        return rng.random() < p ? 1 : 0;
      });
    }
  }
  return { outcomes, position, failed };
}

/** The runs of method k of a simulated study as RunSummary objects (only what `methodCurves` reads is filled in). */
export function simulatedRuns(study: SimulatedStudy, k: number, method = `m${k}`): RunSummary[] {
  const n = study.failed.length;
  return study.position.map((pos, s) => {
    const queries: QueryOutcome[] = new Array(n);
    for (let q = 0; q < n; q++) {
      const initial = study.failed[q] === 0;
      queries[q] = { query_id: String(q), source_index: q, initial_sql: "", initial_error_type: initial ? null : "Unknown", initial_correct: initial, final_correct: study.outcomes[k][q][s] === 1, repair_steps: 0, stream_position: pos[q] };
    }
    // metrics are not read by the learning curves; a summary of the outcomes is enough here
    return { dataset: "simulated", method, stream_seed: s, queries } as Omit<RunSummary, "metrics"> as RunSummary;
  });
}

/** Options of {@link calibrate}. */
export interface CalibrationOptions {
  /** Replications per planted Δ. @default 1000 */
  replications?: number;
  /** Replications of the Holm family. @default replications */
  familyReplications?: number;
  /** Replications of each power row. @default replications */
  powerReplications?: number;
  /**
   * Bootstrap p and MDE at every planted Δ; false keeps them at Δ = 0 only (where the null rates and
   * the reported MDE come from), two bootstraps fewer per replication elsewhere. @default true
   */
  allTests?: boolean;
  /** Replications of the learning-curve band (each one runs `methodCurves`, B = bandResamples). @default 200 */
  bandReplications?: number;
  /** Simulated studies (no bootstrap) that fix the repair curve's truth E[R(p)], a ratio without a closed form. @default 2000 */
  truthReplications?: number;
  /** Bootstrap B of the intervals and tests (Table 2's). @default 10000 */
  resamples?: number;
  /** Band B (the report's default). @default 1000 */
  bandResamples?: number;
  /** Planted Δ values, pp (0 must be among them: the power rows plant its reported MDE). @default [0, 1, 2, 5] */
  deltas?: number[];
  /** Holm family size: true nulls compared with one reference (Table 4 has 6 ablations). @default 6 */
  family?: number;
  /** Planted Δ of the band section, pp. @default 5 */
  bandDelta?: number;
  /** 1-based stream positions at which the band's coverage is measured. @default [25, 100, 250, ⌈n/2⌉, n] */
  positions?: number[];
  /** Also measure the BCa interval's coverage (one more bootstrap per replication). @default true */
  bca?: boolean;
  /** Seed of the simulation (not of the bootstrap, which keeps the kit's 0). @default 1 */
  seed?: number;
}

/** The options with every default filled in. */
export type ResolvedCalibrationOptions = Required<CalibrationOptions>;

/** The defaults filled in and checked; throws a MeritError naming the bad option. */
export function resolveCalibrationOptions(model: PopulationModel, opts: CalibrationOptions = {}): ResolvedCalibrationOptions {
  checkModel(model);
  const o: ResolvedCalibrationOptions = {
    replications: opts.replications ?? 1000,
    familyReplications: opts.familyReplications ?? opts.replications ?? 1000,
    powerReplications: opts.powerReplications ?? opts.replications ?? 1000,
    allTests: opts.allTests ?? true,
    bandReplications: opts.bandReplications ?? 200,
    truthReplications: opts.truthReplications ?? 2000,
    resamples: opts.resamples ?? 10_000,
    bandResamples: opts.bandResamples ?? 1000,
    deltas: opts.deltas ?? [0, 1, 2, 5],
    family: opts.family ?? 6,
    bandDelta: opts.bandDelta ?? 5,
    positions: opts.positions ?? [25, 100, 250, Math.ceil(model.queries / 2), model.queries],
    bca: opts.bca ?? true,
    seed: opts.seed ?? 1,
  };
  for (const k of ["replications", "familyReplications", "powerReplications", "bandReplications", "truthReplications", "resamples", "bandResamples", "family"] as const) {
    if (!Number.isSafeInteger(o[k]) || o[k] < 1) throw new MeritError(`calibration: ${k} must be a positive integer, got ${o[k]}`);
  }
  if (!Number.isSafeInteger(o.seed) || o.seed < 0) throw new MeritError(`calibration: seed must be a non-negative integer, got ${o.seed}`);
  if (!o.deltas.includes(0)) throw new MeritError(`calibration: the planted Δ values ${JSON.stringify(o.deltas)} leave out 0; the null rates and the reported MDE come from Δ = 0`);
  for (const d of [...o.deltas, o.bandDelta]) effectScale(model, d);
  for (const p of o.positions) {
    if (!Number.isInteger(p) || p < 1 || p > model.queries) throw new MeritError(`calibration: band position ${p} lies outside 1..${model.queries}`);
  }
  return o;
}

/**
 * One section of replications, as plain data (a worker thread receives it): each replication r of
 * the section draws its study from `PyRandom(seed · 1,000,003 + id · 100,003 + r)` and returns a row
 * of numbers (see {@link runSection}).
 */
export type SectionSpec =
  | { kind: "delta"; id: number; delta: number }
  | { kind: "holm"; id: number }
  | { kind: "power"; id: number; delta: number }
  | { kind: "truth"; id: number }
  | { kind: "band"; id: number; exTruth: number[]; repairTruth: number[] };

/** Replications [from, to) of one section, in order: one row per replication, and the CPU time of the thread that ran them (ms). */
export interface SectionChunk {
  rows: number[][];
  ms: number;
}

/** CPU time of the calling thread, ms (`process.threadCpuUsage`, Node ≥ 23.9, not yet in @types/node; wall time without it). */
function threadCpuMs(): number {
  const threadCpuUsage = (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage;
  if (threadCpuUsage === undefined) return performance.now();
  const u = threadCpuUsage.call(process);
  return (u.user + u.system) / 1000;
}

function sectionRng(seed: number, section: number, r: number): PyRandom {
  return new PyRandom(seed * 1_000_003 + section * 100_003 + r);
}

/**
 * Runs replications [from, to) of a section through the kit's functions. Rows:
 * delta → [covered, covered by BCa (NaN if off), bootstrap p < .05, McNemar p < .05, width, Δ̂, SE, MDE]
 * (p, SE and MDE NaN when `allTests` is off and Δ ≠ 0);
 * holm → [any Holm-adjusted p < .05, any raw p < .05, raw p's < .05]; power → [bootstrap p < .05,
 * McNemar p < .05, MDE]; truth → A's repair line R(p) per position (NaN where undefined); band →
 * per position [EX band covers, repair band defined, repair band covers].
 */
export function runSection(model: PopulationModel, options: ResolvedCalibrationOptions, spec: SectionSpec, from: number, to: number): SectionChunk {
  const t0 = threadCpuMs();
  const boot = { resamples: options.resamples, seed: 0 };
  const rows: number[][] = [];
  for (let r = from; r < to; r++) {
    const rng = sectionRng(options.seed, spec.id, r);
    if (spec.kind === "delta") {
      const [b, a] = simulateStudy(model, [spec.delta], rng).outcomes;
      const ci = pairedClusterBootstrap(a, b, boot);
      const covers = (lo: number, hi: number) => (lo <= spec.delta && spec.delta <= hi ? 1 : 0);
      let bca = NaN;
      if (options.bca) {
        const x = pairedClusterBootstrap(a, b, { ...boot, method: "bca" });
        bca = covers(x.lo, x.hi);
      }
      const tests = options.allTests || spec.delta === 0;
      const power = tests ? pairedPower(a, b, boot) : { se: NaN, mde: NaN };
      const p = tests ? (bootstrapPValue(a, b, boot) < 0.05 ? 1 : 0) : NaN;
      rows.push([covers(ci.lo, ci.hi), bca, p, mcnemarExact(a, b).pValue < 0.05 ? 1 : 0, ci.hi - ci.lo, ci.delta, power.se, power.mde]);
    } else if (spec.kind === "holm") {
      const study = simulateStudy(model, new Array<number>(options.family).fill(0), rng);
      const ps = study.outcomes.slice(1).map((x) => bootstrapPValue(x, study.outcomes[0], boot));
      rows.push([holmAdjust(ps).some((p) => p < 0.05) ? 1 : 0, ps.some((p) => p < 0.05) ? 1 : 0, ps.filter((p) => p < 0.05).length]);
    } else if (spec.kind === "power") {
      const [b, a] = simulateStudy(model, [spec.delta], rng).outcomes;
      rows.push([bootstrapPValue(a, b, boot) < 0.05 ? 1 : 0, mcnemarExact(a, b).pValue < 0.05 ? 1 : 0, pairedPower(a, b, boot).mde]);
    } else if (spec.kind === "truth") {
      rows.push(repairLine(model, simulateStudy(model, [options.bandDelta], rng), options.positions));
    } else {
      const study = simulateStudy(model, [options.bandDelta], rng);
      const curves = methodCurves(simulatedRuns(study, 1), { resamples: options.bandResamples, seed: 0 });
      rows.push(
        options.positions.flatMap((p, j) => {
          const ex = curves.ex.lo[p - 1] <= spec.exTruth[j] && spec.exTruth[j] <= curves.ex.hi[p - 1] ? 1 : 0;
          const defined = Number.isNaN(curves.repair.lo[p - 1]) ? 0 : 1;
          const repair = defined && curves.repair.lo[p - 1] <= spec.repairTruth[j] && spec.repairTruth[j] <= curves.repair.hi[p - 1] ? 1 : 0;
          return [ex, defined, repair];
        }),
      );
    }
  }
  return { rows, ms: threadCpuMs() - t0 };
}

/** Method A's (outcomes[1]) repair curve R(p) of one study, mean over orders, %, at the positions (NaN where some order met no failure yet). */
function repairLine(model: PopulationModel, study: SimulatedStudy, positions: readonly number[]): number[] {
  const n = model.queries;
  const line = positions.map(() => 0);
  for (let s = 0; s < model.orders; s++) {
    const atPosition = new Int32Array(n);
    study.position[s].forEach((i, q) => (atPosition[i] = q));
    let fails = 0;
    let repaired = 0;
    const at = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const q = atPosition[i];
      fails += study.failed[q];
      repaired += study.failed[q] & study.outcomes[1][q][s];
      at[i] = fails === 0 ? NaN : repaired / fails;
    }
    positions.forEach((p, j) => (line[j] += at[p - 1]));
  }
  return line.map((v) => (100 * v) / model.orders);
}

/** Runs a section's replications [from, to): in-process by default; bench/calibration.ts passes worker threads. */
export type SectionRunner = (spec: SectionSpec, from: number, to: number) => Promise<SectionChunk>;

/** A rate with its Monte Carlo standard error, both in %. */
export interface Rate {
  rate: number;
  mcse: number;
  /** Replications it is estimated from. */
  n: number;
}

function rate(hits: number, n: number): Rate {
  const p = n === 0 ? NaN : hits / n;
  return { rate: 100 * p, mcse: 100 * Math.sqrt((p * (1 - p)) / n), n };
}

/** Calibration at one planted Δ. */
export interface DeltaRow {
  delta: number;
  /** Percentile interval's coverage of Δ (the kit's default). */
  coverage: Rate;
  /** BCa interval's coverage (null when not measured). */
  coverageBca: Rate | null;
  /** Mean interval width, pp. */
  width: number;
  /** Mean Δ estimate (bias check), pp. */
  meanEstimate: number;
  /** Bootstrap p < 0.05 (null when not measured at this Δ). */
  rejectBootstrap: Rate | null;
  /** McNemar p < 0.05. */
  rejectMcnemar: Rate;
  /** Mean reported MDE, pp (NaN when not measured). */
  mde: number;
  /** Mean bootstrap SE, pp (NaN when not measured). */
  se: number;
  /** SD of the estimates over replications (what the SE estimates), pp. */
  sdEstimate: number;
}

/** Power at a planted Δ taken from the reported MDE. */
export interface PowerRow {
  label: string;
  delta: number;
  /** Expected under the normal approximation the MDE assumes, %. */
  expected: number;
  rejectBootstrap: Rate;
  rejectMcnemar: Rate;
  /** Mean MDE the kit reports at this Δ, pp. */
  mde: number;
}

/** The band's coverage at one stream position. */
export interface BandRow {
  position: number;
  exTruth: number;
  exCoverage: Rate;
  repairTruth: number;
  repairCoverage: Rate;
}

/** Everything {@link calibrate} measured. */
export interface CalibrationReport {
  model: PopulationModel;
  options: ResolvedCalibrationOptions;
  deltas: DeltaRow[];
  /** Holm over `family` true nulls: family-wise error with Holm, without, and the per-comparison rate. */
  holm: { family: number; fwer: Rate; unadjusted: Rate; perComparison: Rate };
  power: PowerRow[];
  band: { delta: number; rows: BandRow[] };
  /** CPU time per section, s (summed over workers). */
  seconds: Record<string, number>;
}

function mean(xs: readonly number[]): number {
  return xs.reduce((s, x) => s + x, 0) / xs.length;
}

function sd(xs: readonly number[]): number {
  if (xs.length < 2) return NaN;
  const mu = mean(xs);
  return Math.sqrt(xs.reduce((s, x) => s + (x - mu) ** 2, 0) / (xs.length - 1));
}

const column = (rows: readonly number[][], i: number) => rows.map((r) => r[i]);
const sum = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0);

/** Chunks of at most this many replications: the unit a worker takes. */
const CHUNK = 25;

/**
 * Runs every section (see the module comment and METHOD.md §9.1) with `runner` (default:
 * in this thread); rows come back in replication order, so the numbers do not depend on the runner.
 */
export async function calibrate(model: PopulationModel = SPIDER_POPULATION, opts: CalibrationOptions = {}, runner?: SectionRunner): Promise<CalibrationReport> {
  const options = resolveCalibrationOptions(model, opts);
  const run: SectionRunner = runner ?? (async (spec, from, to) => runSection(model, options, spec, from, to));
  // sections in the report's order, whatever order they finish in
  const seconds: Record<string, number> = Object.fromEntries([...options.deltas.map((d) => `Δ = ${d}`), "Holm family", "power", "band truth", "learning-curve band"].map((k) => [k, 0]));
  const runAll = async (name: string, spec: SectionSpec, reps: number): Promise<number[][]> => {
    const chunks: Promise<SectionChunk>[] = [];
    for (let from = 0; from < reps; from += CHUNK) chunks.push(run(spec, from, Math.min(reps, from + CHUNK)));
    const done = await Promise.all(chunks);
    seconds[name] += sum(done.map((c) => c.ms)) / 1000;
    return done.flatMap((c) => c.rows);
  };
  const R = options.replications;
  // phase 1: the Δ rows, the Holm family and the repair curve's truth (independent of each other)
  const [deltaRows, holmRows, truthRows] = await Promise.all([
    Promise.all(options.deltas.map((delta, i) => runAll(`Δ = ${delta}`, { kind: "delta", id: i, delta }, R))),
    runAll("Holm family", { kind: "holm", id: 50 }, options.familyReplications),
    runAll("band truth", { kind: "truth", id: 80 }, options.truthReplications),
  ]);
  const deltas = options.deltas.map((delta, i): DeltaRow => {
    const rows = deltaRows[i];
    return {
      delta,
      coverage: rate(sum(column(rows, 0)), R),
      coverageBca: options.bca ? rate(sum(column(rows, 1)), R) : null,
      rejectBootstrap: options.allTests || delta === 0 ? rate(sum(column(rows, 2)), R) : null,
      rejectMcnemar: rate(sum(column(rows, 3)), R),
      width: mean(column(rows, 4)),
      meanEstimate: mean(column(rows, 5)),
      sdEstimate: sd(column(rows, 5)),
      se: mean(column(rows, 6)),
      mde: mean(column(rows, 7)),
    };
  });
  const F = options.familyReplications;
  const holm = { family: options.family, fwer: rate(sum(column(holmRows, 0)), F), unadjusted: rate(sum(column(holmRows, 1)), F), perComparison: rate(sum(column(holmRows, 2)), F * options.family) };
  const repairTruth = options.positions.map((_, j) => mean(column(truthRows, j).filter((v) => !Number.isNaN(v))));
  const exTruth = trueExCurve(model, options.bandDelta, options.positions);
  // phase 2: power at the MDE reported at Δ = 0 and at half of it; the band against the truth
  const reported = deltas.find((d) => d.delta === 0)!.mde;
  const factor = normalQuantile(0.975) + normalQuantile(0.8);
  const targets = [
    { label: "MDE", delta: reported },
    { label: "MDE / 2", delta: reported / 2 },
  ];
  const [powerRows, bandRows] = await Promise.all([
    Promise.all(targets.map((t, i) => runAll("power", { kind: "power", id: 60 + i, delta: t.delta }, options.powerReplications))),
    runAll("learning-curve band", { kind: "band", id: 90, exTruth, repairTruth }, options.bandReplications),
  ]);
  const power = targets.map((t, i): PowerRow => {
    const rows = powerRows[i];
    const z = (t.delta / reported) * factor; // the effect in SEs of the design at Δ = 0
    const crit = normalQuantile(0.975);
    const P = options.powerReplications;
    return { ...t, expected: 100 * (normalCdf(z - crit) + normalCdf(-z - crit)), rejectBootstrap: rate(sum(column(rows, 0)), P), rejectMcnemar: rate(sum(column(rows, 1)), P), mde: mean(column(rows, 2)) };
  });
  const B = options.bandReplications;
  const band = {
    delta: options.bandDelta,
    rows: options.positions.map((position, j): BandRow => ({
      position,
      exTruth: exTruth[j],
      exCoverage: rate(sum(column(bandRows, 3 * j)), B),
      repairTruth: repairTruth[j],
      repairCoverage: rate(sum(column(bandRows, 3 * j + 2)), sum(column(bandRows, 3 * j + 1))),
    })),
  };
  return { model, options, deltas, holm, power, band, seconds };
}

const pct = (r: Rate, digits = 1) => `${r.rate.toFixed(digits)} ± ${r.mcse.toFixed(digits)}`;

/** The calibration tables as Markdown (METHOD.md §9.1, bench/README.md). */
export function calibrationMarkdown(rep: CalibrationReport): string {
  const o = rep.options;
  const m = rep.model;
  return [
    `Population: ${m.queries} queries × ${m.orders} orders, initial failure ${(100 * m.initialFailure).toFixed(1)} %, repair ${(100 * m.repair).toFixed(1)} %, σ ${m.spread} (A ${m.spreadA}), λ ${m.decoupled}, ω ${m.orderEffect}; ` +
      `B = ${o.resamples}, bootstrap seed 0; ${o.replications} replications per planted Δ, ${o.familyReplications} of the Holm family, ${o.powerReplications} per power row; simulation seed ${o.seed} (± is the Monte Carlo standard error).`,
    "",
    "| Planted Δ (pp) | Coverage, percentile 95 % | Coverage, BCa 95 % | Mean width (pp) | Mean Δ̂ (pp) | SE: bootstrap / actual (pp) | Reject, bootstrap p < 0.05 (%) | Reject, McNemar p < 0.05 (%) | Mean MDE (pp) |",
    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...rep.deltas.map(
      (d) => `| ${d.delta} | ${pct(d.coverage)} | ${d.coverageBca ? pct(d.coverageBca) : "—"} | ${d.width.toFixed(2)} | ${d.meanEstimate.toFixed(3)} | ${Number.isNaN(d.se) ? "—" : d.se.toFixed(3)} / ${d.sdEstimate.toFixed(3)} | ${d.rejectBootstrap ? pct(d.rejectBootstrap) : "—"} | ${pct(d.rejectMcnemar)} | ${Number.isNaN(d.mde) ? "—" : d.mde.toFixed(2)} |`,
    ),
    "",
    `Holm over a family of ${rep.holm.family} true nulls (one reference against ${rep.holm.family} methods, Δ = 0 each, bootstrap p): family-wise error ${pct(rep.holm.fwer)} % with Holm, ${pct(rep.holm.unadjusted)} % unadjusted; ${pct(rep.holm.perComparison)} % per comparison.`,
    "",
    "| Power at | Planted Δ (pp) | Expected, normal approx. (%) | Bootstrap p < 0.05 (%) | McNemar p < 0.05 (%) | Mean MDE reported there (pp) |",
    "| --- | ---: | ---: | ---: | ---: | ---: |",
    ...rep.power.map((p) => `| ${p.label} | ${p.delta.toFixed(2)} | ${p.expected.toFixed(1)} | ${pct(p.rejectBootstrap)} | ${pct(p.rejectMcnemar)} | ${p.mde.toFixed(2)} |`),
    "",
    `Learning-curve band (95 %, B = ${o.bandResamples}) of the method with planted Δ = ${rep.band.delta} pp, ${o.bandReplications} replications; the EX truth is exact, the repair curve's the mean of ${o.truthReplications} simulated studies.`,
    "",
    "| Stream position | EX truth (%) | EX band coverage (%) | Repair truth (%) | Repair band coverage (%) |",
    "| ---: | ---: | ---: | ---: | ---: |",
    ...rep.band.rows.map((b) => `| ${b.position} | ${b.exTruth.toFixed(2)} | ${pct(b.exCoverage)} | ${b.repairTruth.toFixed(2)} | ${pct(b.repairCoverage)} |`),
    "",
  ].join("\n");
}
