// SLOW: starts real llama-server processes; its timeouts scale with the machine (test/helpers/budget.ts, README "Slow tests").
// A bad network between the kit and a server (issue 23 §2): `merit grid` (iterative + reflexion ×
// stream seeds 0, 1 on real Spider dev data) over two llama-servers, each behind a fault-injecting TCP
// proxy on loopback (test/helpers/fault-proxy.ts); the faults are switched on for server A's proxy,
// one kind per grid: delay + jitter, responses reset mid-body, a 10 s blackhole (accepts, never
// answers; the per-request timeout is 2 s). Every faulted grid completes with the undisturbed grid's
// call cache (same keys, same texts, each computed once) and run files byte for byte; every injected
// reset or blackholed request is one retried transient failure in the manifests' `transport` and in
// `merit report`'s note. Then both proxies blackhole mid-grid: the kit gives up, the grid fails, the
// calls it gave up on are not in the cache, and `--resume` asks them again and ends identical.
// Skips with a message when llama-server is not built.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reportCommand } from "../../lib/cli/report.ts";
import { startFaultProxy, type FaultProxy } from "../helpers/fault-proxy.ts";
import { LLAMA_SERVER_SKIP, startLlamaServer, type LlamaServer } from "../helpers/llama-server.ts";
import { cacheRows, computedCalls, repairEveryQueryCache, runFiles, runServerGrid, transportTotals, waitFor, type ServerGridRun } from "../helpers/server-grid.ts";
import { tempDir, TINY_QWEN } from "../helpers/run-fixture.ts";
import { budget } from "../helpers/budget.ts";

let root: string;
let initialCache: string;
let a: LlamaServer;
let b: LlamaServer;
let pa: FaultProxy;
let pb: FaultProxy;
let reference: ServerGridRun;
let referenceRows: Map<string, string>;

const grid = (name: string, opts: { resume?: boolean; whileRunning?: (cache: string) => Promise<void> } = {}) =>
  runServerGrid({
    root,
    name,
    initialCache,
    model: { base_urls: [pa.url, pb.url], requests_per_url: 2, request_timeout_s: 2, max_retries: 3 },
    methods: "iterative,reflexion",
    seeds: "0,1",
    limit: 4,
    ...opts,
  });

/** Requests that reached the servers through both proxies so far. */
const forwarded = () => pa.counters().forwarded + pb.counters().forwarded;

/** The grid finished, computed every distinct call once, and equals the undisturbed grid. */
function expectUndisturbedOutputs(run: ServerGridRun): void {
  expect(run.code, `${run.error?.message ?? ""}\n${run.err.join("\n")}`).toBe(0);
  const rows = cacheRows(run.cache);
  expect(rows).toEqual(referenceRows);
  expect(computedCalls(run.err)).toBe(rows.size);
  expect(runFiles(run.out)).toEqual(runFiles(reference.out));
}

describe.skipIf(LLAMA_SERVER_SKIP !== null)("a grid over two llama-servers with a bad network to one of them", () => {
  beforeAll(async () => {
    root = tempDir("server-faults");
    initialCache = await repairEveryQueryCache(root);
    [a, b] = await Promise.all([startLlamaServer({ model: TINY_QWEN, parallel: 2 }), startLlamaServer({ model: TINY_QWEN, parallel: 2 })]);
    [pa, pb] = await Promise.all([startFaultProxy(a.url, { seed: 1 }), startFaultProxy(b.url, { seed: 2 })]);
    reference = await grid("undisturbed");
    expect(reference.code, reference.err.join("\n")).toBe(0);
    referenceRows = cacheRows(reference.cache);
    expect(referenceRows.size).toBeGreaterThan(20);
    expect(transportTotals(reference.out).transient_retries).toBe(0);
  }, budget(240_000));
  afterEach(() => {
    for (const p of [pa, pb]) p?.set({ delayMs: 0, jitterMs: 0, resetEvery: 0, blackhole: false });
  });
  afterAll(async () => {
    await pa?.close();
    await pb?.close();
    await a?.stop();
    await b?.stop();
  });

  it("delay and jitter: the same outputs, nothing retried", async () => {
    pa.set({ delayMs: 20, jitterMs: 60 });
    const before = forwarded();
    const run = await grid("delay");
    expectUndisturbedOutputs(run);
    expect(pa.counters().delayedChunks).toBeGreaterThan(0);
    expect(forwarded() - before).toBe(referenceRows.size); // each call reached a server once
    expect(transportTotals(run.out).transient_retries).toBe(0);
    console.log(`fault delay+jitter: ${referenceRows.size} calls, ${pa.counters().delayedChunks} response chunks held 20–80 ms, ${forwarded() - before} requests reached the servers, 0 retried, outputs identical`);
  });

  it("responses reset mid-body: each cut call retried once, counted, and the same outputs", async () => {
    pa.set({ resetEvery: 2, resetAfterBytes: 300 });
    const resetsBefore = pa.counters().resets;
    const before = forwarded();
    const run = await grid("reset");
    expectUndisturbedOutputs(run);
    const resets = pa.counters().resets - resetsBefore;
    expect(resets).toBeGreaterThan(0);
    // A cut call reached a server twice (the answer it never got, then the retry); no other call did.
    expect(forwarded() - before).toBe(referenceRows.size + resets);
    expect(transportTotals(run.out).transient_retries).toBe(resets);
    expect(run.err.join("\n")).toContain(`${resets} transient server failure(s) retried`);
    console.log(`fault reset mid-response: ${referenceRows.size} calls, ${resets} response(s) cut after 300 bytes with RST, ${forwarded() - before} requests reached the servers, ${resets} retried, outputs identical`);
  });

  it("a 10 s blackhole: the requests time out, are retried on the other server, counted, and shown by the report", async () => {
    const before = pa.counters().blackholed;
    pa.blackholeAfter(3, 10_000); // from A's 4th request of this grid on, for 10 s
    const run = await grid("blackhole");
    expectUndisturbedOutputs(run);
    const blackholed = pa.counters().blackholed - before;
    expect(blackholed).toBeGreaterThan(0);
    const transport = transportTotals(run.out);
    expect(transport.transient_retries).toBe(blackholed);

    const lines: string[] = [];
    const dest = join(root, "blackhole-report");
    const code = await reportCommand.run([run.out, "--out", dest, "--resamples", "50", "--no-figures"], { out: (l) => lines.push(l), err: (l) => lines.push(l) });
    expect(code, lines.join("\n")).toBe(0);
    const note = `Server transport: ${blackholed} transient failure(s)`;
    expect(lines.join("\n")).toContain(note);
    expect(readFileSync(join(dest, "tables", "table1.md"), "utf8")).toContain(note);
    expect(JSON.parse(readFileSync(join(dest, "manifest.json"), "utf8")).transport).toEqual(transport);
    console.log(`fault 10 s blackhole: ${referenceRows.size} calls, ${blackholed} request(s) swallowed and timed out after 2 s, ${transport.transient_retries} retried on the other server, outputs identical`);
  }, budget(180_000));

  it("both servers blackholed: the kit gives up, caches nothing for it, and a resumed grid asks again and ends identical", async () => {
    // Each server answers 3 requests of this grid; every later one is swallowed, until switched off.
    pa.blackholeAfter(3);
    pb.blackholeAfter(3);
    const failed = await grid("give-up");
    expect(failed.code).not.toBe(0);
    expect(failed.error?.message).toMatch(/request failed after 4 attempt\(s\); last: .* timed out after 2000 ms/);
    // Every stream has stopped (its run lock released) before anything is read or resumed.
    const streams = () => readdirSync(failed.out).map((s) => join(failed.out, s));
    await waitFor(() => streams().every((s) => !existsSync(join(s, "run.lock"))), "every stream's run lock released");
    const stored = cacheRows(failed.cache);
    // What the cache holds are answers (the undisturbed grid's texts); the calls given up on are absent.
    expect(stored.size).toBe(6);
    expect(stored.size).toBeLessThan(referenceRows.size);
    for (const [key, text] of stored) expect(referenceRows.get(key), key).toBe(text);

    pa.set({ blackhole: false });
    pb.set({ blackhole: false });
    const before = forwarded();
    const resumed = await grid("give-up", { resume: true });
    expect(resumed.code, `${resumed.error?.message ?? ""}\n${resumed.err.join("\n")}`).toBe(0);
    // The resumed grid computed exactly the calls that were missing (those given up on among them), once each.
    expect(computedCalls(resumed.err)).toBe(referenceRows.size - stored.size);
    expect(forwarded() - before).toBe(referenceRows.size - stored.size);
    expect(cacheRows(resumed.cache)).toEqual(referenceRows);
    expect(runFiles(resumed.out)).toEqual(runFiles(reference.out));
    console.log(`fault both blackholed: the grid stopped after ${stored.size} of ${referenceRows.size} calls (${failed.error?.message.slice(0, 60)}…); none of the given-up calls cached; --resume computed the ${referenceRows.size - stored.size} missing calls once each, outputs identical`);
  }, budget(180_000));
});
