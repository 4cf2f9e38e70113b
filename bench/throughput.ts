/**
 * Throughput of one fixed grid slice on a realistic-size model (bench/README.md; issue "the paper's
 * grid in hours"): N streams run concurrently, each repairing its own failed Spider queries (the
 * DeepSeek-Coder-7B predictions that the MERIT-protocol oracle scores wrong, in dev order) for K
 * steps with the kit's repair prompt; each step's prompt carries every earlier attempt, the model's
 * own outputs included, as an `iterative` episode does (no memory, no oracle call between steps).
 * Printed side by side, one run: deterministic mode, throughput mode, `llama-server --parallel N`
 * (token-id prompts to /completion, same decoding) and `llama-batched-bench` at the same N (the bare
 * anchor); then the estimated wall time of the full `make reproduce` grid from the measured rates.
 *
 *   node bench/throughput.ts [--model GGUF] [--streams 8] [--queries 12] [--steps 7]
 *     [--max-tokens 128] [--engines deterministic,throughput,server,batched-bench]
 *     [--gpu auto|false] [--llama-bin DIR] [--json FILE]
 *
 * llama.cpp tools: --llama-bin DIR, env MERIT_LLAMA_BIN, or the kit's `make llama-server` build.
 * Threads: MERIT_THREADS (or the kit's default choice) per context, and the same count for the
 * llama.cpp tools. Numbers are measured, never asserted (DESIGN.md "bench/").
 * @module
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { LlamaModel, Token } from "node-llama-cpp";
import { loadDataset } from "../lib/data/index.ts";
import type { Example } from "../lib/data/types.ts";
import { engineRequest } from "../lib/llm/engines/index.ts";
import { createLlamaBackend, loadLlamaModel, type LlamaBackend, type LlamaMode } from "../lib/llm/llama-backend.ts";
import { chooseThreads, type GpuSetting } from "../lib/llm/llama-runtime.ts";
import { extractSql, singleStatement } from "../lib/oracle/extract-sql.ts";
import { Oracle } from "../lib/oracle/oracle.ts";
import { readPredictions } from "../lib/oracle/predictions.ts";
import { paperGridEstimate, PAPER_GRID } from "../lib/experiment/grid-plan.ts";
import { repairPrompt, type PromptAttempt } from "../lib/prompts.ts";
import { gridSeconds, sliceRates } from "./grid-estimate.ts";
import { benchModelPath } from "./make-model.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const MAX_INPUT = 4096; // METHOD.md §6.4
const PENALTY = 1.05; // METHOD.md §11.9
const SEED = 42;
/** The full `make reproduce` grid's tokens: the grid plan's calls with the paper's failures × the paper's tokens per call. */
const PAPER_GRID_TOKENS = (() => {
  const e = paperGridEstimate();
  return { calls: e.calls, prompt: e.promptTokens, generated: e.generatedTokens };
})();

class UsageError extends Error {}

const USAGE = "usage: node bench/throughput.ts [--model GGUF] [--streams N] [--queries N] [--steps K] [--max-tokens N] [--engines deterministic,throughput,server,batched-bench] [--gpu auto|false] [--llama-bin DIR] [--json FILE]";

const FLAGS = {
  model: { type: "string" },
  streams: { type: "string", default: "8" },
  queries: { type: "string", default: "12" },
  steps: { type: "string", default: "7" },
  "max-tokens": { type: "string", default: "128" },
  engines: { type: "string", default: "deterministic,throughput,server,batched-bench" },
  gpu: { type: "string", default: "false" },
  "llama-bin": { type: "string" },
  json: { type: "string" },
} as const;

function parseFlags() {
  try {
    return parseArgs({ options: FLAGS }).values;
  } catch (error) {
    throw new UsageError(`${(error as Error).message}; ${USAGE}`);
  }
}

function options() {
  const values = parseFlags();
  const int = (name: "streams" | "queries" | "steps" | "max-tokens", max: number) => {
    const n = Number(values[name]);
    if (!Number.isInteger(n) || n < 1 || n > max) throw new UsageError(`--${name} must be an integer in 1..${max}, got "${values[name]}"`);
    return n;
  };
  const engines = values.engines!.split(",").filter(Boolean);
  for (const e of engines) if (!["deterministic", "throughput", "server", "batched-bench"].includes(e)) throw new UsageError(`--engines: unknown engine "${e}"; choose from deterministic,throughput,server,batched-bench`);
  if (values.gpu !== "auto" && values.gpu !== "false") throw new UsageError(`--gpu must be auto or false, got "${values.gpu}"`);
  const model = values.model ?? benchModelPath("0.5b", "q8_0");
  if (!existsSync(model)) throw new UsageError(`--model ${model} does not exist; run \`make bench-model\` (or node bench/make-model.ts) first`);
  return {
    model,
    streams: int("streams", 256),
    queries: int("queries", 100),
    steps: int("steps", 20),
    maxTokens: int("max-tokens", 512),
    engines,
    gpu: (values.gpu === "auto" ? "auto" : false) as GpuSetting,
    llamaBin: values["llama-bin"] ?? llamaBinDir(values.gpu === "auto" ? "auto" : false),
    json: values.json,
  };
}
type Options = ReturnType<typeof options>;

/**
 * The directory holding `llama-server` and `llama-batched-bench`: env MERIT_LLAMA_BIN, else the
 * newest kit build in the cache folder (`make llama-server`: <cache>/merit-kit/llama.cpp-<tag>-<cpu-VARIANT|cuda>/build/bin,
 * a CUDA build preferred on a GPU), else null.
 */
function llamaBinDir(gpu: GpuSetting): string | null {
  if (process.env.MERIT_LLAMA_BIN) return process.env.MERIT_LLAMA_BIN;
  const cache = join(process.env.XDG_CACHE_HOME ?? join(os.homedir(), ".cache"), "merit-kit");
  if (!existsSync(cache)) return null;
  const builds = readdirSync(cache)
    .filter((d) => d.startsWith("llama.cpp-") && existsSync(join(cache, d, "build/bin/llama-server")))
    .sort((a, b) => Number(gpu !== false && b.endsWith("-cuda")) - Number(gpu !== false && a.endsWith("-cuda")) || (a < b ? 1 : -1));
  return builds.length > 0 ? join(cache, builds[0], "build/bin") : null;
}

interface Query {
  example: Example;
  schema: string;
  initialSql: string;
  status: string;
  dbError: string | null;
}

/** The first streams × queries DeepSeek predictions the MERIT-protocol oracle scores wrong, dealt to streams in order. */
async function failedQueries(count: number): Promise<Query[]> {
  const dataset = await loadDataset({ name: "spider", dir: join(ROOT, "data/spider") });
  const predictions = readPredictions(join(ROOT, "data/predictions/spider_dev__Deepseek-Coder-7B.sql"), "utf8", dataset.examples.length);
  const oracle = new Oracle({ dataset: "spider", databases: dataset.databases, protocol: "merit", jobs: 2 });
  const found: Query[] = [];
  try {
    for (let i = 0; i < dataset.examples.length && found.length < count; i++) {
      const example = dataset.examples[i];
      const sql = singleStatement(predictions.lines[i]);
      const verdict = await oracle.score(example, sql);
      if (verdict.oracleCorrect !== false) continue;
      found.push({ example, schema: dataset.schemas.get(example.dbId)!, initialSql: sql, status: verdict.status, dbError: verdict.dbError });
    }
  } finally {
    await oracle.close();
  }
  if (found.length < count) throw new UsageError(`only ${found.length} failed queries in Spider dev; lower --streams × --queries`);
  return found;
}

interface Generation {
  promptTokens: number;
  outputTokens: number;
  text: string;
}
type Generate = (prompt: Token[]) => Promise<Generation>;

interface Measured {
  engine: string;
  wallS: number;
  calls: number;
  failedCalls: number;
  promptTokens: number;
  generatedTokens: number;
  /** CPU seconds (user + system) of the process doing the inference, null when unknown. */
  cpuS: number | null;
  /** Throughput mode: batches, and wall seconds in llama.cpp's decode vs the serialised sampling. */
  decoder?: { batches: number; decodeS: number; sampleS: number };
  note?: string;
}

/** Runs the slice: streams concurrently, each query's K steps in order, each step's prompt with every earlier attempt. */
async function runSlice(engine: string, queries: Query[], o: Options, tokenize: (text: string) => Token[], generate: Generate): Promise<Measured> {
  const m: Measured = { engine, wallS: 0, calls: 0, failedCalls: 0, promptTokens: 0, generatedTokens: 0, cpuS: null };
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: o.streams }, async (_, s) => {
      for (const q of queries.slice(s * o.queries, (s + 1) * o.queries)) {
        const attempts: PromptAttempt[] = [{ sql: q.initialSql, status: q.status, dbError: q.dbError }];
        for (let k = 0; k < o.steps; k++) {
          const text = repairPrompt({ dataset: "spider", schema: q.schema, question: q.example.question, evidence: "", positives: [], negatives: [], reflections: [], attempts, currentErrorType: "Unknown" });
          try {
            const g = await generate(tokenize(text));
            m.promptTokens += g.promptTokens;
            m.generatedTokens += g.outputTokens;
            attempts.push({ sql: extractSql(g.text), status: q.status, dbError: q.dbError });
          } catch (error) {
            m.failedCalls++;
            m.note = `first failure: ${(error as Error).message.slice(0, 160)}`;
            attempts.push({ sql: "", status: q.status, dbError: q.dbError });
          }
          m.calls++;
        }
      }
    }),
  );
  m.wallS = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  m.cpuS = (cpu.user + cpu.system) / 1e6;
  return m;
}

async function kitEngine(mode: LlamaMode, model: LlamaModel, queries: Query[], o: Options, threads: number | undefined): Promise<Measured> {
  const backend: LlamaBackend = await createLlamaBackend({ modelPath: o.model, modelHash: "bench", loadedModel: model, gpu: o.gpu, sequences: o.streams, mode, threads, maxInputTokens: MAX_INPUT, maxOutputTokensLimit: o.maxTokens, repetitionPenalty: PENALTY, seed: SEED });
  try {
    const measured = await runSlice(mode, queries, o, (t) => tokenizeUser(backend, t), async (prompt) => {
      const output = await backend.generateIds(prompt, o.maxTokens);
      const ended = output.length > 0 && model.isEogToken(output[output.length - 1]);
      return { promptTokens: prompt.length, outputTokens: output.length, text: model.detokenize(ended ? output.slice(0, -1) : output, false) };
    });
    const stats = backend.batched?.stats;
    if (stats) measured.decoder = { batches: stats.batches, decodeS: stats.decodeMs / 1000, sampleS: stats.sampleMs / 1000 };
    return measured;
  } finally {
    await backend.close();
  }
}

/** Chat-templated, left-truncated prompt ids, as the backend evaluates them. */
function tokenizeUser(backend: LlamaBackend, userMessage: string): Token[] {
  return backend.promptTokens(userMessage).tokens;
}

/** CPU seconds (utime + stime) of a live process, from /proc (Linux), else null. */
function procCpuS(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100; // USER_HZ = 100 on Linux
  } catch {
    return null;
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** `llama-server --parallel N` on 127.0.0.1 in its own process group, fed the kit's prompt token ids. */
async function serverEngine(template: LlamaBackend, queries: Query[], o: Options, threads: number): Promise<Measured> {
  const bin = join(o.llamaBin!, "llama-server");
  const port = await freePort();
  const ctxPerSlot = MAX_INPUT + o.maxTokens;
  const args = ["-m", o.model, "--host", "127.0.0.1", "--port", String(port), "-c", String(ctxPerSlot * o.streams), "-np", String(o.streams), "-t", String(threads), "-fa", "off", "--no-webui", "-ngl", o.gpu === false ? "0" : "999", "--seed", String(SEED)];
  const child: ChildProcess = spawn(bin, args, { detached: true, stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  child.stderr!.on("data", (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000)));
  const stop = () => {
    if (child.exitCode === null && child.pid) {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        /* already gone */
      }
    }
  };
  process.once("exit", stop);
  try {
    const base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 300_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`llama-server exited with ${child.exitCode}: ${log.split("\n").slice(-5).join(" | ")}`);
      const ok = await fetch(`${base}/health`).then((r) => r.ok, () => false);
      if (ok) break;
      if (Date.now() > deadline) throw new Error("llama-server did not become healthy in 300 s");
      await new Promise((r) => setTimeout(r, 250));
    }
    const serverCpu = () => procCpuS(child.pid!);
    const cpuBefore = serverCpu();
    const measured = await runSlice("server", queries, o, (t) => tokenizeUser(template, t), async (prompt) => {
      // The kit's own llama.cpp request form (lib/llm/engine-request.ts): the same fields the
      // OpenAI-compatible backend sends, including the parser override that avoids HTTP 500s.
      const form = engineRequest("llama.cpp", { repetitionPenalty: PENALTY, seed: SEED, contextSize: ctxPerSlot, model: "bench" });
      const response = await fetch(`${base}${form.path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(form.body(prompt, o.maxTokens)),
      });
      const json = (await response.json()) as { error?: { message?: string } };
      if (!response.ok) throw new Error(`HTTP ${response.status}: ${json.error?.message ?? ""}`);
      const answer = form.parse(json);
      const tokens = answer.output;
      const body = { tokens_evaluated: answer.promptTokens, tokens_predicted: answer.outputTokens, content: undefined as string | undefined };
      return { promptTokens: body.tokens_evaluated ?? prompt.length, outputTokens: body.tokens_predicted ?? tokens.length, text: body.content ?? template.model.detokenize(tokens as Token[], false) };
    });
    // The server's own CPU time (the kit process only waits on HTTP here).
    const cpuAfter = serverCpu();
    measured.cpuS = cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore;
    return measured;
  } finally {
    stop();
    process.removeListener("exit", stop);
  }
}

interface BatchedBenchRow {
  pp: number;
  tg: number;
  b: number;
  ppTokS: number;
  tgTokS: number;
  totalTokS: number;
  wallS: number;
}

interface BatchedBench {
  rows: BatchedBenchRow[];
  /** CPU seconds of the whole llama-batched-bench process (all its rows, model load included). */
  cpuS: number | null;
}

/** `llama-batched-bench` at 1 and N sequences with the slice's mean prompt length and the output cap. */
function batchedBench(o: Options, threads: number, promptTokens: number): BatchedBench {
  const bin = join(o.llamaBin!, "llama-batched-bench");
  const npl = o.streams === 1 ? "1" : `1,${o.streams}`;
  const args = ["-m", o.model, "-c", String((promptTokens + o.maxTokens) * o.streams + 256), "-b", "2048", "-ub", "512", "-npp", String(promptTokens), "-ntg", String(o.maxTokens), "-npl", npl, "-t", String(threads), "-fa", "off", "-ngl", o.gpu === false ? "0" : "999"];
  // Run under bash so its children's CPU ticks (cutime + cstime of /proc/<bash>/stat) can be read afterwards.
  const script = 'bench="$1"; shift; "$bench" "$@"; rc=$?; read -r -a s < <(cut -d")" -f2- /proc/$$/stat); echo "CHILD_CPU_TICKS $(( s[13] + s[14] ))" >&2; exit $rc';
  const run = spawnSync("bash", ["-c", script, "_", bin, ...args], { encoding: "utf8", timeout: 900_000 });
  if (run.status !== 0) throw new Error(`llama-batched-bench failed (${run.status}): ${(run.stderr ?? "").split("\n").slice(-4).join(" | ")}`);
  const rows: BatchedBenchRow[] = [];
  for (const line of `${run.stdout}\n${run.stderr}`.split("\n")) {
    const cells = line.split("|").map((c) => c.trim()).filter(Boolean);
    if (cells.length !== 10 || !/^\d+$/.test(cells[0])) continue;
    const n = cells.map(Number);
    rows.push({ pp: n[0], tg: n[1], b: n[2], ppTokS: n[5], tgTokS: n[7], wallS: n[8], totalTokS: n[9] });
  }
  if (rows.length === 0) throw new Error("llama-batched-bench printed no result table");
  const ticks = /CHILD_CPU_TICKS (\d+)/.exec(run.stderr ?? "")?.[1];
  return { rows, cpuS: ticks === undefined ? null : Number(ticks) / 100 };
}

const fmt = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : "—");
const duration = (s: number) => (s >= 172800 ? `${fmt(s / 86400)} days` : s >= 7200 ? `${fmt(s / 3600)} h` : `${fmt(s / 60)} min`);

async function main(): Promise<void> {
  const o = options();
  const threads = chooseThreads(1).threads; // one context's threads: what throughput mode and the tools get
  const load0 = os.loadavg()[0];
  process.stderr.write(`throughput: ${o.streams} streams × ${o.queries} queries × K=${o.steps}, ≤ ${o.maxTokens} generated tokens, model ${o.model}\n`);
  const queries = await failedQueries(o.streams * o.queries);
  const model = await loadLlamaModel(o.model, o.gpu);
  const results: Measured[] = [];
  let bench: BatchedBench | null = null;
  const skipped: string[] = [];
  const template = await createLlamaBackend({ modelPath: o.model, modelHash: "bench", loadedModel: model, gpu: o.gpu, maxInputTokens: MAX_INPUT, maxOutputTokensLimit: o.maxTokens, log: () => {} });
  try {
    for (const engine of o.engines) {
      process.stderr.write(`throughput: running ${engine} …\n`);
      if (engine === "deterministic" || engine === "throughput") {
        // Deterministic mode's N contexts get the kit's default split unless MERIT_THREADS is set.
        results.push(await kitEngine(engine, model, queries, o, undefined));
      } else if (!o.llamaBin || !existsSync(join(o.llamaBin, engine === "server" ? "llama-server" : "llama-batched-bench"))) {
        skipped.push(`${engine}: binary not found (build it with \`make llama-server\` or pass --llama-bin DIR)`);
      } else if (engine === "server") {
        results.push(await serverEngine(template, queries, o, threads));
      } else {
        const kit = results.find((r) => r.calls > 0);
        const meanPrompt = kit ? Math.round(kit.promptTokens / kit.calls) : 512;
        bench = batchedBench(o, threads, meanPrompt);
      }
      const last = results[results.length - 1];
      if (last && last.engine === engine) process.stderr.write(`throughput:   ${engine}: ${fmt(last.wallS)} s, ${last.calls} calls\n`);
    }
  } finally {
    await template.close();
    await model.dispose();
  }

  const anchor = bench?.rows.find((r) => r.b === o.streams) ?? null;
  const header = ["engine", "N", "calls", "failed", "wall s", "CPU s", "prompt tok", "gen tok", "prompt tok/s", "gen tok/s", "total tok/s", "tok per CPU s"];
  const rows = results.map((r) => [r.engine, String(o.streams), String(r.calls), String(r.failedCalls), fmt(r.wallS), r.cpuS === null ? "—" : fmt(r.cpuS), String(r.promptTokens), String(r.generatedTokens), fmt(r.promptTokens / r.wallS), fmt(r.generatedTokens / r.wallS), fmt((r.promptTokens + r.generatedTokens) / r.wallS), r.cpuS ? fmt((r.promptTokens + r.generatedTokens) / r.cpuS) : "—"]);
  for (const row of bench?.rows ?? []) rows.push([`llama-batched-bench (pp ${row.pp}, tg ${row.tg})`, String(row.b), "—", "—", fmt(row.wallS), "—", String(row.pp * row.b), String(row.tg * row.b), fmt(row.ppTokS), fmt(row.tgTokS), fmt(row.totalTokS), "—"]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) => "| " + r.map((c, i) => c.padEnd(widths[i])).join(" | ") + " |";
  console.log(line(header));
  console.log("|" + widths.map((w) => "-".repeat(w + 2)).join("|") + "|");
  for (const r of rows) console.log(line(r));

  const total = (r: Measured) => (r.promptTokens + r.generatedTokens) / r.wallS;
  const thr = results.find((r) => r.engine === "throughput");
  const det = results.find((r) => r.engine === "deterministic");
  const srv = results.find((r) => r.engine === "server");
  const ratios: Record<string, number> = {};
  if (thr && anchor) ratios.throughput_vs_batched_bench = total(thr) / anchor.totalTokS;
  if (thr && det) ratios.throughput_vs_deterministic = total(thr) / total(det);
  if (thr && srv) ratios.kit_overhead_vs_server = srv.wallS > 0 ? (thr.wallS / srv.wallS) * ((srv.promptTokens + srv.generatedTokens) / (thr.promptTokens + thr.generatedTokens)) - 1 : NaN;
  console.log("");
  if (bench?.cpuS) {
    const benchTokens = bench.rows.reduce((n, r) => n + (r.pp + r.tg) * r.b, 0);
    const benchWall = bench.rows.reduce((n, r) => n + r.wallS, 0);
    // Model load and warm-up included in the CPU time; a small overestimate of the anchor's cost.
    console.log(`llama-batched-bench: ${fmt(bench.cpuS)} CPU s for ${benchTokens} tokens in ${fmt(benchWall)} s of runs (all rows): ${fmt(benchTokens / bench.cpuS)} tok per CPU s`);
    if (thr?.cpuS) ratios.throughput_vs_batched_bench_cpu = (thr.promptTokens + thr.generatedTokens) / thr.cpuS / (benchTokens / bench.cpuS);
  }
  if (ratios.throughput_vs_batched_bench_cpu !== undefined) console.log(`throughput mode / llama-batched-bench tokens per CPU second: ${fmt(ratios.throughput_vs_batched_bench_cpu, 2)}`);
  if (ratios.throughput_vs_batched_bench !== undefined) console.log(`throughput mode / llama-batched-bench total tok/s at N=${o.streams}: ${fmt(ratios.throughput_vs_batched_bench, 2)} (target ≥ 0.9)`);
  if (ratios.throughput_vs_deterministic !== undefined) console.log(`throughput mode / deterministic mode total tok/s: ${fmt(ratios.throughput_vs_deterministic, 2)}`);
  if (thr?.cpuS && srv?.cpuS) ratios.kit_cpu_overhead_vs_server = (thr.cpuS / (thr.promptTokens + thr.generatedTokens)) / (srv.cpuS / (srv.promptTokens + srv.generatedTokens)) - 1;
  if (ratios.kit_overhead_vs_server !== undefined) console.log(`kit overhead over llama-server (wall time per token, throughput mode): ${fmt(100 * ratios.kit_overhead_vs_server)} % (target ≤ 10 %)`);
  if (ratios.kit_cpu_overhead_vs_server !== undefined) console.log(`kit overhead over llama-server (CPU time per token, less sensitive to machine load): ${fmt(100 * ratios.kit_cpu_overhead_vs_server)} %`);

  // Full grid: time = f · (P·a + G·b), a and b = seconds per prompt / generated token from
  // llama-batched-bench at N, f fitted so the model reproduces each engine's measured wall time
  // (without the anchor: time proportional to prompt + generated tokens); bench/grid-estimate.ts.
  const estimates: Record<string, number> = {};
  const anchorRates = anchor ? { b: anchor.b, ppTokS: anchor.ppTokS, tgTokS: anchor.tgTokS } : null;
  for (const r of results) if (r.calls > 0) estimates[r.engine] = gridSeconds(PAPER_GRID_TOKENS, sliceRates(r, anchorRates));
  if (anchor) estimates["llama-batched-bench"] = gridSeconds(PAPER_GRID_TOKENS, { prefillTokS: anchor.ppTokS, decodeTokS: anchor.tgTokS });
  const perCall = PAPER_GRID.datasets.map((d) => `${d.dataset} ${fmt(d.tokensPerCall, 0)}`).join(", ");
  console.log(`\nestimated wall time of the full \`make reproduce\` grid (the grid plan's ${PAPER_GRID_TOKENS.calls.toLocaleString("en-US")} computed calls at most with the paper's failures, lib/experiment/grid-plan.ts paperGridEstimate: ${fmt(PAPER_GRID_TOKENS.prompt / 1e9, 2)} G prompt + ${fmt(PAPER_GRID_TOKENS.generated / 1e6)} M generated tokens at the paper's tokens per call, ${perCall}), on this machine at N=${o.streams}:`);
  for (const [engine, s] of Object.entries(estimates)) console.log(`  ${engine}: ${duration(s)}`);
  if (thr?.decoder) console.log(`throughput mode: ${thr.decoder.batches} batches; ${fmt(thr.decoder.decodeS)} s in llama.cpp's decode, ${fmt(thr.decoder.sampleS, 2)} s in the serialised sampling (${fmt((100 * thr.decoder.sampleS) / thr.wallS)} % of the wall time)`);
  for (const s of skipped) console.log(`skipped ${s}`);
  for (const r of results) if (r.note) console.log(`${r.engine}: ${r.failedCalls} failed calls; ${r.note}`);
  const load1 = os.loadavg()[0];
  console.log(`machine: ${os.availableParallelism()} CPUs, ${threads} thread(s) per context, gpu ${String(o.gpu)}; 1-min load average ${fmt(load0, 2)} before, ${fmt(load1, 2)} after`);

  if (o.json) {
    mkdirSync(dirname(o.json), { recursive: true });
    const report = { slice: { streams: o.streams, queries: o.queries, steps: o.steps, max_tokens: o.maxTokens, model: o.model, gpu: String(o.gpu) }, machine: { cpus: os.availableParallelism(), threads, load_before: load0, load_after: load1, platform: `${os.platform()} ${os.arch()}`, cpu: os.cpus()[0]?.model ?? "unknown", gpu_name: process.env.MERIT_BENCH_GPU_NAME ?? null }, results, batched_bench: bench, ratios, grid_estimate_s: estimates, skipped };
    writeFileSync(o.json, JSON.stringify(report, null, 2) + "\n");
    process.stderr.write(`throughput: wrote ${o.json}\n`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`throughput: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(error instanceof UsageError ? 2 : 1);
});
