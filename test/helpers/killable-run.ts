/**
 * Test helper for crash-safety of experiment runs (METHOD.md §11; lib/experiment/run.ts): runs
 * `node lib/bin.mjs run …` as a child process and SIGKILLs it when a chosen condition on its run
 * directory first holds (polled every few milliseconds), or lets it finish. `cwd` lets two runs
 * resolve a relative path in their config (e.g. the call cache) to different files.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "./run-fixture.ts";

export interface ChildOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  /** true when this helper sent the SIGKILL. */
  killed: boolean;
}

/** Complete lines of a file (0 when absent). */
export function lineCount(path: string): number {
  if (!existsSync(path)) return 0;
  return readFileSync(path, "utf8").split("\n").length - 1;
}

/** Files of an in-flight memory transaction (temp files or the commit marker), if any. */
export function memoryWriteInFlight(runDir: string): string[] {
  const dir = join(runDir, "memory");
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((f) => f.endsWith(".tmp") || f === "memory_commit.json");
}

/**
 * Spawns the CLI with `args`; when `killWhen` returns true (checked every `pollMs`), sends SIGKILL
 * (after `delayMs`, if given). Resolves when the child has exited.
 */
export function runCli(args: string[], opts: { killWhen?: () => boolean; delayMs?: number; pollMs?: number; cwd?: string } = {}): Promise<ChildOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(REPO, "lib", "bin.mjs"), ...args], { cwd: opts.cwd ?? REPO, env: { ...process.env, NO_COLOR: "1" }, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    let killed = false;
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const killWhen = opts.killWhen;
    const timer: NodeJS.Timeout | undefined = killWhen
      ? setInterval(() => {
          if (killed || !killWhen()) return;
          killed = true;
          clearInterval(timer);
          const kill = () => child.kill("SIGKILL");
          if (opts.delayMs) setTimeout(kill, opts.delayMs);
          else kill();
        }, opts.pollMs ?? 2)
      : undefined;
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      clearInterval(timer);
      resolve({ code, signal, stderr, killed: killed && signal === "SIGKILL" });
    });
  });
}

/** Every file under `dir`, as paths relative to it, sorted. */
export function listFiles(dir: string, prefix = ""): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true })
    .flatMap((d) => (d.isDirectory() ? listFiles(dir, join(prefix, d.name)) : [join(prefix, d.name)]))
    .sort();
}
