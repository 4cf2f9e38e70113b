// SLOW: starts real llama-server processes; its timeouts scale with the machine (test/helpers/budget.ts, README "Slow tests").
// Failover over real servers (issue 16 §5): `merit grid` (iterative + reflexion × stream seeds 0, 1 on
// real Spider dev data) runs over two llama-server processes with the openai backend (token-id
// prompts); one server is SIGKILLed mid-run. The grid finishes on the other; no call is lost or made
// twice (every call computed exactly once: computed = rows in the call cache = the undisturbed run's,
// with the same keys), and every run file equals the undisturbed grid's byte for byte. Skips with a
// message when llama-server is not built.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LLAMA_SERVER_SKIP, startLlamaServer, type LlamaServer } from "../helpers/llama-server.ts";
import { cacheRows, computedCalls, inFlight, repairEveryQueryCache, runFiles, runServerGrid, waitFor } from "../helpers/server-grid.ts";
import { tempDir, TINY_QWEN } from "../helpers/run-fixture.ts";
import { budget } from "../helpers/budget.ts";

let root: string;
let a: LlamaServer;
let b: LlamaServer;
let initialCache: string;

const grid = (name: string, whileRunning?: (cache: string) => Promise<void>) =>
  runServerGrid({ root, name, initialCache, model: { base_urls: [a.url, b.url], requests_per_url: 2 }, methods: "iterative,reflexion", seeds: "0,1", limit: 5, whileRunning });

describe.skipIf(LLAMA_SERVER_SKIP !== null)("a grid over two llama-servers, one SIGKILLed mid-run", () => {
  beforeAll(async () => {
    root = tempDir("server-failover");
    // Every initial SQL is "" (an execution error scored without a database): every query repairs.
    initialCache = await repairEveryQueryCache(root);
    [a, b] = await Promise.all([startLlamaServer({ model: TINY_QWEN, parallel: 2 }), startLlamaServer({ model: TINY_QWEN, parallel: 2 })]);
  }, budget(180_000));
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
  });

  it("finishes on the surviving server with every call made once and outputs identical to an undisturbed grid", async () => {
    const reference = await grid("undisturbed");
    expect(reference.code, reference.err.join("\n")).toBe(0);
    const referenceRows = cacheRows(reference.cache);
    expect(referenceRows.size).toBeGreaterThan(20);

    let killedAt = -1;
    let inFlightOnA = 0;
    const disturbed = await grid("disturbed", async (cache) => {
      // SIGKILL server A once 6 calls are stored and its log shows a task started but not finished.
      await waitFor(() => cacheRows(cache).size >= 6 && inFlight(a.log()) > 0, "6 stored calls and a call in flight on A");
      inFlightOnA = inFlight(a.log());
      killedAt = cacheRows(cache).size;
      a.kill("SIGKILL");
      await a.exited;
    });
    expect(disturbed.code, disturbed.err.join("\n")).toBe(0);
    expect(killedAt).toBeGreaterThanOrEqual(6);
    expect(killedAt).toBeLessThan(referenceRows.size);
    expect(inFlightOnA).toBeGreaterThan(0);

    // No call lost or made twice: the call cache computed each distinct call once, the same calls.
    const rows = cacheRows(disturbed.cache);
    expect(rows).toEqual(referenceRows);
    expect(computedCalls(disturbed.err)).toBe(rows.size);
    expect(computedCalls(reference.err)).toBe(referenceRows.size);

    // Outputs identical to the undisturbed grid, file by file: 4 streams of 5 episodes.
    const files = runFiles(disturbed.out);
    expect(files).toEqual(runFiles(reference.out));
    for (const stream of ["iterative-s0", "iterative-s1", "reflexion-s0", "reflexion-s1"]) {
      expect(files.get(`${stream}/trajectories.jsonl`)?.split("\n").filter(Boolean)).toHaveLength(5);
    }
    console.log(`failover: server A SIGKILLed with ${inFlightOnA} call(s) in flight after ${killedAt} of ${rows.size} calls; the grid finished on server B`);
  }, budget(600_000));
});
