/**
 * Analysis stage, a study's plan (README "Write a follow-up study"; `merit study plan`): before any
 * compute, what `merit study run` will run — runs, the most model calls and prompt+output tokens,
 * an estimated time at a measured or a stated per-call rate — and the power of every comparison
 * (study-power.ts). `planStudy` reads what the plan needs (stream sizes, finished runs, the measured
 * rate); the other functions are pure.
 * @module
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfigDataset } from "../experiment/database-set.ts";
import { planStreams } from "../experiment/grid.ts";
import { planGrid } from "../experiment/grid-plan.ts";
import { readInitialCache } from "../experiment/initial-cache.ts";
import { buildStream, checkDatabasesThere } from "../experiment/stream.ts";
import type { ExperimentConfig } from "../experiment/config.ts";
import type { OrderKind } from "../experiment/stream-order.ts";
import { byConditions, checkStudyDatabases, isRunComplete, openStudy, studyDatabasesLine, studyModelsLine, STUDY_TIMING_FILE } from "../experiment/study-grid.ts";
import { datasetRunRoot, initialPredictions, orderResults, orderRunRoot, orderText, studyConfig, studyOrders, studyPaths, subsetText, type StudyPaths } from "../experiment/study.ts";
import { protocolIdOf } from "../oracle/oracle.ts";
import { readPaperNumbers } from "./paper-comparison.ts";
import { readReportInputs } from "./report-inputs.ts";
import { paperVariances } from "./study-power.ts";
import { episodeCallBound, getMethod, hookCallBound } from "../methods/index.ts";
import { armConditions, studyConditions, type Study } from "../experiment/study.ts";
import { getFeedback } from "../methods/feedback.ts";
import { fixed } from "./number-format.ts";
import { pairedPower } from "./power.ts";
import { pairedMatrices, type RunSummary } from "./run-summary.ts";
import { mdeFactor, paperVarianceFor, powerFromPaper, powerFromPilot, type PaperVariance, type PlannedPower } from "./study-power.ts";

/**
 * The kit's own wall time per repair attempt — oracle scoring, retrieval, embedding lookups, hook
 * bookkeeping, the call cache, the trajectory commit and the rest of the episode loop, everything but
 * the model — measured by bench/overhead.ts on the simulated engine (bench/README.md, "The kit's own
 * cost per repair attempt"): the largest over MERIT, the baselines and the nine peers over a whole
 * stream (`--full`: 972 Spider dev episodes, K = 7, each memory as large as the stream makes it) —
 * MERIT's 6.0 ms (2026-12-07 04:13 UTC, a 2-core AMD EPYC shared with other work, load average
 * 0.4–1.1; 5.1 ms at 06:09, load 1.6–3.2). It was error_fix_memory's 9.1 ms until the peers ranked
 * notes from their memory's stored vectors instead of copying every note's vector
 * (lib/methods/note-index.ts): 4.4 ms at 06:09, the peers' largest.
 * The plan adds it to every model call (a call is at most one attempt's work, so it is an upper bound):
 * it is the whole per-call time of the simulated engine, and it is added to a GPU's model time.
 */
export const MEASURED_KIT_OVERHEAD_S = 0.006;

/** Seconds per computed model call assumed when this machine has not measured one (not measurements). */
export const ASSUMED_SECONDS_PER_CALL = {
  /** The tiny random test models on one CPU thread (order of magnitude of `merit demo --fresh`). */
  tiny: 0.5,
  /** A 7B Q4 GGUF with ~1,000-token prompts on a CPU, as `merit demo --full` assumes. */
  real: 20,
  /** One request to an OpenAI-compatible server running a 7B model on one GPU. */
  server: 1,
  /** The simulated engine: no model, so the kit's own work per call, as bench/overhead.ts measured it (MEASURED_KIT_OVERHEAD_S). */
  simulated: MEASURED_KIT_OVERHEAD_S,
} as const;

/**
 * Planning rates of one GPU running the 7B Q4 chat GGUF with llama.cpp (node-llama-cpp, `gpu: "auto"`
 * or a named backend), for the plan's GPU hours. Not measured here: set below the throughput that
 * llama.cpp's own `llama-bench` publishes for a 7B Q4_0 model on one current GPU (the CUDA results
 * collected in ggml-org/llama.cpp discussion #15013, "Performance of llama.cpp on NVIDIA GPUs":
 * thousands of prompt tokens/s and 100–200 generated tokens/s on A100 / H100 / RTX 4090-class cards),
 * because a repair call decodes one sequence at a time beside the run's other contexts. A call is
 * timed as its prompt at `prompt_tokens_per_s` plus its output at `output_tokens_per_s`.
 */
export const ASSUMED_GPU_RATES = { prompt_tokens_per_s: 2000, output_tokens_per_s: 50 } as const;

/** GPU seconds of one call of at most `prompt` prompt tokens and `output` output tokens at ASSUMED_GPU_RATES. */
export function gpuSecondsPerCall(prompt: number, output: number): number {
  return prompt / ASSUMED_GPU_RATES.prompt_tokens_per_s + output / ASSUMED_GPU_RATES.output_tokens_per_s;
}

/** "12.3 GPU hours" (one decimal under 100). */
export function gpuHoursText(seconds: number): string {
  const h = seconds / 3600;
  return `${h < 100 ? h.toFixed(1) : Math.round(h).toLocaleString("en-US")} GPU hour${h === 1 ? "" : "s"}`;
}

/** What `merit study run` measured on this machine: grid seconds and the calls it computed. */
export interface GridTiming {
  seconds: number;
  computed_calls: number;
}

/** "11 ms of the kit's own work per call, measured by bench/overhead.ts" (bench/README.md). */
function kitOverheadText(): string {
  return `${(MEASURED_KIT_OVERHEAD_S * 1000).toFixed(0)} ms of the kit's own work (oracle, retrieval, hooks, call cache, commit) measured by bench/overhead.ts`;
}

/** The rate of the time estimate: measured when the last run computed any call, else the stated assumption for the models. */
export function callRate(timing: GridTiming | null, kind: keyof typeof ASSUMED_SECONDS_PER_CALL): CallRate {
  if (timing !== null && timing.computed_calls > 0) {
    const s = timing.seconds / timing.computed_calls;
    return { seconds: s, source: `measured on this machine by the study's last run: ${s.toFixed(2)} s per computed call over ${timing.computed_calls} calls, model loading included` };
  }
  if (kind === "simulated") return { seconds: MEASURED_KIT_OVERHEAD_S, source: `${kitOverheadText()} per call for the simulated engine (no model: the kit's own work is all of it), not on this machine` };
  const what = kind === "tiny" ? "the tiny models on one CPU thread" : kind === "real" ? "a 7B Q4 GGUF on a CPU (~1 s on one GPU)" : "a 7B model served on one GPU";
  return { seconds: ASSUMED_SECONDS_PER_CALL[kind], source: `assumed ${ASSUMED_SECONDS_PER_CALL[kind]} s per call for ${what}, not measured here` };
}

/** One dataset's streams as far as they are known before the run. */
export interface DatasetStreams {
  dataset: string;
  /** Queries per stream. */
  queries: number;
  /** Initially failed queries per stream: exact when the initial cache exists, else the most the subset allows. */
  failed: number;
  /** Whether `failed` is exact (the initial cache exists). */
  exact: boolean;
  /** Queries the dataset holds (what `queries: null` would run). */
  available: number;
  /**
   * Model calls that build the initial cache before the grid: one greedy call per query of the
   * dataset when the cache is missing and no predictions file is known (`merit study run` then builds
   * it with the model); 0 or absent otherwise.
   */
  initialCalls?: number;
}

/** The per-call rate the time estimate uses. */
export interface CallRate {
  seconds: number;
  /** "measured …" or "assumed …", printed next to the estimate. */
  source: string;
}

/** Upper bounds of one dataset's grid. */
export interface GridBudget {
  dataset: string;
  runs: number;
  /** Runs already complete (the rerun computes only the others). */
  complete: number;
  /** At most this many model calls (K per initially failed query and stream, plus the methods' declared hook calls). */
  calls: number;
  /** Calls of the runs not yet complete. */
  callsLeft: number;
  /** Whether the counts are the grid plan's (repeats counted once, the call cache's calls subtracted from callsLeft). */
  planned: boolean;
}

/**
 * The most model calls of one stream of `method` with `failed` initially failed queries (of
 * `queries`) and K repairs, no call counted once for several streams: K per failed query (2K + 1
 * with reflections), plus the hooks' declared calls in every episode; under a feedback regime that
 * calls the model (`judgePerAttempt` calls per scored attempt) any query may repair, and each of its
 * K + 1 attempts is judged; under a regime that may reject an attempt the oracle scores correct
 * (`rejectsCorrect`: noisy_oracle's noise) any query may repair too.
 */
export function streamCalls(method: string, failed: number, k: number, opts: { queries?: number; judgePerAttempt?: number; rejectsCorrect?: boolean } = {}): number {
  const m = getMethod(method);
  const queries = opts.queries ?? failed;
  const judge = opts.judgePerAttempt ?? 0;
  const repairing = judge > 0 || opts.rejectsCorrect === true ? queries : failed;
  // Declared kinds a query that is accepted at once may call (scope episode, success) count for every
  // query; the rest (repair_episode, repaired: Reflexion's reflections) only for the queries that repair.
  const anyQuery = hookCallBound(m, k, { initiallyAccepted: true, finallyAccepted: true });
  return repairing * (episodeCallBound(m, k) + hookCallBound(m, k) - anyQuery) + queries * anyQuery + queries * judge * (k + 1);
}

/**
 * A dataset's calls as `merit grid --plan` counts them (lib/experiment/grid-plan.ts `computedAtMost`):
 * `calls` of every stream of the study with nothing cached, `callsLeft` of the runs not yet complete
 * with what the call cache holds subtracted; calls repeated across streams count once.
 */
export interface PlannedCalls {
  calls: number;
  callsLeft: number;
}

/**
 * Per dataset: runs, complete runs, most calls (all and those still to run): the grid plan's counts
 * where `planned` has the dataset (its initial cache exists), else K per initially failed query and
 * stream (2K + 1 with reflections), every stream counted in full.
 */
export function gridBudget(study: Study, streams: readonly DatasetStreams[], isComplete: (dataset: string, method: string, seed: number, order: OrderKind) => boolean, planned: ReadonlyMap<string, PlannedCalls> = new Map()): GridBudget[] {
  return streams.map((s) => {
    let calls = 0;
    let callsLeft = 0;
    let complete = 0;
    let runs = 0;
    for (const method of study.methods) {
      for (const order of studyOrders(study)) {
        for (const seed of order.seeds) {
          const cond = armConditions(study, method);
          const regime = getFeedback(cond.feedback_regime ?? study.feedback ?? "denotation_confirmed");
          const c = streamCalls(method, s.failed, cond.max_repair_steps ?? study.max_repair_steps, { queries: s.queries, judgePerAttempt: regime.call?.perAttempt ?? 0, rejectsCorrect: regime.rejectsCorrect });
          calls += c;
          runs++;
          if (isComplete(s.dataset, method, seed, order.kind)) complete++;
          else callsLeft += c;
        }
      }
    }
    const plan = planned.get(s.dataset);
    // A model-built initial cache comes first: its calls count, and are all still to compute (issue 39 item 5).
    const initial = s.initialCalls ?? 0;
    return { dataset: s.dataset, runs, complete, calls: (plan?.calls ?? calls) + initial, callsLeft: (plan?.callsLeft ?? callsLeft) + initial, planned: plan !== undefined };
  });
}

/** The plan's words for the calls beyond repairs and reflections: the hooks' declared calls, a judging arm's judge calls ("" when none). */
function extraCallsText(study: Study): string {
  const hooks = study.methods.some((m) => hookCallBound(getMethod(m), study.max_repair_steps) > 0);
  const judged = study.methods.some((m) => getFeedback(armConditions(study, m).feedback_regime ?? study.feedback ?? "denotation_confirmed").call !== undefined);
  return [hooks ? ", the methods' declared hook calls in every episode" : "", judged ? ", and under a judging feedback regime every query may repair and each attempt is judged" : ""].join("");
}

/** "~3 h 20 min", "~40 s". */
export function durationText(seconds: number): string {
  if (seconds < 90) return `~${Math.max(1, Math.round(seconds))} s`;
  if (seconds < 5400) return `~${Math.round(seconds / 60)} min`;
  const h = Math.floor(seconds / 3600);
  return `~${h} h ${Math.round((seconds - h * 3600) / 60)} min`;
}

/** One comparison's power row of the plan. */
export interface ComparisonPower extends PlannedPower {
  dataset: string;
  a: string;
  b: string;
  queries: number;
  seeds: number;
  /**
   * The pilot of this comparison: `used` (its variance), `no-variance` (identical outcomes),
   * `unpaired` (its runs do not pair up) or `none` (no finished runs of both methods).
   */
  pilot: "used" | "no-variance" | "unpaired" | "none";
}

/**
 * Power of every comparison on every dataset: from the pilot runs (`pilot`, the study's finished
 * runs) when they hold both methods and show any variance, else from the paper's variance.
 */
export function comparisonPowers(study: Study, streams: readonly DatasetStreams[], paper: readonly PaperVariance[], target: number, pilot: readonly RunSummary[]): ComparisonPower[] {
  const rows: ComparisonPower[] = [];
  const seeds = study.seeds.length;
  for (const s of streams) {
    for (const [a, b] of study.comparisons) {
      let planned: PlannedPower | null = null;
      let fallback = "";
      let state: ComparisonPower["pilot"] = "none";
      if (pilot.some((r) => r.dataset === s.dataset && r.method === a) && pilot.some((r) => r.dataset === s.dataset && r.method === b)) {
        try {
          const m = pairedMatrices(pilot, s.dataset, a, b);
          planned = powerFromPilot(pairedPower(m.a, m.b, { resamples: 2000, seed: 0 }), s.queries, seeds, target);
          state = planned === null ? "no-variance" : "used";
          if (planned === null) fallback = " (the pilot shows identical outcomes, so no variance: the paper's is used)";
        } catch {
          state = "unpaired";
          fallback = " (the pilot runs do not pair up: the paper's variance is used)";
        }
      }
      if (planned === null) {
        const { variance, source } = paperVarianceFor(paper, s.dataset, a, b);
        planned = powerFromPaper(variance, source + fallback, s.queries, seeds, target, mdeFactor());
      }
      rows.push({ dataset: s.dataset, a, b, queries: s.queries, seeds, pilot: state, ...planned });
    }
  }
  return rows;
}

/**
 * The "orders for MDE ≤ target" cell when no count is known: no number of orders up to 100 reaches
 * the target (a pilot's variance), or the paper's variance, which cannot be split across orders,
 * until a pilot (a larger one when the pilot ran with identical outcomes) measures it.
 */
const ORDERS_UNKNOWN: Record<ComparisonPower["pilot"], string> = {
  used: "none ≤ 100",
  none: "needs a pilot",
  "no-variance": "needs a larger pilot (identical outcomes)",
  unpaired: "needs a pilot whose runs pair up",
};

/** The plan as lines for stdout (a Markdown table for the power). */
export function planLines(study: Study, streams: readonly DatasetStreams[], budgets: readonly GridBudget[], rate: CallRate, tokensPerCall: { tokens: number; source: string }, powers: readonly ComparisonPower[], target: number, gpu?: CallRate): string[] {
  const lines: string[] = [];
  const total = budgets.reduce((n, b) => n + b.runs, 0);
  const complete = budgets.reduce((n, b) => n + b.complete, 0);
  const calls = budgets.reduce((n, b) => n + b.calls, 0);
  const left = budgets.reduce((n, b) => n + b.callsLeft, 0);
  const int = (n: number) => n.toLocaleString("en-US");
  const count = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const orders = study.seeds.length + study.orderKinds.length;
  lines.push(`runs: ${total} (${count(study.methods.length, "method")} × ${count(orders, "stream order")} × ${count(study.datasets.length, "dataset")}), ${complete === total ? `all ${complete} already complete: none left to compute` : `${complete} already complete`}`);
  for (const s of streams) {
    const built = (s.initialCalls ?? 0) > 0 ? `; the model builds it first: ${int(s.initialCalls!)} calls, one per query of the dataset, counted below` : "";
    lines.push(`  ${s.dataset}: ${s.queries} queries per stream, ${s.exact ? "" : "at most "}${s.failed} initially failed${s.exact ? " (from the initial cache)" : ` (the initial cache is not built yet${built})`}`);
  }
  const how = budgets.every((b) => b.planned)
    ? "merit grid --plan's count: calls repeated across streams counted once, those the call cache holds not left to compute"
    : `K = ${study.max_repair_steps} repairs per initially failed query and stream${extraCallsText(study)}${budgets.some((b) => b.planned) ? "; the grid plan's count where the initial cache exists" : "; memoryless methods repeat across orders, so the call cache answers many"}`;
  lines.push(`most model calls: ${int(calls)} (${how}), ${int(left)} of them still to compute`);
  lines.push(left === 0 ? "most tokens: none left to compute (no model call left)" : `most tokens: ${int(Math.round(left * tokensPerCall.tokens))} (prompt + output, ${tokensPerCall.source})`);
  lines.push(left === 0 ? "estimated time: no model call left to compute (merit study run audits and reports)" : `estimated time: at most ${durationText(left * rate.seconds)} (${rate.source}; the progress line gives the real ETA)`);
  if (gpu !== undefined && left > 0) lines.push(`GPU time: at most ${gpuHoursText(left * gpu.seconds)} on one GPU (${gpu.source}), beside the ${durationText(left * rate.seconds)} above`);
  lines.push("");
  lines.push(`power (α = 0.05, 80% power; MDE = 2.80 × SE; target Δ = ${fixed(target, 2)} pp):`);
  lines.push("| dataset | comparison | queries | orders | MDE (pp) | queries for MDE ≤ target | orders for MDE ≤ target | variance from |");
  lines.push("|---|---|---|---|---|---|---|---|");
  for (const p of powers) {
    const orders = p.seedsNeeded !== null ? String(p.seedsNeeded) : ORDERS_UNKNOWN[p.pilot];
    const available = streams.find((s) => s.dataset === p.dataset)?.available ?? Number.POSITIVE_INFINITY;
    const queries = `${int(p.queriesNeeded)}${p.queriesNeeded > available ? ` (more than the ${int(available)} the dataset holds)` : ""}`;
    lines.push(`| ${p.dataset} | ${p.a} vs ${p.b} | ${p.queries} | ${p.seeds} | ${fixed(p.mde, 2)} | ${queries} | ${orders} | ${p.source} |`);
  }
  const weak = powers.filter((p) => p.mde > target);
  if (weak.length > 0) lines.push(`${weak.length} of ${powers.length} comparisons cannot detect ${fixed(target, 2)} pp with this design: a Δ below the MDE will read as "no difference" without being evidence of none.`);
  return lines;
}

/** What `planStudy` is asked: the target Δ in percentage points (default 2) and the runs folder (default runs/studies/NAME). */
export interface StudyPlanOptions {
  target?: number;
  runs?: string;
}

/** A study's plan: the study, what is known of each dataset's streams, the grid's budgets, the comparisons' power, and all of it as text. */
export interface StudyPlan {
  study: Study;
  streams: DatasetStreams[];
  budgets: GridBudget[];
  powers: ComparisonPower[];
  /** What `merit study plan` prints. */
  lines: string[];
}

/**
 * `merit study plan` (README "Write a follow-up study"): before any compute, the runs, the most model
 * calls and tokens, an estimated time (the rate this machine measured in the study's last run, else
 * a stated assumption), and each comparison's MDE at α = 0.05 and 80% power for its queries and
 * orders (variance from the study's finished runs when present, else from the paper's Table 2).
 */
export async function planStudy(file: string, options: StudyPlanOptions = {}): Promise<StudyPlan> {
  const target = options.target ?? 2;
  const { study } = await openStudy(file);
  const paths = studyPaths(study, { runs: options.runs });
  const first = studyConfig(study, study.datasets[0], paths);
  const orderWords = study.orderKinds.length === 0 ? `stream orders ${study.seeds.join(", ")}` : `stream orders ${studyOrders(study).map(orderText).join("; ")} (each structured order reported apart, in ${orderResults(paths, study.orderKinds[0]).replace(study.orderKinds[0], "KIND")})`;
  const databases = studyDatabasesLine(study);
  const lines = [
    `study ${study.name} (${file}): ${study.datasets.join(", ")}; methods ${study.methods.join(", ")}; ${orderWords}; ${subsetText(study)}`,
    `comparisons (Δ = EX(a) − EX(b)): ${study.comparisons.map(([a, b]) => `${a} vs ${b}`).join(", ")}`,
    studyModelsLine(study, first),
    ...(databases !== "" ? [databases] : []),
  ];
  await checkStudyDatabases(study, file, paths);
  const streams = await datasetStreams(study, paths, file);
  const complete = (d: string, m: string, s: number, order: OrderKind = "random") => isRunComplete(join(orderRunRoot(paths, d, order), `${m}-s${s}`));
  const budgets = gridBudget(study, streams, complete, await plannedCalls(study, streams, paths, complete));
  const pilot = finishedRuns(study, paths);
  const calls = pilot.reduce((n, r) => n + r.metrics.accounting.llm_calls, 0);
  const tokens = pilot.reduce((n, r) => n + r.metrics.accounting.total_tokens, 0);
  const maxOut = largestOutputLimit(study, first.decoding.max_output_tokens);
  const perCall =
    calls > 0
      ? { tokens: tokens / calls, source: `${Math.round(tokens / calls)} per call, the mean of the study's finished runs` }
      : { tokens: first.decoding.max_input_tokens + maxOut, source: `at most max_input_tokens ${first.decoding.max_input_tokens} + ${maxOut === first.decoding.max_output_tokens ? `max_output_tokens ${maxOut}` : `${maxOut}, the largest output limit a call kind of the study declares`} per call` };
  const powers = comparisonPowers(study, streams, paperVariances(readPaperNumbers().numbers), target, pilot);
  lines.push(...planLines(study, streams, budgets, callRate(readTiming(paths), study.models.kind), perCall, powers, target, gpuRate(study, first)));
  return { study, streams, budgets, powers, lines };
}

/** The largest output limit of any call the study's methods and feedback regimes may make (METHOD.md §12.4): `fallback` (max_output_tokens) or a declared kind's. */
export function largestOutputLimit(study: Study, fallback: number): number {
  return Math.max(
    fallback,
    ...study.methods.flatMap((m) => Object.values(getMethod(m).hooks.calls ?? {}).map((d) => d.maxOutputTokens ?? 0)),
    ...study.methods.map((m) => getFeedback(armConditions(study, m).feedback_regime ?? study.feedback ?? "denotation_confirmed").call?.maxOutputTokens ?? 0),
  );
}

/**
 * The GPU rate of the plan's GPU hours, for models that run on a GPU: local GGUFs with `gpu` "auto"
 * or a named backend (ASSUMED_GPU_RATES, a call at most max_input_tokens + max_output_tokens), or
 * servers (the stated per-call assumption, one GPU), each plus the kit's measured own work per call
 * (MEASURED_KIT_OVERHEAD_S); none for the tiny models or `gpu: false`.
 */
export function gpuRate(study: Study, config: ExperimentConfig): CallRate | undefined {
  const m = study.models;
  if (m.kind === "server") return { seconds: ASSUMED_SECONDS_PER_CALL.server + MEASURED_KIT_OVERHEAD_S, source: `assumed ${ASSUMED_SECONDS_PER_CALL.server} s per request to a 7B model served on one GPU, + ${kitOverheadText()}` };
  if (m.kind !== "real" || m.gpu === false) return undefined;
  const { max_input_tokens: input, max_output_tokens: output } = config.decoding;
  const seconds = gpuSecondsPerCall(input, output);
  return {
    seconds: seconds + MEASURED_KIT_OVERHEAD_S,
    source: `gpu: ${JSON.stringify(m.gpu)}; at most ${input} prompt tokens at ${ASSUMED_GPU_RATES.prompt_tokens_per_s}/s + ${output} output tokens at ${ASSUMED_GPU_RATES.output_tokens_per_s}/s = ${seconds.toFixed(1)} s per call, planning rates below llama.cpp's published 7B Q4 GPU benchmarks (lib/analysis/study-plan.ts ASSUMED_GPU_RATES), not measured here; + ${kitOverheadText()}`,
  };
}

/** What is known about each dataset's streams: exact from the initial cache when it exists. */
async function datasetStreams(study: Study, paths: StudyPaths, file: string): Promise<DatasetStreams[]> {
  const out: DatasetStreams[] = [];
  for (const dataset of study.datasets) {
    const config = studyConfig(study, dataset, paths);
    const { dataset: data } = await loadConfigDataset(config, {});
    checkDatabasesThere(data);
    if (existsSync(config.initial_cache)) {
      const cache = readInitialCache(config.initial_cache, data, protocolIdOf(config.dataset, config.protocol));
      const stream = buildStream(data, cache, 0, study.queries ?? undefined, config.subset);
      out.push({ dataset, queries: stream.length, failed: stream.filter((s) => s.initial.oracle_correct === false).length, exact: true, available: data.examples.length });
    } else {
      const queries = Math.min(study.queries ?? data.examples.length, data.examples.length);
      const correct = study.subset?.rule === "initially_failed" ? Math.min(study.subset.initially_correct, queries) : 0;
      const initialCalls = initialPredictions(study, dataset, file) === null ? data.examples.length : 0;
      out.push({ dataset, queries, failed: queries - correct, exact: false, available: data.examples.length, ...(initialCalls > 0 ? { initialCalls } : {}) });
    }
  }
  return out;
}

/**
 * The grid plan's calls (lib/experiment/grid-plan.ts) of each dataset whose initial cache exists: of
 * every stream with nothing cached, and of the streams not yet complete with the call cache's calls
 * subtracted. Datasets without an initial cache are left to the per-stream bound.
 */
async function plannedCalls(study: Study, streams: readonly DatasetStreams[], paths: StudyPaths, complete: (d: string, m: string, s: number, order: OrderKind) => boolean): Promise<Map<string, PlannedCalls>> {
  const planned = new Map<string, PlannedCalls>();
  for (const s of streams) {
    if (!s.exact) continue;
    const limit = study.queries ?? null;
    let calls = 0;
    let callsLeft = 0;
    for (const order of studyOrders(study)) {
      const all = planStreams(study.methods, order.seeds, orderRunRoot(paths, s.dataset, order.kind));
      const left = all.filter((x) => !complete(s.dataset, x.method, x.seed, order.kind));
      // Arms under other conditions (feedback regime, K) are planned with their own config.
      for (const group of byConditions(study, all)) {
        const config = studyConfig(study, s.dataset, paths, group[0].method, order.kind);
        const open = group.filter((x) => left.includes(x));
        calls += (await planGrid(config, group, { limit, consultCache: false })).computedAtMost;
        callsLeft += open.length === 0 ? 0 : (await planGrid(config, open, { limit })).computedAtMost;
      }
    }
    planned.set(s.dataset, { calls, callsLeft });
  }
  return planned;
}

/** The finished runs of the study (the pilot of the plan), or none. */
function finishedRuns(study: Study, paths: StudyPaths): RunSummary[] {
  const dirs = planStreams(study.methods, study.seeds, "").flatMap((s) => study.datasets.map((d) => join(datasetRunRoot(paths, d), s.outDir))).filter(isRunComplete);
  // the arms' conditions (feedback regime, K) differ between runs by design, as in the study's report
  return dirs.length === 0 ? [] : readReportInputs(dirs, { conditions: studyConditions(study) }).runs;
}

/** The timing the study's last run wrote, or null. */
function readTiming(paths: StudyPaths): GridTiming | null {
  const file = join(paths.runs, STUDY_TIMING_FILE);
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as GridTiming) : null;
}
