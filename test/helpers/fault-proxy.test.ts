// The fault-injecting TCP proxy of the server fault tests (test/helpers/fault-proxy.ts), against a
// plain node:http server: pass-through keeps bytes, delay and jitter hold chunks but keep bytes, a
// reset cuts the chosen response mid-body with an error on the client, the blackhole reads a request
// and never answers (nothing reaches the upstream), also from the n-th request on, and switching
// faults off restores service.
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFaultProxy, type FaultProxy } from "./fault-proxy.ts";

const BODY = JSON.stringify({ text: "x".repeat(20_000) });
let upstream: Server;
let upstreamUrl: string;
let received = 0;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received++;
      res.writeHead(200, { "content-type": "application/json" });
      // Two writes, so the response crosses the proxy in more than one chunk.
      res.write(BODY.slice(0, 10_000));
      setTimeout(() => res.end(BODY.slice(10_000)), 5);
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", () => resolve()));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
});

async function post(proxy: FaultProxy, timeoutMs = 5_000): Promise<string> {
  const response = await fetch(`${proxy.url}/v1/x`, { method: "POST", body: JSON.stringify({ q: 1 }), headers: { "content-type": "application/json" }, signal: AbortSignal.timeout(timeoutMs) });
  return response.text();
}

describe("fault proxy", () => {
  it("passes bytes through unchanged and counts requests", async () => {
    const proxy = await startFaultProxy(upstreamUrl);
    try {
      const before = received;
      expect(await post(proxy)).toBe(BODY);
      expect(await post(proxy)).toBe(BODY);
      expect(received - before).toBe(2);
      expect(proxy.counters()).toMatchObject({ requests: 2, forwarded: 2, resets: 0, blackholed: 0, delayedChunks: 0 });
    } finally {
      await proxy.close();
    }
  });

  it("delays and jitters response chunks without changing a byte", async () => {
    const proxy = await startFaultProxy(upstreamUrl, { seed: 7, faults: { delayMs: 20, jitterMs: 30 } });
    try {
      for (let i = 0; i < 3; i++) expect(await post(proxy)).toBe(BODY);
      expect(proxy.counters().delayedChunks).toBeGreaterThanOrEqual(3);
      expect(proxy.counters().resets).toBe(0);
    } finally {
      await proxy.close();
    }
  });

  it("resets every n-th response mid-body; the other requests pass", async () => {
    const proxy = await startFaultProxy(upstreamUrl, { faults: { resetEvery: 2, resetAfterBytes: 5_000 } });
    try {
      const before = received;
      expect(await post(proxy)).toBe(BODY);
      const cut = await post(proxy).then(() => "answered", (error: unknown) => String((error as Error).cause ?? error));
      expect(cut).not.toBe("answered");
      expect(cut).toMatch(/ECONNRESET|terminated|other side closed|socket/i);
      expect(await post(proxy)).toBe(BODY);
      // The cut request reached the upstream (it computed an answer the client never got).
      expect(received - before).toBe(3);
      expect(proxy.counters()).toMatchObject({ requests: 3, forwarded: 3, resets: 1 });
    } finally {
      await proxy.close();
    }
  });

  it("blackholes requests (read, never forwarded, never answered) until switched off", async () => {
    const proxy = await startFaultProxy(upstreamUrl);
    try {
      const before = received;
      proxy.set({ blackhole: true });
      const outcome = await post(proxy, 400).then(() => "answered", (error: unknown) => (error as Error).name);
      expect(outcome).toBe("TimeoutError");
      expect(received - before).toBe(0);
      expect(proxy.counters()).toMatchObject({ requests: 1, forwarded: 0, blackholed: 1 });
      proxy.set({ blackhole: false });
      expect(await post(proxy)).toBe(BODY);
      expect(received - before).toBe(1);
    } finally {
      await proxy.close();
    }
  });

  it("blackholeAfter lets n requests pass, then blackholes (for a while when given ms)", async () => {
    const proxy = await startFaultProxy(upstreamUrl);
    try {
      proxy.blackholeAfter(2, 150);
      expect(await post(proxy)).toBe(BODY);
      expect(await post(proxy)).toBe(BODY);
      expect(await post(proxy, 300).then(() => "answered", (error: unknown) => (error as Error).name)).toBe("TimeoutError");
      expect(await post(proxy)).toBe(BODY);
      expect(proxy.counters()).toMatchObject({ requests: 4, forwarded: 3, blackholed: 1 });
    } finally {
      await proxy.close();
    }
  });

  it("blackholeFor turns itself off", async () => {
    const proxy = await startFaultProxy(upstreamUrl);
    try {
      proxy.blackholeFor(100);
      expect(await post(proxy, 300).then(() => "answered", (error: unknown) => (error as Error).name)).toBe("TimeoutError");
      expect(await post(proxy)).toBe(BODY);
      expect(proxy.counters()).toMatchObject({ blackholed: 1, forwarded: 1 });
    } finally {
      await proxy.close();
    }
  });
});
