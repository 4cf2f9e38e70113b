/**
 * Benchmark, execution oracle (METHOD.md §2.3, §11.1–§11.2; issue 22 §3 "score at SQLite's speed"):
 * `merit eval` of the 972-question DeepSeek-Coder-7B file as a whole process against a Python
 * evaluator as a whole process on the same file, alternating, median of `--reps`; then where the
 * kit's time goes; then the same on a test-suite layout (`--variants` .sqlite files per database,
 * rows shuffled, bench/test-suite-layout.ts); then the oracle's cost per repair attempt at the grid's
 * scale (each attempt on every variant of its database) against the GPU time an attempt takes.
 *
 * The Python evaluator (bench/evaluator_harness.py): `--official DIR` (or MERIT_OFFICIAL_EVAL) names a
 * folder with the official test-suite evaluator's exec_eval.py and parse.py (taoyds/test-suite-sql-eval;
 * not in this repository; needs sqlparse and tqdm in `--python`); without it the kit's independent
 * stdlib re-implementation (test/fixtures/oracle/reference_check.py) stands in, labelled as such.
 *
 * Kit rows: "cold" = a fresh gold cache file (every gold query executed), "warm" = a gold cache file
 * filled by an earlier run (what a second `merit eval` on the same data pays; runs/gold-cache.sqlite by default).
 * Breakdown rows are measured in fresh child processes running the same library calls as `merit eval`
 * in sequence (in `merit eval` the worker start overlaps the dataset load). Never asserted by tests.
 * `--baseline DIR` adds an earlier checkout of the kit (its `merit eval`, no gold cache flag) to the
 * Spider row, alternating with the rest: before vs after on the same load. `--side-by-side` (bench/cost.ts)
 * runs only the Spider dev whole-process rows and prints them as one JSON line.
 * Run: node bench/oracle.ts [--reps 5] [--suite-reps 3] [--official DIR] [--python python3]
 *      [--variants 10] [--decode-tok-s 2000] [--attempt-tokens 128] [--baseline DIR]
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SELF = fileURLToPath(import.meta.url);
const PRED = join(ROOT, "data/predictions/spider_dev__Deepseek-Coder-7B.sql");
const SPIDER = join(ROOT, "data/spider");
const MAX_OUTPUT_TOKENS = 512; // lib/experiment/config.ts decoding.max_output_tokens default

const { values } = parseArgs({
  options: {
    reps: { type: "string", default: "5" },
    "suite-reps": { type: "string", default: "3" },
    official: { type: "string", default: process.env.MERIT_OFFICIAL_EVAL },
    python: { type: "string", default: "python3" },
    variants: { type: "string", default: "10" },
    "decode-tok-s": { type: "string", default: "2000" },
    "attempt-tokens": { type: "string", default: "128" },
    phases: { type: "string" }, // internal: run the breakdown in this (fresh) process and print JSON
    "gold-cache": { type: "string" },
    baseline: { type: "string" }, // a checkout of an earlier kit (with node_modules), timed alongside: before vs after
    "side-by-side": { type: "boolean" }, // internal (bench/cost.ts): only the Spider dev whole-process rows, as JSON
  },
});

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const s = (x: number) => `${x.toFixed(2)} s`;
const ms = (x: number) => `${(x * 1000).toFixed(0)} ms`;

/**
 * Breakdown of one `merit eval` (fresh process): the same library calls in sequence, each timed.
 * `dataDir` is a Spider dataset directory; the gold cache file is cold unless it already exists.
 */
async function phases(dataDir: string, goldCacheFile: string): Promise<Record<string, number>> {
  const t: Record<string, number> = {};
  let mark = performance.now();
  const lap = (name: string) => {
    const now = performance.now();
    t[name] = (now - mark) / 1000;
    mark = now;
  };
  t["process start (node, to this script)"] = mark / 1000;
  const { discoverDatabaseRoots, verifyDatabaseFiles } = await import("../lib/data/databases.ts");
  const { loadDataset, databaseRootsOf } = await import("../lib/data/dataset.ts");
  const { Oracle } = await import("../lib/oracle/oracle.ts");
  const { createExecutor } = await import("../lib/oracle/executors.ts");
  const { readPredictions } = await import("../lib/oracle/predictions.ts");
  const { spiderResultEq } = await import("../lib/oracle/compare.ts");
  const { goldOrderMatters, prepareSpiderGold } = await import("../lib/oracle/protocol.ts");
  const { jobsForWork } = await import("../lib/cli/eval.ts");
  lap("imports (data, oracle and eval modules)");
  const discovery = await discoverDatabaseRoots(databaseRootsOf("spider", dataDir));
  lap("database discovery + SHA-256 of every file");
  verifyDatabaseFiles(discovery);
  lap("database file checks (header, schema page)");
  const data = await loadDataset({ name: "spider", dir: dataDir }); // hashes memoised: JSON, schemas, checks again
  const predictions = readPredictions(PRED, "utf8", data.examples.length);
  lap("dataset load (JSON, schemas; checks again)");
  const jobs = jobsForWork(data.examples.reduce((n, e) => n + (data.databases.get(e.dbId)?.allPaths.length ?? 0), 0)); // as merit eval's default
  const executor = createExecutor("sqlite", { jobs, timeoutMs: 30_000 });
  const anyDb = [...data.databases.values()][0].canonicalPath;
  await Promise.all(Array.from({ length: jobs }, () => executor.execute({ db: anyDb, sql: "SELECT 1" })));
  lap(`SQL worker start (until each of ${jobs} answers)`);
  const oracle = new Oracle({ dataset: "spider", databases: data.databases, protocol: "official", executor, goldCacheFile });
  const scoreable = data.examples.filter((e) => data.databases.has(e.dbId));
  // Gold on every file the scoring will reach first (the canonical one; variants are scored below).
  await Promise.all(scoreable.map((e) => oracle.goldRows(e)));
  lap(`gold on canonical files (${oracle.gold.diskHits > 0 ? "from the cache file" : "executed"})`);
  const verdicts = await Promise.all(data.examples.map((e, i) => oracle.score(e, predictions.lines[i])));
  lap("predictions executed + compared (+ gold on variants)");
  const correct = verdicts.filter((v) => v.status === "CORRECT").length;
  // Comparison alone, in-process, on the rows the predictions returned on their last database.
  const pairs: Array<[Awaited<ReturnType<typeof oracle.goldRows>>, NonNullable<(typeof verdicts)[number]["predictedRows"]>, boolean]> = [];
  for (let i = 0; i < data.examples.length; i++) {
    const rows = verdicts[i].predictedRows;
    if (rows === null || data.databases.get(data.examples[i].dbId)?.allPaths.length !== 1) continue;
    pairs.push([await oracle.goldRows(data.examples[i]), rows, goldOrderMatters(prepareSpiderGold(data.examples[i].goldSql, "official"))]);
  }
  mark = performance.now();
  for (const [gold, rows, order] of pairs) if (gold) spiderResultEq(gold, rows, order);
  lap("  of which comparison (re-run in-process)");
  await oracle.close();
  lap("close (workers killed, cache written)");
  return { ...t, correct, executions: verdicts.reduce((n, v) => n + v.dbExecutions, 0) };
}

/** The oracle's cost per repair attempt: warm oracle (workers up, gold cached), each attempt scored on every file of its database. */
async function attempts(dataDir: string): Promise<Record<string, number>> {
  const { loadDataset } = await import("../lib/data/dataset.ts");
  const { Oracle } = await import("../lib/oracle/oracle.ts");
  const { readPredictions } = await import("../lib/oracle/predictions.ts");
  const data = await loadDataset({ name: "spider", dir: dataDir });
  const lines = readPredictions(PRED, "utf8", data.examples.length).lines;
  const { defaultJobs } = await import("../lib/cli/eval.ts");
  const jobs = defaultJobs();
  const oracle = new Oracle({ dataset: "spider", databases: data.databases, protocol: "official", jobs, timeoutMs: 30_000 });
  const examples = data.examples.map((e, i) => [e, lines[i]] as const).filter(([e]) => data.databases.has(e.dbId));
  await Promise.all(examples.map(([e, p]) => oracle.score(e, p))); // warm: gold cached, workers up, JIT warm
  let start = performance.now();
  const verdicts = await Promise.all(examples.map(([e, p]) => oracle.score(e, p)));
  const concurrent = (performance.now() - start) / examples.length;
  const sample = examples.filter((_, i) => i % 10 === 0);
  start = performance.now();
  for (const [e, p] of sample) await oracle.score(e, p);
  const serial = (performance.now() - start) / sample.length;
  await oracle.close();
  return { attempts: examples.length, jobs, concurrentMs: concurrent, serialMs: serial, executionsPerAttempt: verdicts.reduce((n, v) => n + v.dbExecutions, 0) / examples.length };
}

if (values.phases !== undefined) {
  const result = values.phases.startsWith("attempts:") ? await attempts(values.phases.slice(9)) : await phases(values.phases, values["gold-cache"]!);
  console.log(JSON.stringify(result));
  process.exit(0);
}

/**
 * CPU seconds (user + system) of a command and every process under it, from the kernel's rusage of
 * waited-for children (SQL workers are reaped by merit eval, so they count): load moves wall times,
 * much less CPU time.
 */
const CPU_WRAPPER =
  "import resource, subprocess, sys, time; t = time.perf_counter(); rc = subprocess.run(sys.argv[1:]).returncode; w = time.perf_counter() - t; " +
  "r = resource.getrusage(resource.RUSAGE_CHILDREN); print(f'WALL {w:.4f} CPU {r.ru_utime + r.ru_stime:.4f}', file=sys.stderr); sys.exit(rc)";

function run(cmd: string, args: string[]): { seconds: number; cpu: number; last: string } {
  // Wall time is taken inside the wrapper, around the command alone (the wrapper's own start is not counted).
  const r = spawnSync(values.python!, ["-c", CPU_WRAPPER, cmd, ...args], { cwd: ROOT, encoding: "utf8", maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${r.status}: ${r.stderr.trim().split("\n").slice(-3).join(" | ")}`);
  const m = /WALL (\S+) CPU (\S+)\s*$/.exec(r.stderr);
  return { seconds: Number(m?.[1] ?? NaN), cpu: Number(m?.[2] ?? NaN), last: r.stdout.trim().split("\n").at(-1) ?? "" };
}

const tmp = mkdtempSync(join(tmpdir(), "merit-bench-oracle-"));
const official = values.official && existsSync(join(values.official, "exec_eval.py")) ? values.official : null;
const evaluatorLabel = official
  ? "official test-suite exec_eval.py + parse.py (evaluation.py's process_sql parsing not run: a lower bound)"
  : "reference_check.py (independent re-implementation, not the official code)";
const evaluatorArgs = (dbRoot: string) => ["bench/evaluator_harness.py", ...(official ? ["--official", official] : ["--reference"]), "--pred", PRED, "--db-root", dbRoot];
const kitArgs = (dataDir: string, cache: string) => [join(ROOT, "lib/bin.mjs"), "eval", "--dataset", "spider", "--data", dataDir, "--pred", PRED, "--gold-cache", cache];

/** Alternating whole-process timings: kit cold, kit warm, evaluator; medians. */
function sideBySide(dataDir: string, reps: number, baseline?: string) {
  const warmCache = join(tmp, `warm-${Math.random().toString(36).slice(2)}.sqlite`);
  run(process.execPath, kitArgs(dataDir, warmCache)); // fills the warm cache (untimed)
  const cold: number[] = [];
  const warm: number[] = [];
  const ref: number[] = [];
  const cpu = { cold: [] as number[], warm: [] as number[], ref: [] as number[] };
  const before = { wall: [] as number[], cpu: [] as number[] };
  let lines = { kit: "", ref: "" };
  for (let rep = 0; rep < reps; rep++) {
    const coldCache = join(tmp, `cold-${rep}.sqlite`);
    const c = run(process.execPath, kitArgs(dataDir, coldCache));
    rmSync(coldCache, { force: true });
    rmSync(coldCache + "-wal", { force: true });
    rmSync(coldCache + "-shm", { force: true });
    const w = run(process.execPath, kitArgs(dataDir, warmCache));
    const r = run(values.python!, evaluatorArgs(join(dataDir, "database")));
    if (baseline) {
      const b = run(process.execPath, [join(baseline, "lib/bin.mjs"), "eval", "--dataset", "spider", "--data", dataDir, "--pred", PRED]);
      before.wall.push(b.seconds);
      before.cpu.push(b.cpu);
    }
    cold.push(c.seconds);
    warm.push(w.seconds);
    ref.push(r.seconds);
    cpu.cold.push(c.cpu);
    cpu.warm.push(w.cpu);
    cpu.ref.push(r.cpu);
    lines = { kit: w.last, ref: r.last };
  }
  return { cold: median(cold), warm: median(warm), ref: median(ref), cpu: { cold: median(cpu.cold), warm: median(cpu.warm), ref: median(cpu.ref) }, before: baseline ? { wall: median(before.wall), cpu: median(before.cpu) } : null, lines };
}

if (values["side-by-side"]) {
  const result = sideBySide(SPIDER, Number(values.reps));
  rmSync(tmp, { recursive: true, force: true });
  console.log(JSON.stringify({ evaluator: evaluatorLabel, python: values.python, reps: Number(values.reps), ...result }));
  process.exit(0);
}

function printRows(r: ReturnType<typeof sideBySide>, target: string): void {
  console.log(`  ${"".padEnd(34)} wall      ratio   CPU (all processes)   ratio`);
  const row = (label: string, wall: number, cpu: number) =>
    console.log(`  ${label.padEnd(34)} ${s(wall).padStart(7)}   ${(wall / r.ref).toFixed(2).padStart(5)}   ${s(cpu).padStart(7)}               ${(cpu / r.cpu.ref).toFixed(2)}`);
  if (r.before) row("kit before (--baseline)", r.before.wall, r.before.cpu);
  row("kit merit eval, cold gold cache", r.cold, r.cpu.cold);
  row("kit merit eval, warm gold cache", r.warm, r.cpu.warm);
  console.log(`  ${"evaluator".padEnd(34)} ${s(r.ref).padStart(7)}           ${s(r.cpu.ref).padStart(7)}   ${target}`);
}

function childPhases(arg: string, goldCache?: string): Record<string, number> {
  const r = spawnSync(process.execPath, [SELF, "--phases", arg, ...(goldCache ? ["--gold-cache", goldCache] : [])], { cwd: ROOT, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`breakdown child failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").at(-1)!);
}

function medianPhases(arg: string, reps: number, goldCache: (rep: number) => string | undefined): Record<string, number> {
  const runs = Array.from({ length: reps }, (_, rep) => childPhases(arg, goldCache(rep)));
  return Object.fromEntries(Object.keys(runs[0]).map((k) => [k, median(runs.map((r) => r[k]))]));
}

const reps = Number(values.reps);
const suiteReps = Number(values["suite-reps"]);
console.log(`oracle bench: ${PRED.slice(ROOT.length)} (972 scoreable of 1,034; protocol official), median of ${reps}, alternating`);
console.log(`machine: ${availableParallelism()} cores (${cpus()[0]?.model.trim()}), node ${process.version}; load average at start ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
console.log(`evaluator: ${evaluatorLabel}, run by ${values.python}`);

// 1. Whole process, side by side.
const one = sideBySide(SPIDER, reps, values.baseline);
const help = median(Array.from({ length: reps }, () => run(process.execPath, [join(ROOT, "lib/bin.mjs"), "eval", "--help"]).seconds));
const bare = median(Array.from({ length: reps }, () => run(process.execPath, ["-e", "1"]).seconds));
console.log("\nwhole process, Spider dev (one .sqlite per database)");
printRows(one, "(target ≤ 0.20)");
console.log(`  kit: ${one.lines.kit} | evaluator: ${one.lines.ref}`);
console.log(`  start-up: node -e 1 ${s(bare)}, merit eval --help ${s(help)} (node + eval's module graph)`);

// 2. Breakdown (fresh child processes, cold and warm gold cache).
const warmFile = join(tmp, "phases-warm.sqlite");
childPhases(SPIDER, warmFile); // fills it
const coldPhases = medianPhases(SPIDER, reps, (rep) => join(tmp, `phases-cold-${rep}.sqlite`));
const warmPhases = medianPhases(SPIDER, reps, () => warmFile);
console.log("\nbreakdown (same library calls as merit eval, in sequence; medians)        cold      warm");
for (const key of Object.keys(coldPhases)) {
  if (key === "correct" || key === "executions") continue;
  const warmKey = Object.keys(warmPhases).find((k) => k.split(" (")[0] === key.split(" (")[0]) ?? key;
  console.log(`  ${key.padEnd(70)} ${ms(coldPhases[key]).padStart(7)}   ${ms(warmPhases[warmKey] ?? NaN).padStart(7)}`);
}
console.log(`  SQL executions for the predictions: ${coldPhases.executions}; correct ${coldPhases.correct}`);

// 3. Test-suite layout.
const { buildTestSuiteLayout } = await import("./test-suite-layout.ts");
const layout = buildTestSuiteLayout(SPIDER, join(tmp, "test-suite"), Number(values.variants), 0);
const suite = sideBySide(layout.dir, suiteReps);
console.log(`\nwhole process, test-suite layout (${layout.databases} databases × ${values.variants} .sqlite files, rows shuffled, seed 0), median of ${suiteReps}`);
printRows(suite, "");
console.log(`  kit: ${suite.lines.kit} | evaluator: ${suite.lines.ref}`);

// 4. Per-attempt oracle cost at the grid's scale.
const per = medianPhases(`attempts:${layout.dir}`, Math.min(3, reps), () => undefined);
const decode = Number(values["decode-tok-s"]);
const tokens = Number(values["attempt-tokens"]);
const gpuMs = (n: number) => (1000 * n) / decode;
console.log(`\noracle per repair attempt (test-suite layout: each attempt on every .sqlite of its database; gold cached, ${per.jobs} SQL workers)`);
console.log(`  ${per.executionsPerAttempt.toFixed(2)} SQL executions per attempt; ${per.concurrentMs.toFixed(2)} ms per attempt with attempts concurrent (a grid's streams), ${per.serialMs.toFixed(2)} ms one at a time`);
console.log(`  GPU time per attempt, ASSUMED aggregate decode ${decode} tok/s (a 7B model, many streams): ${gpuMs(tokens).toFixed(1)} ms at ${tokens} tokens, ${gpuMs(MAX_OUTPUT_TOKENS).toFixed(1)} ms at max_output_tokens ${MAX_OUTPUT_TOKENS}`);
console.log(`  oracle / GPU: ${((100 * per.concurrentMs) / gpuMs(tokens)).toFixed(1)} % at ${tokens} tokens, ${((100 * per.concurrentMs) / gpuMs(MAX_OUTPUT_TOKENS)).toFixed(1)} % at ${MAX_OUTPUT_TOKENS} (target < 5 %)`);
console.log(`\nload average at end: ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
rmSync(tmp, { recursive: true, force: true });
