// SLOW: starts real llama-server processes; its timeouts scale with the machine (test/helpers/budget.ts, README "Slow tests").
// A server SIGKILLed and started again on the same port mid-grid (issue 23 §2): `merit grid`
// (iterative + reflexion × stream seeds 0, 1 on real Spider dev data, the openai backend) over two
// llama-servers. Server A is SIGKILLed with a call in flight, then server B for good (a call in
// flight too), and A is started again on its port a second later: the calls wait with backoff, and
// the rest of the grid can only be answered by the restarted A. The grid completes with every call computed once (the call cache holds the
// undisturbed grid's keys and texts, computed = rows) and every run file equal to the undisturbed
// grid's byte for byte. Skips with a message when llama-server is not built.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LLAMA_SERVER_SKIP, startLlamaServer, type LlamaServer } from "../helpers/llama-server.ts";
import { cacheRows, computedCalls, inFlight, repairEveryQueryCache, runFiles, runServerGrid, transportTotals, waitFor } from "../helpers/server-grid.ts";
import { tempDir, TINY_QWEN } from "../helpers/run-fixture.ts";
import { budget } from "../helpers/budget.ts";

let root: string;
let initialCache: string;
let a: LlamaServer;
let b: LlamaServer;
const servers: LlamaServer[] = [];

const grid = (name: string, whileRunning?: (cache: string) => Promise<void>) =>
  runServerGrid({ root, name, initialCache, model: { base_urls: [a.url, b.url], requests_per_url: 2 }, methods: "iterative,reflexion", seeds: "0,1", limit: 6, whileRunning });

describe.skipIf(LLAMA_SERVER_SKIP !== null)("a grid over two llama-servers, one SIGKILLed and restarted on its port", () => {
  beforeAll(async () => {
    root = tempDir("server-restart");
    initialCache = await repairEveryQueryCache(root);
    [a, b] = await Promise.all([startLlamaServer({ model: TINY_QWEN, parallel: 2 }), startLlamaServer({ model: TINY_QWEN, parallel: 2 })]);
    servers.push(a, b);
  }, budget(180_000));
  afterAll(async () => {
    for (const s of servers) await s.stop();
  });

  it("completes on the restarted server with every call made once and the undisturbed grid's run files", async () => {
    const reference = await grid("undisturbed");
    expect(reference.code, reference.err.join("\n")).toBe(0);
    const referenceRows = cacheRows(reference.cache);
    expect(referenceRows.size).toBeGreaterThan(20);

    const events: string[] = [];
    let restarted: LlamaServer | undefined;
    let rowsAtRestart = -1;
    const disturbed = await grid("restarted", async (cache) => {
      await waitFor(() => cacheRows(cache).size >= 4 && inFlight(a.log()) > 0, "4 stored calls and a call in flight on A");
      events.push(`A SIGKILLed with ${inFlight(a.log())} call(s) in flight after ${cacheRows(cache).size} calls`);
      a.kill("SIGKILL");
      await a.exited;
      // B too, so that the rest of the grid can only be answered by A once it is back.
      await waitFor(() => inFlight(b.log()) > 0, "a call in flight on B");
      events.push(`B SIGKILLed for good with ${inFlight(b.log())} call(s) in flight after ${cacheRows(cache).size} calls`);
      b.kill("SIGKILL");
      await b.exited;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      restarted = await startLlamaServer({ model: TINY_QWEN, parallel: 2, port: a.port });
      servers.push(restarted);
      rowsAtRestart = cacheRows(cache).size;
      events.push(`A started again on port ${a.port} after ${rowsAtRestart} calls`);
    });
    expect(disturbed.code, `${disturbed.error?.message ?? ""}\n${disturbed.err.join("\n")}`).toBe(0);
    expect(rowsAtRestart).toBeLessThan(referenceRows.size);
    // The restarted server answered the rest of the grid.
    expect(restarted!.log()).toMatch(/processing task/);

    // No call lost or made twice: each distinct call computed once, the same calls with the same texts.
    const rows = cacheRows(disturbed.cache);
    expect([...rows.keys()]).toEqual([...referenceRows.keys()]);
    expect(rows).toEqual(referenceRows);
    expect(computedCalls(disturbed.err)).toBe(rows.size);
    expect(computedCalls(reference.err)).toBe(referenceRows.size);
    // The calls the kills cut were retried, and counted (manifest.json transport); the outputs do not show it.
    expect(transportTotals(disturbed.out).transient_retries).toBeGreaterThanOrEqual(2);
    expect(runFiles(disturbed.out)).toEqual(runFiles(reference.out));
    console.log(`restart: ${events.join("; ")}; ${rows.size} calls, ${transportTotals(disturbed.out).transient_retries} transient failures retried`);
  }, budget(300_000));
});
