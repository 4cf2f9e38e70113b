/**
 * A fault-injecting TCP proxy on loopback for the server fault tests (issue 23 §2; this machine's
 * kernel has no `netem`): listens on 127.0.0.1 at an ephemeral port and forwards every connection to
 * one upstream, with faults switched at run time by `set()`:
 * - `delayMs` + `jitterMs`: each response chunk is held for delay + a seeded uniform draw in
 *   [0, jitter) ms (order kept), so latency varies but the bytes do not;
 * - `resetEvery` + `resetAfterBytes`: every n-th request's response is cut after that many bytes and
 *   both sockets are destroyed with a TCP RST (`socket.resetAndDestroy()`);
 * - `blackhole`: a request that starts while it is on is read and never forwarded or answered, and
 *   its connection stays open and silent until the client gives up (`blackholeFor(ms)` turns it on
 *   for a while, `blackholeAfter(n, ms)` once n more requests have passed — a point in a grid that
 *   does not depend on timing).
 * Requests are counted per HTTP/1.1 exchange (client bytes after a response began start a new one;
 * no pipelining), so counters say how many requests reached the upstream and what was done to them.
 */
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { mulberry32 } from "./mulberry32.ts";

/** The faults in force; `set()` replaces the fields it is given. */
export interface Faults {
  /** Added to every response chunk, in ms. @default 0 */
  delayMs: number;
  /** Upper bound of the seeded extra delay per chunk, in ms. @default 0 */
  jitterMs: number;
  /** Cut the response of every n-th request (1-based count since the proxy started); 0 = never. @default 0 */
  resetEvery: number;
  /** Response bytes let through before the cut. @default 64 */
  resetAfterBytes: number;
  /** New requests are swallowed. @default false */
  blackhole: boolean;
}

/** What the proxy saw and did since it started. */
export interface FaultCounters {
  connections: number;
  /** Requests seen (each HTTP exchange once). */
  requests: number;
  /** Requests forwarded to the upstream. */
  forwarded: number;
  /** Responses cut with a reset. */
  resets: number;
  /** Requests swallowed by the blackhole. */
  blackholed: number;
  /** Response chunks held back by delay or jitter. */
  delayedChunks: number;
}

export interface FaultProxy {
  /** `http://127.0.0.1:PORT` of the proxy. */
  url: string;
  port: number;
  /** Changes the faults; `blackhole` given also cancels a pending `blackholeFor` or `blackholeAfter`. */
  set(faults: Partial<Faults>): void;
  /** Turns the blackhole on for `ms`, then off again. */
  blackholeFor(ms: number): void;
  /** Lets `requests` more requests pass, then turns the blackhole on (for `ms`, or until `set` turns it off). */
  blackholeAfter(requests: number, ms?: number): void;
  counters(): FaultCounters;
  /** Closes the listener and every open connection. */
  close(): Promise<void>;
}


/** Starts a proxy to `upstream` (`host:port` or `http://host:port`); `seed` drives the jitter. */
export async function startFaultProxy(upstream: string, opts: { seed?: number; faults?: Partial<Faults> } = {}): Promise<FaultProxy> {
  const target = new URL(upstream.includes("://") ? upstream : `http://${upstream}`);
  const faults: Faults = { delayMs: 0, jitterMs: 0, resetEvery: 0, resetAfterBytes: 64, blackhole: false, ...opts.faults };
  const counters: FaultCounters = { connections: 0, requests: 0, forwarded: 0, resets: 0, blackholed: 0, delayedChunks: 0 };
  const uniform = mulberry32(opts.seed ?? 1);
  const open = new Set<Socket>();
  let blackholeTimer: NodeJS.Timeout | undefined;
  let armed: { at: number; ms?: number } | null = null;
  const blackholeFor = (ms: number) => {
    clearTimeout(blackholeTimer);
    faults.blackhole = true;
    blackholeTimer = setTimeout(() => (faults.blackhole = false), ms);
  };

  const server: Server = createServer((client) => {
    counters.connections++;
    open.add(client);
    const upstreamSocket = createConnection({ host: target.hostname, port: Number(target.port) });
    open.add(upstreamSocket);
    // Per exchange: whether the response began, whether this one is cut (and after how many bytes).
    let responding = true; // the first client bytes start a request
    let swallowed = false;
    let cutAt = -1;
    let sent = 0;
    let releaseAt = 0;
    const held: { at: number; deliver: () => void }[] = []; // delayed response chunks, in order
    let releasing = false;
    let dead = false;
    const resetBoth = () => {
      dead = true;
      counters.resets++;
      client.resetAndDestroy();
      upstreamSocket.resetAndDestroy();
    };
    client.on("data", (chunk: Buffer) => {
      if (swallowed || dead) return;
      if (responding) {
        responding = false;
        counters.requests++;
        if (armed && counters.requests > armed.at) {
          if (armed.ms === undefined) faults.blackhole = true;
          else blackholeFor(armed.ms);
          armed = null;
        }
        if (faults.blackhole) {
          // Read and never answered: the connection stays open and silent until the client closes it.
          swallowed = true;
          counters.blackholed++;
          return;
        }
        cutAt = faults.resetEvery > 0 && counters.requests % faults.resetEvery === 0 ? faults.resetAfterBytes : -1;
        sent = 0;
        counters.forwarded++;
      }
      upstreamSocket.write(chunk);
    });
    upstreamSocket.on("data", (chunk: Buffer) => {
      if (swallowed || dead) return;
      responding = true;
      const deliver = () => {
        if (dead) return;
        if (cutAt >= 0 && sent + chunk.length > cutAt) {
          if (cutAt > sent) client.write(chunk.subarray(0, cutAt - sent), () => resetBoth());
          else resetBoth();
          return;
        }
        sent += chunk.length;
        client.write(chunk);
      };
      const wait = faults.delayMs + (faults.jitterMs > 0 ? uniform() * faults.jitterMs : 0);
      if (wait <= 0 && held.length === 0) return deliver();
      counters.delayedChunks++;
      // Order kept: one FIFO per connection, released by a single timer, never a chunk before the
      // previous one (timers of different durations due in the same millisecond may fire in any order).
      releaseAt = Math.max(releaseAt, Date.now() + wait);
      held.push({ at: releaseAt, deliver });
      if (!releasing) {
        releasing = true;
        setTimeout(release, releaseAt - Date.now());
      }
    });
    const release = () => {
      while (held.length > 0 && held[0].at <= Date.now()) held.shift()!.deliver();
      if (held.length > 0) setTimeout(release, Math.max(0, held[0].at - Date.now()));
      else releasing = false;
    };
    const closeBoth = () => {
      open.delete(client);
      open.delete(upstreamSocket);
      if (!client.destroyed) client.destroy();
      if (!upstreamSocket.destroyed) upstreamSocket.destroy();
    };
    client.on("close", closeBoth);
    client.on("error", closeBoth);
    // The upstream ended (a server that died): the client sees its connection end, as it would.
    upstreamSocket.on("close", () => {
      if (!swallowed) closeBoth();
    });
    upstreamSocket.on("error", () => {
      if (!swallowed) closeBoth();
    });
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    set(change) {
      if (change.blackhole !== undefined) {
        // An explicit switch overrides a pending timed or armed one.
        clearTimeout(blackholeTimer);
        armed = null;
      }
      Object.assign(faults, change);
    },
    blackholeFor,
    blackholeAfter(requests, ms) {
      armed = { at: counters.requests + requests, ms };
    },
    counters: () => ({ ...counters }),
    async close() {
      clearTimeout(blackholeTimer);
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
