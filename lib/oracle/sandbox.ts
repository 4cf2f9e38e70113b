/**
 * Oracle execution sandbox (METHOD.md §2.1, §11.1), the SQLite executor: a pool (executor-pool.ts) of child processes (lib/oracle/sql-worker.mjs)
 * that execute read-only statements with a hard per-statement deadline. A statement that overruns is
 * answered `TIMEOUT` and its process is killed (SIGKILL) and replaced; a process that dies (out of
 * memory, crash) is replaced too, so the pool survives anything a prediction does.
 * @module
 */
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { ExecutorOptions, SqlExecutor } from "./executor.ts";
import { ExecutorPool, type PoolWorker, type PoolWorkerEvents, type WorkerMessage } from "./executor-pool.ts";

const WORKER = fileURLToPath(new URL("./sql-worker.mjs", import.meta.url));

/** The sandbox's limits: those of every executor (lib/oracle/executor.ts). */
export type SandboxOptions = ExecutorOptions;
export type { ExecRequest, ExecResult } from "./executor.ts";

/** One worker process, as the pool drives it. */
interface ProcessWorker extends PoolWorker {
  child: ChildProcess;
}

/** Forks one sql-worker.mjs (its watchdog kills it if this process dies) and wires it to the pool. */
function forkWorker(events: PoolWorkerEvents, heapMiB: number): ProcessWorker {
  const child = fork(WORKER, [], {
    serialization: "advanced", // structured clone: bigint and Uint8Array survive IPC
    execArgv: [`--max-old-space-size=${heapMiB}`],
    stdio: ["ignore", "ignore", "pipe", "ipc"],
  });
  child.stderr?.resume();
  child.on("error", () => {}); // EPIPE to a dying child surfaces through its exit handler
  child.on("message", (msg: WorkerMessage) => events.message(msg));
  // "close", not "exit": it comes after every IPC message the worker sent, so an answer sent just
  // before a crash is never taken for the crash (with a pipeline, the crash is the next statement's).
  child.on("close", (code, signal) => events.exit(`SQL worker died (${signal ?? `exit ${code}`}): the statement exhausted memory or crashed SQLite`));
  return {
    child,
    send: (job) => child.send(job),
    canSend: () => child.connected,
    kill: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done();
        child.once("exit", () => done());
        child.kill("SIGKILL");
      }),
  };
}

/** A pool of killable SQL worker processes (lib/oracle/executor-pool.ts): the `sqlite` executor. Call `close()` when done (idempotent). */
export class SqlSandbox extends ExecutorPool<ProcessWorker> implements SqlExecutor {
  readonly engine = "sqlite";

  constructor(opts: SandboxOptions = {}) {
    // sql-worker.mjs runs its statements one at a time in arrival order: the next ones wait in its IPC
    // buffer, so the worker starts each as soon as it has answered the one before (executor-pool.ts
    // `pipeline`). 8 rather than 2: the worker then never waits for the parent to be scheduled, and
    // reads several statements per wake-up (Spider dev on one worker: ≈ 8 % less wall time, 5 % less
    // CPU, bench/README "Oracle"). Statements queued behind one that hangs wait for its deadline, then
    // go back to the queue, never blamed; verdicts do not depend on the depth.
    super({ ...opts, spawn: forkWorker, closedError: "sandbox is closed", pipeline: 8 });
  }

  /** PIDs of the live workers (tests check that none leak). */
  get pids(): number[] {
    return this.workers.map((w) => w.child.pid).filter((p): p is number => p !== undefined);
  }
}
