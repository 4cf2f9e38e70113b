/**
 * Oracle execution sandbox (METHOD.md §2.1, §11.1), the SQLite executor: a pool (executor-pool.ts) of child processes (lib/oracle/sql-worker.mjs)
 * that execute read-only statements with a hard per-statement deadline. A statement that overruns is
 * answered `TIMEOUT` and its process is killed (SIGKILL) and replaced; a process that dies (out of
 * memory, crash) is replaced too, so the pool survives anything a prediction does.
 * @module
 */
import { fork, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, existsSync, openSync, readSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ExecutorOptions, SqlExecutor } from "./executor.ts";
import { ExecutorPool, type PoolWorker, type PoolWorkerEvents, type RunningStatement, type WorkerMessage } from "./executor-pool.ts";

const WORKER = fileURLToPath(new URL("./sql-worker.mjs", import.meta.url));

/** The sandbox's limits: those of every executor (lib/oracle/executor.ts). */
export type SandboxOptions = ExecutorOptions;

/** One worker process, as the pool drives it. */
interface ProcessWorker extends PoolWorker {
  child: ChildProcess;
}

/** The worker's argument saying its progress record is file descriptor 4 (the fifth stdio entry). */
const PROGRESS_FD_ARG = "--progress-fd=4";

/**
 * The worker's progress record (sql-worker.mjs "Progress record"): a temp file that this process
 * opens and at once removes from the folder, and hands to the worker as its file descriptor 4 (the
 * same open file), so no name is left behind even if either process is killed. Null where no temp
 * file can be made: the worker then runs without one, and the pool sends it one statement per message.
 */
class ProgressRecord {
  readonly fd: number;
  readonly #buffer = new Float64Array(3);
  #closed = false;

  private constructor(fd: number) {
    this.fd = fd;
  }

  static create(): ProgressRecord | null {
    const path = join(tmpdir(), `merit-sql-${process.pid}-${randomBytes(6).toString("hex")}`);
    let fd: number;
    try {
      fd = openSync(path, "w+");
    } catch {
      return null;
    }
    try {
      unlinkSync(path);
    } catch {
      // already gone
    }
    return new ProgressRecord(fd);
  }

  read(): RunningStatement | null {
    try {
      const n = readSync(this.fd, new Uint8Array(this.#buffer.buffer), 0, 24, 0);
      const [id, startedAt, again] = this.#buffer;
      return n === 24 && id === again && id > 0 ? { id, startedAt } : null;
    } catch {
      return null;
    }
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      closeSync(this.fd);
    } catch {
      // closed already
    }
  }
}

/**
 * One watchdog for a pool's workers: a POSIX shell reading `+PID` (a worker started) and `-PID` (it
 * has exited) lines on its stdin. When this process dies — even by SIGKILL — the kernel closes the
 * pipe, `read` sees the end, and the shell SIGKILLs the workers still alive, so none lingers in a
 * runaway statement. A normal `close()` kills the workers itself and then the shell. Where no shell
 * can be started (no /bin/sh), each worker starts its own watchdog thread instead (sql-worker.mjs),
 * which costs a thread start per worker.
 */
// Builtins only (read, case, for, test, kill): the shell forks nothing, so killing it leaves nothing behind.
const WATCHDOG_SCRIPT = 'p=""; while read -r x; do case "$x" in -*) n=""; for q in $p; do [ "$q" = "${x#-}" ] || n="$n $q"; done; p="$n";; *) p="$p ${x#+}";; esac; done; [ -z "$p" ] || kill -9 $p 2>/dev/null';

class PoolWatchdog {
  #shell: ChildProcess | null = null;
  #failed = false;

  /** Whether the shell is up (started on first use); false where it cannot start. */
  ensure(): boolean {
    if (this.#shell !== null) return true;
    if (this.#failed || !existsSync("/bin/sh")) return false;
    try {
      const shell = spawn("/bin/sh", ["-c", WATCHDOG_SCRIPT], { stdio: ["pipe", "ignore", "ignore"] });
      shell.on("error", () => {
        this.#failed = true;
      });
      shell.stdin?.on("error", () => {}); // EPIPE once it is gone: the workers' own exits still happen
      shell.unref();
      (shell.stdin as unknown as { unref?: () => void } | null)?.unref?.();
      this.#shell = shell;
      return true;
    } catch {
      this.#failed = true;
      return false;
    }
  }

  started(pid: number): void {
    this.#shell?.stdin?.write(`+${pid}\n`);
  }

  exited(pid: number): void {
    this.#shell?.stdin?.write(`-${pid}\n`);
  }

  /** Stops the shell without it killing anything (the workers are gone by then); resolves once it has exited. */
  close(): Promise<void> {
    const shell = this.#shell;
    this.#shell = null;
    if (shell === null || shell.exitCode !== null || shell.signalCode !== null) return Promise.resolve();
    return new Promise((done) => {
      shell.once("exit", () => done());
      shell.ref(); // keep the event loop alive until it has exited (unref'd, the process could end first)
      shell.kill("SIGKILL");
    });
  }
}

/** Forks one sql-worker.mjs (the pool's watchdog, or its own, kills it if this process dies) and wires it to the pool. */
function forkWorker(events: PoolWorkerEvents, heapMiB: number, watchdog: PoolWatchdog): ProcessWorker {
  const record = ProgressRecord.create();
  const shared = watchdog.ensure();
  const child = fork(WORKER, record ? [PROGRESS_FD_ARG] : [], {
    ...(shared ? { env: { ...process.env, MERIT_SQL_WATCHDOG: "pool" } } : {}),
    serialization: "advanced", // structured clone: bigint and Uint8Array survive IPC
    execArgv: [`--max-old-space-size=${heapMiB}`],
    stdio: ["ignore", "ignore", "pipe", "ipc", ...(record ? [record.fd] : [])],
  });
  child.stderr?.resume();
  const pid = child.pid;
  if (shared && pid !== undefined) watchdog.started(pid);
  child.on("error", () => {}); // EPIPE to a dying child surfaces through its exit handler
  child.on("message", (msg: WorkerMessage) => events.message(msg));
  // "close", not "exit": it comes after every IPC message the worker sent, so an answer sent just
  // before a crash is never taken for the crash (with a pipeline, the crash is the next statement's).
  child.on("close", (code, signal) => {
    if (shared && pid !== undefined) watchdog.exited(pid);
    events.exit(`SQL worker died (${signal ?? `exit ${code}`}): the statement exhausted memory or crashed SQLite`);
    record?.close(); // after the pool has read which statement was running
  });
  return {
    child,
    send: (job) => child.send(job),
    ...(record ? { sendBatch: (jobs: unknown[]) => child.send(jobs), running: () => record.read() } : {}),
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
    // `pipeline`), and it takes them 8 to a message and answers them together (`batch`): on the
    // 2-core machine of bench/README "Oracle" a message each way costs about as much as executing a
    // Spider statement. Two batches in flight, so the worker never waits for the parent. Deadlines
    // and crashes are charged through the progress record to the statement really running; the
    // others go back to the queue, never blamed: verdicts depend on neither depth nor batch.
    const watchdog = new PoolWatchdog();
    super({ ...opts, spawn: (events, heapMiB) => forkWorker(events, heapMiB, watchdog), closedError: "sandbox is closed", pipeline: 16, batch: 8 });
    this.#watchdog = watchdog;
  }

  readonly #watchdog: PoolWatchdog;

  override async close(): Promise<void> {
    await super.close();
    await this.#watchdog.close();
  }

  /** PIDs of the live workers (tests check that none leak). */
  get pids(): number[] {
    return this.workers.map((w) => w.child.pid).filter((p): p is number => p !== undefined);
  }
}
