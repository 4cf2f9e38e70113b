/**
 * The server path under load (bench/README.md; issue 23 §2): `merit grid` (in process) with N
 * concurrent streams — iterative and reflexion × N/2 stream seeds over the first `--limit` Spider dev
 * queries, every initial SQL "" so every query repairs, the tiny Qwen, 16 output tokens, K = 2 —
 * against S llama-servers with P slots each (`requests_per_url` P), then the same HTTP requests sent
 * raw (fetch, S × P at a time, no kit) to the same servers. Alternating, `--reps` times, printed side
 * by side: calls/s, p50/p99 latency of one call's HTTP request (first byte sent to last byte read),
 * and the kit's own overhead per call — (grid wall − raw wall) / calls, the time the kit adds beyond
 * the servers' answers, and the kit process's CPU time per call (prompt building, tokenising, SQL
 * scoring, journals, the call cache).
 *
 *   node bench/server-load.ts [--streams 32] [--limit 16] [--servers 2] [--parallel 4] [--reps 2]
 *
 * Needs `make llama-server` (or MERIT_LLAMA_SERVER). Numbers are measured, never asserted.
 * @module
 */
import { parseArgs } from "node:util";
import { startLlamaServer, type LlamaServer } from "../test/helpers/llama-server.ts";
import { cacheRows, computedCalls, repairEveryQueryCache, runServerGrid } from "../test/helpers/server-grid.ts";
import { tempDir, TINY_QWEN } from "../test/helpers/run-fixture.ts";

const { values } = parseArgs({
  options: { streams: { type: "string", default: "32" }, limit: { type: "string", default: "16" }, servers: { type: "string", default: "2" }, parallel: { type: "string", default: "4" }, reps: { type: "string", default: "2" } },
});
const STREAMS = Number(values.streams);
const LIMIT = Number(values.limit);
const SERVERS = Number(values.servers);
const PARALLEL = Number(values.parallel);
const REPS = Number(values.reps);
if (STREAMS % 2 !== 0 || STREAMS < 2) throw new Error("--streams must be even (iterative and reflexion × streams/2 seeds)");

interface Exchange {
  url: string;
  body: string;
  ms: number;
}

/** Every HTTP request the kit sends is timed to the end of its body and kept for the raw replay. */
const realFetch = globalThis.fetch;
let recorded: Exchange[] = [];
globalThis.fetch = async (input: string | URL | Request, init?: RequestInit) => {
  const started = performance.now();
  const response = await realFetch(input, init);
  const text = await response.text();
  recorded.push({ url: String(input), body: String(init?.body ?? ""), ms: performance.now() - started });
  return new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers });
};

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

const median = (xs: readonly number[]) => quantile([...xs].sort((a, b) => a - b), 0.5);

/** Sends `exchanges` raw, `concurrency` at a time, each to its recorded URL; wall ms and per-request ms. */
async function replay(exchanges: readonly Exchange[], concurrency: number): Promise<{ wallMs: number; ms: number[] }> {
  const ms: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < exchanges.length) {
      const e = exchanges[next++];
      const t = performance.now();
      const response = await realFetch(e.url, { method: "POST", headers: { "content-type": "application/json" }, body: e.body });
      await response.text();
      if (!response.ok) throw new Error(`replay: ${e.url} answered HTTP ${response.status}`);
      ms.push(performance.now() - t);
    }
  }));
  return { wallMs: performance.now() - started, ms };
}

const root = tempDir("bench-server-load");
const initialCache = await repairEveryQueryCache(root);
const servers: LlamaServer[] = await Promise.all(Array.from({ length: SERVERS }, () => startLlamaServer({ model: TINY_QWEN, parallel: PARALLEL })));
const rows: Array<Record<string, number>> = [];
try {
  for (let rep = 0; rep < REPS; rep++) {
    recorded = [];
    const cpu = process.cpuUsage();
    const started = performance.now();
    const run = await runServerGrid({
      root,
      name: `rep-${rep}`,
      initialCache,
      model: { base_urls: servers.map((s) => s.url), requests_per_url: PARALLEL },
      methods: "iterative,reflexion",
      seeds: Array.from({ length: STREAMS / 2 }, (_, i) => i).join(","),
      limit: LIMIT,
    });
    const gridMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    if (run.code !== 0) throw new Error(`grid failed: ${run.error?.message ?? run.err.join("\n")}`);
    const calls = cacheRows(run.cache).size;
    if (computedCalls(run.err) !== calls || recorded.length !== calls) throw new Error(`expected ${calls} calls, computed ${computedCalls(run.err)}, sent ${recorded.length}`);
    const gridLatency = recorded.map((e) => e.ms).sort((a, b) => a - b);
    const raw = await replay(recorded, SERVERS * PARALLEL);
    const rawLatency = [...raw.ms].sort((a, b) => a - b);
    rows.push({
      calls,
      gridCallsPerS: calls / (gridMs / 1000),
      rawCallsPerS: calls / (raw.wallMs / 1000),
      gridP50: quantile(gridLatency, 0.5),
      gridP99: quantile(gridLatency, 0.99),
      rawP50: quantile(rawLatency, 0.5),
      rawP99: quantile(rawLatency, 0.99),
      overheadMsPerCall: (gridMs - raw.wallMs) / calls,
      gridInFlight: gridLatency.reduce((n, x) => n + x, 0) / gridMs,
      rawInFlight: raw.ms.reduce((n, x) => n + x, 0) / raw.wallMs,
      episodes: STREAMS * LIMIT,
      cpuMsPerCall: (used.user + used.system) / 1000 / calls,
    });
    process.stderr.write(`rep ${rep + 1}/${REPS}: ${calls} calls, grid ${(gridMs / 1000).toFixed(1)} s, raw ${(raw.wallMs / 1000).toFixed(1)} s\n`);
  }
} finally {
  for (const s of servers) await s.stop();
}

const m = (key: string) => median(rows.map((r) => r[key]));
const f = (x: number, d = 1) => x.toFixed(d);
console.log(`\nserver load: ${STREAMS} concurrent streams (iterative + reflexion × ${STREAMS / 2} seeds, ${LIMIT} queries each), ${SERVERS} llama-servers -np ${PARALLEL}, requests_per_url ${PARALLEL}; medians of ${REPS} alternating reps; ${m("calls")} distinct calls per grid\n`);
console.log("| | calls/s | p50 ms per call | p99 ms per call | mean requests in flight |");
console.log("| --- | --- | --- | --- | --- |");
console.log(`| merit grid (HTTP request of each call) | ${f(m("gridCallsPerS"), 2)} | ${f(m("gridP50"))} | ${f(m("gridP99"))} | ${f(m("gridInFlight"), 2)} |`);
console.log(`| the same requests raw, ${SERVERS * PARALLEL} at a time | ${f(m("rawCallsPerS"), 2)} | ${f(m("rawP50"))} | ${f(m("rawP99"))} | ${f(m("rawInFlight"), 2)} |`);
console.log(`\nkit overhead per call: ${f(m("overheadMsPerCall"))} ms of wall time beyond the raw requests' (grid/raw wall ${f(m("rawCallsPerS") / m("gridCallsPerS"), 2)}×); ${f(m("cpuMsPerCall"))} ms of the kit process's CPU per call (${m("episodes")} episodes, ${f(m("episodes") / m("calls"), 1)} per computed call: the rest are call-cache hits)`);
