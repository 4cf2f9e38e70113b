/**
 * Real `llama-server` processes for tests (issue 16 §1): the binary `make llama-server` builds from
 * the llama.cpp release node-llama-cpp bundles (env MERIT_LLAMA_SERVER names another), started on
 * 127.0.0.1 at an ephemeral port in its own process group, flash attention off, 1 thread, CPU only,
 * no prompt cache; `stop()` ends the whole group and is safe to call twice. Tests skip with
 * `LLAMA_SERVER_SKIP` when the binary is absent.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { REPO } from "./run-fixture.ts";
import { budget } from "./budget.ts";

/** The llama-server binary, or null when it is not built. */
export function llamaServerBinary(): string | null {
  const fromEnv = process.env.MERIT_LLAMA_SERVER;
  if (fromEnv) return existsSync(fromEnv) ? fromEnv : null;
  const located = spawnSync("bash", [join(REPO, "scripts", "build-llama-server.sh"), "--locate"], { encoding: "utf8" });
  const path = located.stdout.trim().split("\n").pop() ?? "";
  return located.status === 0 && existsSync(path) ? path : null;
}

/** Why server tests are skipped (null when the binary is there). */
export const LLAMA_SERVER_SKIP = llamaServerBinary() === null ? "llama-server is not built: run `make llama-server` (or set MERIT_LLAMA_SERVER) to run the server tests" : null;
if (LLAMA_SERVER_SKIP) console.warn(`SKIPPED: ${LLAMA_SERVER_SKIP}`);

export interface LlamaServerOptions {
  model: string;
  /** Server slots (--parallel). @default 1 */
  parallel?: number;
  /** Context per slot. @default 4608 */
  contextPerSlot?: number;
  /** Listen on this port (a restart on the same port); @default an ephemeral one */
  port?: number;
}

export interface LlamaServer {
  url: string;
  pid: number;
  /** Everything the server printed (for failure messages). */
  log(): string;
  /** Sends `signal` to the server's process group. */
  kill(signal: NodeJS.Signals): void;
  port: number;
  /** Exits, once the process is gone. */
  exited: Promise<void>;
  stop(): Promise<void>;
}

/** A free TCP port on 127.0.0.1 (the OS picks it; the probe is closed before returning). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().once("error", reject).listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Starts llama-server and waits until /health answers 200 (model loaded). */
export async function startLlamaServer(options: LlamaServerOptions): Promise<LlamaServer> {
  const binary = llamaServerBinary();
  if (!binary) throw new Error(LLAMA_SERVER_SKIP ?? "llama-server missing");
  const parallel = options.parallel ?? 1;
  const port = options.port ?? (await freePort());
  const args = [
    "-m", options.model, "--host", "127.0.0.1", "--port", String(port),
    "-fa", "off", "-t", "1", "-tb", "1", "-ngl", "0",
    "-np", String(parallel), "--no-kv-unified", "-c", String((options.contextPerSlot ?? 4608) * parallel),
    "--cache-ram", "0", "--no-webui", "--no-warmup",
  ];
  const child: ChildProcess = spawn(binary, args, { detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout?.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
  child.stderr?.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let gone = false;
  void exited.then(() => (gone = true));
  const kill = (signal: NodeJS.Signals) => {
    if (!gone && child.pid) {
      try {
        process.kill(-child.pid, signal);
      } catch {
        // already gone
      }
    }
  };
  const server: LlamaServer = {
    url: `http://127.0.0.1:${port}`,
    port,
    pid: child.pid ?? -1,
    log: () => output,
    kill,
    exited,
    async stop() {
      kill("SIGTERM");
      const timer = setTimeout(() => kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
  const deadline = Date.now() + budget(120_000);
  for (;;) {
    if (gone) throw new Error(`llama-server exited before it was ready:\n${output.slice(-3000)}`);
    try {
      const response = await fetch(`${server.url}/health`);
      if (response.status === 200) return server;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await server.stop();
      throw new Error(`llama-server did not become ready in 120 s:\n${output.slice(-3000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
