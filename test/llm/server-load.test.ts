// SLOW: starts real llama-server processes; its timeouts scale with the machine (test/helpers/budget.ts, README "Slow tests").
// The server path under load (issue 23 §2): `merit grid` with 32 concurrent streams (iterative and
// reflexion × stream seeds 0..15, 8 real Spider dev queries each, in 16 orders, so the streams ask
// for different calls at once and meet in the call cache) against two llama-servers with 4 slots each
// (`requests_per_url` 4), each behind a pass-through proxy that counts the requests reaching it.
// Every call is answered once (each distinct call computed once, each reached a server once) and the
// run files equal those of the same grid against one server (config.json differs only in the base
// URLs). Times are not asserted: bench/server-load.ts measures calls/s, latency and the kit's
// overhead. Skips with a message when llama-server is not built.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFaultProxy, type FaultProxy } from "../helpers/fault-proxy.ts";
import { LLAMA_SERVER_SKIP, startLlamaServer, type LlamaServer } from "../helpers/llama-server.ts";
import { cacheRows, computedCalls, repairEveryQueryCache, runFiles, runServerGrid, transportTotals } from "../helpers/server-grid.ts";
import { tempDir, TINY_QWEN } from "../helpers/run-fixture.ts";
import { budget } from "../helpers/budget.ts";

const STREAMS = 32;
let root: string;
let initialCache: string;
let a: LlamaServer;
let b: LlamaServer;
let pa: FaultProxy;
let pb: FaultProxy;

const grid = (name: string, baseUrls: string[]) =>
  runServerGrid({ root, name, initialCache, model: { base_urls: baseUrls, requests_per_url: 4 }, methods: "iterative,reflexion", seeds: Array.from({ length: STREAMS / 2 }, (_, i) => i).join(","), limit: 8 });

/** config.json without the base URLs (the one field the two grids differ in). */
function withoutUrls(files: Map<string, string>): Map<string, string> {
  return new Map([...files].map(([path, text]) => {
    if (!path.endsWith("/config.json")) return [path, text];
    const config = JSON.parse(text) as { config: { model: { base_urls?: unknown } } };
    delete config.config.model.base_urls;
    return [path, JSON.stringify(config)];
  }));
}

describe.skipIf(LLAMA_SERVER_SKIP !== null)("32 concurrent streams against two llama-servers -np 4", () => {
  beforeAll(async () => {
    root = tempDir("server-load");
    initialCache = await repairEveryQueryCache(root);
    [a, b] = await Promise.all([startLlamaServer({ model: TINY_QWEN, parallel: 4 }), startLlamaServer({ model: TINY_QWEN, parallel: 4 })]);
    [pa, pb] = await Promise.all([startFaultProxy(a.url), startFaultProxy(b.url)]);
  }, budget(180_000));
  afterAll(async () => {
    await pa?.close();
    await pb?.close();
    await a?.stop();
    await b?.stop();
  });

  it("answers every call once, shares them over both servers, and writes the single-server grid's run files", async () => {
    const single = await grid("one-server", [pa.url]);
    expect(single.code, `${single.error?.message ?? ""}\n${single.err.join("\n")}`).toBe(0);
    const singleRows = cacheRows(single.cache);
    const toA = pa.counters().forwarded;
    expect(toA).toBe(singleRows.size);

    const loaded = await grid("two-servers", [pa.url, pb.url]);
    expect(loaded.code, `${loaded.error?.message ?? ""}\n${loaded.err.join("\n")}`).toBe(0);
    const rows = cacheRows(loaded.cache);
    expect(rows.size).toBeGreaterThan(STREAMS);
    // Every call answered once: the same distinct calls with the same texts, each computed once and
    // each sent to a server once; both servers took a share.
    expect(rows).toEqual(singleRows);
    expect(computedCalls(loaded.err)).toBe(rows.size);
    const sentA = pa.counters().forwarded - toA;
    const sentB = pb.counters().forwarded;
    expect(sentA + sentB).toBe(rows.size);
    expect(Math.min(sentA, sentB)).toBeGreaterThan(0);
    expect(transportTotals(loaded.out).transient_retries).toBe(0);
    // 32 streams, each a run directory equal to the single-server grid's.
    const files = runFiles(loaded.out);
    expect(new Set([...files.keys()].map((k) => k.split("/")[0])).size).toBe(STREAMS);
    expect(withoutUrls(files)).toEqual(withoutUrls(runFiles(single.out)));
    console.log(`load: ${STREAMS} streams, ${rows.size} calls, ${sentA} to server A and ${sentB} to server B, each answered once; run files equal the single-server grid's`);
  }, budget(300_000));
});
