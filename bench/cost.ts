/**
 * Benchmark, issue 22's cost table in one run: every row measured side by side with its anchor,
 * kit and anchor alternating within each row, then printed as one table (measure | kit | anchor |
 * ratio | goal | met?) with the load average at the start and the end. Never asserted by tests.
 *
 * 1. `merit eval` of the 972-question DeepSeek-Coder-7B file, whole process, against a Python
 *    evaluator, whole process (bench/oracle.ts `--side-by-side`: kit cold gold cache, kit warm,
 *    evaluator, in turn; medians of `--eval-reps`). The official test-suite evaluator with
 *    `--official DIR`, MERIT_OFFICIAL_EVAL, or `<cache>/merit-official-eval` holding its
 *    exec_eval.py and parse.py (not in this repository); else the kit's re-implementation, labelled.
 * 2. `merit help` and every `merit <command> --help` against `node -e 1`, round-robin
 *    (bench/startup.ts `measureStartup`; medians of `--reps`).
 * 3. The paired bootstrap, B = 10,000, 1,034 queries × 3 seeds, first call in a fresh process and
 *    warm, against numpy's first call in a fresh python3 (bench/bootstrap-first-call.ts
 *    `measureBootstrapFirstCall`; medians of `--reps`; the anchor is the fastest numpy found).
 * 4. The full `make reproduce` grid on one GPU: its computed calls from the grid plan's counting
 *    with the paper's initial failures (lib/experiment/grid-plan.ts `paperGridEstimate`), checked in
 *    this run against `merit grid --plan`'s own count (`planGrid`) on the bundled Spider with the
 *    DeepSeek-Coder predictions as a stand-in initial cache; tokens at the paper's tokens per call;
 *    the time at measured rates (`--rates FILE`: the JSON bench/throughput.ts `--json` or
 *    bench/gpu.sh writes; by default runs/bench/throughput-gpu.json when present), else the rates of
 *    `--prefill-tok-s`/`--decode-tok-s`, else published llama.cpp figures — labelled "assumed".
 *
 * Run: node bench/cost.ts [--reps 5] [--eval-reps 5] [--official DIR] [--python PY]
 *      [--rates FILE] [--prefill-tok-s N --decode-tok-s N]
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, homedir, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { loadDataset } from "../lib/data/index.ts";
import { loadConfig } from "../lib/experiment/config.ts";
import { planStreams } from "../lib/experiment/grid.ts";
import { closedFormPlan, paperGridEstimate, planGrid, REPRODUCE_METHODS } from "../lib/experiment/grid-plan.ts";
import { initialCacheFromPredictions, writeInitialCache } from "../lib/experiment/initial-cache.ts";
import { Oracle } from "../lib/oracle/oracle.ts";
import { readPredictions } from "../lib/oracle/predictions.ts";
import { measureBootstrapFirstCall } from "./bootstrap-first-call.ts";
import { gridSeconds, ratesFromThroughputJson, type Rates } from "./grid-estimate.ts";
import { measureStartup } from "./startup.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const USAGE = "usage: node bench/cost.ts [--reps 5] [--eval-reps 5] [--official DIR] [--python PY] [--rates FILE] [--prefill-tok-s N --decode-tok-s N]";
/** Published llama.cpp figures (README "The full grid on one GPU"), not measured here. */
const ASSUMED: Rates = { prefillTokS: 10_000, decodeTokS: 930, source: "assumed: llama.cpp 16 sequences, 10,000 tok/s prefill (PR #7676, 8B Q4_0, RTX 4090), 930 tok/s decode (PR #3776, 7B, 16 sequences); not measured here" };
const GOAL_HOURS = 12;

function fail(message: string): never {
  process.stderr.write(`bench/cost.ts: ${message}\n`);
  process.exit(2);
}

let values;
try {
  values = parseArgs({
    options: {
      reps: { type: "string", default: "5" },
      "eval-reps": { type: "string", default: "5" },
      official: { type: "string", default: process.env.MERIT_OFFICIAL_EVAL },
      python: { type: "string" },
      rates: { type: "string" },
      "prefill-tok-s": { type: "string" },
      "decode-tok-s": { type: "string" },
    },
  }).values;
} catch (error) {
  fail(`${(error as Error).message}; ${USAGE}`);
}
const positive = (name: string, text: string | undefined, integer: boolean): number => {
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) fail(`--${name} must be a positive ${integer ? "integer" : "number"}, got "${text}"; ${USAGE}`);
  return n;
};
const reps = positive("reps", values.reps, true);
const evalReps = positive("eval-reps", values["eval-reps"], true);
if ((values["prefill-tok-s"] === undefined) !== (values["decode-tok-s"] === undefined)) fail(`give --prefill-tok-s and --decode-tok-s together; ${USAGE}`);
if (values.rates !== undefined && values["prefill-tok-s"] !== undefined) fail(`give --rates FILE or --prefill-tok-s/--decode-tok-s, not both; ${USAGE}`);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const int = (n: number) => Math.round(n).toLocaleString("en-US");
const load = () => loadavg().map((x) => x.toFixed(2)).join(" ");

// The evaluator and the Python that runs it (the official code needs sqlparse and tqdm).
const cacheHome = process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache");
const official = [values.official, join(cacheHome, "merit-official-eval")].find((d): d is string => d !== undefined && existsSync(join(d, "exec_eval.py")) && existsSync(join(d, "parse.py"))) ?? null;
if (values.official !== undefined && official !== values.official) fail(`--official ${values.official}: no exec_eval.py and parse.py there (the official test-suite evaluator's files)`);
const python =
  values.python ??
  (official ? ["python3", "/usr/bin/python3"].find((p) => spawnSync(p, ["-c", "import sqlparse, tqdm"]).status === 0) : "python3") ??
  fail("no python3 with sqlparse and tqdm for the official evaluator; pass --python PY (or MERIT_OFFICIAL_EVAL= to time the re-implementation)");

// Row 4's rates, read first so that a bad file stops the run before any measuring.
const defaultRates = join(ROOT, "runs/bench/throughput-gpu.json");
let rates: Rates;
try {
  rates =
    values.rates !== undefined
      ? ratesFromThroughputJson(values.rates)
      : values["prefill-tok-s"] !== undefined
        ? { prefillTokS: positive("prefill-tok-s", values["prefill-tok-s"], false), decodeTokS: positive("decode-tok-s", values["decode-tok-s"], false), source: "assumed: stated by --prefill-tok-s / --decode-tok-s, not measured here" }
        : existsSync(defaultRates)
          ? ratesFromThroughputJson(defaultRates)
          : ASSUMED;
} catch (error) {
  fail((error as Error).message);
}

interface Row {
  measure: string;
  kit: string;
  anchor: string;
  ratio: string;
  goal: string;
  met: string;
}
const rows: Row[] = [];
const notes: string[] = [];

const loadStart = load();
console.log(`cost bench: issue 22's table, every row side by side in one run (kit and anchor alternating within each row)`);
console.log(`machine: ${availableParallelism()} cores (${cpus()[0]?.model.trim()}), node ${process.version}; load average at start ${loadStart}`);

// 1. merit eval vs the evaluator.
process.stderr.write(`cost: merit eval vs the evaluator, ${evalReps} reps …\n`);
const oracleRun = spawnSync(process.execPath, [join(ROOT, "bench/oracle.ts"), "--side-by-side", "--reps", String(evalReps), "--python", python, ...(official ? ["--official", official] : [])], {
  cwd: ROOT,
  encoding: "utf8",
  maxBuffer: 64 << 20,
  env: { ...process.env, MERIT_OFFICIAL_EVAL: "" },
});
if (oracleRun.status !== 0) fail(`bench/oracle.ts --side-by-side exited ${oracleRun.status}: ${oracleRun.stderr.trim().split("\n").slice(-3).join(" | ")}`);
const ev = JSON.parse(oracleRun.stdout.trim().split("\n").at(-1)!) as { evaluator: string; python: string; cold: number; warm: number; ref: number; cpu: { cold: number; warm: number; ref: number }; lines: { kit: string; ref: string } };
rows.push({
  measure: `\`merit eval\` of the 972-question DeepSeek-Coder-7B file, whole process, wall (median of ${evalReps})`,
  kit: `${ev.warm.toFixed(2)} s warm gold cache, ${ev.cold.toFixed(2)} s cold`,
  anchor: `${ev.ref.toFixed(2)} s, ${official ? "official test-suite evaluator (exec path, a lower bound)" : "reference_check.py (re-implementation, NOT the official code)"}`,
  ratio: `${(ev.warm / ev.ref).toFixed(2)}× warm, ${(ev.cold / ev.ref).toFixed(2)}× cold`,
  goal: "≤ 0.2× the official evaluator",
  met: official ? (ev.warm / ev.ref <= 0.2 ? (ev.cold / ev.ref <= 0.2 ? "yes" : "warm only") : "no") : "— (not the official evaluator)",
});
notes.push(`eval: evaluator ${ev.evaluator}, run by ${ev.python}; CPU time of all processes: kit warm ${ev.cpu.warm.toFixed(2)} s, cold ${ev.cpu.cold.toFixed(2)} s, evaluator ${ev.cpu.ref.toFixed(2)} s (${(ev.cpu.warm / ev.cpu.ref).toFixed(2)}× / ${(ev.cpu.cold / ev.cpu.ref).toFixed(2)}×)`);
notes.push(`eval: kit "${ev.lines.kit}" | evaluator "${ev.lines.ref}"`);

// 2. Start-up of every command vs node -e 1.
process.stderr.write(`cost: start-up of every command vs node -e 1, ${reps} rounds …\n`);
const st = await measureStartup({ reps, paths: ["now"] });
notes.push(`start-up: /proc/loadavg before ${st.loadBefore}, after ${st.loadAfter}`);
const excess = st.invocations.map((name) => ({ name, over: st.medians.get(name)!.get("now")! - st.base }));
const worst = excess.reduce((a, b) => (b.over > a.over ? b : a));
const help = st.medians.get("merit help")!.get("now")!;
rows.push({
  measure: `\`merit help\`, whole process (median of ${reps}, round-robin with every command's --help)`,
  kit: `${help.toFixed(3)} s; slowest command ${worst.name} ${(worst.over + st.base).toFixed(3)} s`,
  anchor: `\`node -e 1\` ${st.base.toFixed(3)} s`,
  ratio: `+${(help - st.base).toFixed(3)} s; slowest +${worst.over.toFixed(3)} s`,
  goal: "≤ 0.3 s more than `node -e 1`, every command's start-up",
  met: excess.every((e) => e.over <= 0.3) ? "yes" : `no (${excess.filter((e) => e.over > 0.3).map((e) => e.name).join(", ")})`,
});

// 3. Bootstrap first call and warm vs numpy.
process.stderr.write(`cost: bootstrap first call vs numpy, ${reps} reps …\n`);
const bs = measureBootstrapFirstCall(reps);
if (bs.pythons.length === 0) fail("no python3 with numpy found (python3 on PATH, /usr/bin/python3): the bootstrap row needs one");
const numpyFirst = bs.numpy.map((n) => median(n.first));
const anchorIndex = numpyFirst.indexOf(Math.min(...numpyFirst));
const np = numpyFirst[anchorIndex];
const kitFirst = median(bs.kit.first);
const kitWarm = median(bs.kit.warm);
rows.push({
  measure: `paired bootstrap, B = 10,000, 1,034 queries × 3 seeds, first call in a process (median of ${reps})`,
  kit: `${kitFirst.toFixed(1)} ms first call; warm ${kitWarm.toFixed(1)} ms (same seed), ${median(bs.kit.warmNewSeed).toFixed(1)} ms (new seed)`,
  anchor: `${np.toFixed(1)} ms, ${bs.pythons[anchorIndex].label} first call (the fastest numpy found)`,
  ratio: `${(kitFirst / np).toFixed(2)}× first; ${(kitWarm / np).toFixed(2)}× warm`,
  goal: "first call ≤ 1.0× numpy, warm stays ≤ 0.3×",
  met: kitFirst / np <= 1 && kitWarm / np <= 0.3 ? "yes" : "no",
});
bs.pythons.forEach((p, i) => notes.push(`bootstrap: ${p.label}: first call ${numpyFirst[i].toFixed(1)} ms, whole process ${median(bs.numpy[i].process).toFixed(0)} ms; kit whole process ${median(bs.kit.process).toFixed(0)} ms`));
if (!bs.identical) notes.push("bootstrap: WARNING the plain definition's interval differs from the kit's");

// 4. The full make reproduce grid.
process.stderr.write(`cost: the paper grid's plan, checked against merit grid --plan on the bundled Spider …\n`);
const est = paperGridEstimate();
const seconds = gridSeconds({ prompt: est.promptTokens, generated: est.generatedTokens }, rates);
const boundSeconds = gridSeconds({ prompt: est.promptTokensBound, generated: est.generatedTokensBound }, rates);
const measuredGpu = rates.source.startsWith("measured") && !rates.source.includes("not a GPU rate");
const proof = await standInPlanCheck();
rows.push({
  measure: "the full `make reproduce` grid on one GPU (11 methods × orders 0–2 × Spider, BIRD)",
  kit: `${(seconds / 3600).toFixed(1)} h for ${int(est.calls)} computed calls at most, ${(est.promptTokens / 1e9).toFixed(2)} G prompt + ${(est.generatedTokens / 1e6).toFixed(0)} M generated tokens (bound: ${(boundSeconds / 3600).toFixed(0)} h)`,
  anchor: `the paper's runs: F = ${est.datasets.map((d) => `${d.failed} ${d.dataset}`).join(", ")} initial failures, Table 3's tokens per call`,
  ratio: `${(seconds / 3600 / GOAL_HOURS).toFixed(2)}× the 12 h goal`,
  goal: "< 12 h on one H200, with the plan proven by counts",
  met: `${seconds < GOAL_HOURS * 3600 ? "yes" : "no"}${measuredGpu ? "" : rates.source.startsWith("measured") ? " (at CPU rates: not a GPU's)" : " (at assumed rates: not measured on a GPU)"}; counts ${proof.ok ? "agree" : "DISAGREE"}`,
});
notes.push(`grid: rates ${int(rates.prefillTokS)} tok/s prefill, ${int(rates.decodeTokS)} tok/s decode — ${rates.source}`);
for (const d of est.datasets) notes.push(`grid: ${d.dataset} (F = ${d.failed}, K = 7, orders 0–2): ${int(d.plan.computedAtMost)} computed calls at most, ${int(d.plan.computed)} if no repair succeeds, ${int(d.plan.everyStream)} with every stream counted; controls (CONTROLS=1) ${int(d.controls.computedAtMost)} more`);
const tokens = { prompt: est.promptTokens, generated: est.generatedTokens };
const decodeLeft = GOAL_HOURS * 3600 - tokens.generated / rates.decodeTokS;
notes.push(
  `grid: at ${int(rates.decodeTokS)} tok/s decode, 12 h ${decodeLeft > 0 ? `needs ≥ ${int(tokens.prompt / decodeLeft)} tok/s prefill` : "is out of reach whatever the prefill (the decode alone takes longer)"}; ` +
    `at 25,000 / 3,000 tok/s (vLLM-like, assumed) ${(gridSeconds(tokens, { prefillTokS: 25_000, decodeTokS: 3_000 }) / 3600).toFixed(1)} h`,
);
notes.push(`grid: proof by counts — ${proof.line}`);

const loadEnd = load();
console.log(`\n| measure | kit | anchor | ratio | goal | met? |`);
console.log(`| --- | --- | --- | --- | --- | --- |`);
for (const r of rows) console.log(`| ${r.measure} | ${r.kit} | ${r.anchor} | ${r.ratio} | ${r.goal} | ${r.met} |`);
console.log("");
for (const line of notes) console.log(line);
console.log(`load average at start ${loadStart}, at end ${loadEnd} (1, 5, 15 min; ${availableParallelism()} cores)`);

/**
 * `merit grid --plan`'s own count (`planGrid`, nothing cached) of REPRODUCE_METHODS × orders 0–2 on
 * the bundled Spider dev with the DeepSeek-Coder-7B predictions as the initial cache, against
 * `closedFormPlan` with that grid's failures: the counting the paper-grid row uses.
 */
async function standInPlanCheck(): Promise<{ ok: boolean; line: string }> {
  const tmp = mkdtempSync(join(tmpdir(), "merit-bench-cost-"));
  try {
    const dataset = await loadDataset({ name: "spider", dir: join(ROOT, "data/spider") });
    const oracle = new Oracle({ dataset: "spider", databases: dataset.databases, protocol: "merit", jobs: 2 });
    let initial;
    try {
      initial = await initialCacheFromPredictions(dataset, readPredictions(join(ROOT, "data/predictions/spider_dev__Deepseek-Coder-7B.sql"), "utf8", dataset.examples.length), oracle);
    } finally {
      await oracle.close();
    }
    const initialFile = join(tmp, "initial.json");
    writeInitialCache(initialFile, initial);
    const configFile = join(tmp, "config.json");
    const base = loadConfig(join(ROOT, "configs/spider.json"));
    writeFileSync(configFile, JSON.stringify({ dataset: "spider", data_dir: join(ROOT, "data/spider"), initial_cache: initialFile, call_cache: join(tmp, "calls.sqlite"), protocol: base.protocol, max_repair_steps: base.max_repair_steps, model: { backend: "llama", path: join(tmp, "model.gguf") }, embedder: { backend: "llama", path: join(tmp, "embedder.gguf") } }));
    const config = loadConfig(configFile);
    const plan = await planGrid(config, planStreams(REPRODUCE_METHODS, [0, 1, 2], join(tmp, "grid")), { consultCache: false });
    const failed = plan.methods.find((m) => m.method === "iterative")!.repairEpisodes / 3;
    const closed = closedFormPlan({ methods: REPRODUCE_METHODS, failed, k: config.max_repair_steps, orders: 3 });
    const ok = closed.methods.every((m, i) => m.computed === plan.methods[i].computed && m.computedAtMost === plan.methods[i].computedAtMost);
    return { ok, line: `merit grid --plan (planGrid) on the bundled Spider, DeepSeek-Coder-7B predictions as the initial cache (F = ${failed}): ${int(plan.computedAtMost)} computed at most, ${int(plan.computed)} if no repair succeeds; closedFormPlan with F = ${failed}: ${int(closed.computedAtMost)} and ${int(closed.computed)}, per method ${ok ? "equal" : "NOT equal"}` };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
