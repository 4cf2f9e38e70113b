/**
 * Oracle execution sandbox (METHOD.md §2.1, §11.1), the SQLite executor: a pool of child processes (lib/oracle/sql-worker.mjs)
 * that execute read-only statements with a hard per-statement deadline. A statement that overruns is
 * answered `TIMEOUT` and its process is killed (SIGKILL) and replaced; a process that dies (out of
 * memory, crash) is replaced too, so the pool survives anything a prediction does.
 * @module
 */
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { ExecRequest, ExecResult, ExecutorOptions, SqlExecutor } from "./executor.ts";
import type { Rows } from "./types.ts";

const WORKER = fileURLToPath(new URL("./sql-worker.mjs", import.meta.url));

/** The sandbox's limits: those of every executor (lib/oracle/executor.ts). */
export type SandboxOptions = ExecutorOptions;
export type { ExecRequest, ExecResult } from "./executor.ts";

interface Job extends ExecRequest {
  id: number;
  resolve: (r: ExecResult) => void;
}

interface Slot {
  child: ChildProcess;
  job: Job | null;
  timer: NodeJS.Timeout | null;
  /** Set once the process is being killed; a replacement takes the slot on exit. */
  dead: boolean;
  /** The worker has loaded and said so; deadlines start only then. */
  ready: boolean;
}

/** A pool of killable SQL worker processes: the `sqlite` executor. Call `close()` when done (idempotent). */
export class SqlSandbox implements SqlExecutor {
  readonly engine = "sqlite";
  readonly timeoutMs: number;
  readonly #maxRows: number;
  readonly #maxBytes: number;
  readonly #heapMiB: number;
  readonly #slots: Slot[] = [];
  readonly #queue: Job[] = [];
  #nextId = 1;
  #closed = false;
  /** Workers killed on timeout or replaced after a crash (for tests and reports). */
  restarts = 0;

  constructor(opts: SandboxOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.#maxRows = opts.maxRows ?? 1_000_000;
    this.#maxBytes = opts.maxBytes ?? 512 * 1024 * 1024;
    this.#heapMiB = opts.workerHeapMiB ?? 2048;
    const jobs = Math.max(1, opts.jobs ?? 1);
    for (let i = 0; i < jobs; i++) this.#slots.push(this.#spawn());
  }

  /** Executes one statement; never rejects (errors come back as `{ok: false}`). */
  execute(request: ExecRequest): Promise<ExecResult> {
    if (this.#closed) return Promise.resolve({ ok: false, error: "sandbox is closed", timedOut: false });
    return new Promise((resolve) => {
      this.#queue.push({ ...request, id: this.#nextId++, resolve });
      this.#dispatch();
    });
  }

  /** Kills every worker. Pending executions resolve with an error. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const job of this.#queue.splice(0)) job.resolve({ ok: false, error: "sandbox is closed", timedOut: false });
    await Promise.all(
      this.#slots.map(
        (slot) =>
          new Promise<void>((done) => {
            if (slot.timer) clearTimeout(slot.timer);
            slot.job?.resolve({ ok: false, error: "sandbox is closed", timedOut: false });
            slot.job = null;
            if (slot.child.exitCode !== null || slot.child.signalCode !== null) return done();
            slot.child.once("exit", () => done());
            slot.child.kill("SIGKILL");
          }),
      ),
    );
  }

  /** PIDs of the live workers (tests check that none leak). */
  get pids(): number[] {
    return this.#slots.map((s) => s.child.pid).filter((p): p is number => p !== undefined);
  }

  #spawn(): Slot {
    const child = fork(WORKER, [], {
      serialization: "advanced", // structured clone: bigint and Uint8Array survive IPC
      execArgv: [`--max-old-space-size=${this.#heapMiB}`],
      stdio: ["ignore", "ignore", "pipe", "ipc"],
    });
    child.stderr?.resume();
    const slot: Slot = { child, job: null, timer: null, dead: false, ready: false };
    child.on("error", () => {}); // EPIPE to a dying child surfaces through its exit handler
    child.on("message", (msg: { ready?: boolean; id: number; ok: boolean; rows?: Rows; error?: string; overCap?: boolean }) => {
      if (msg.ready) {
        slot.ready = true;
        this.#dispatch();
        return;
      }
      const job = slot.job;
      if (!job || job.id !== msg.id) return;
      this.#finish(slot, msg.ok ? { ok: true, rows: msg.rows ?? [] } : { ok: false, error: msg.error ?? "unknown error", timedOut: false, ...(msg.overCap ? { overCap: true } : {}) });
    });
    child.on("exit", (code, signal) => {
      if (this.#closed) return;
      const job = slot.job;
      if (job) this.#finish(slot, { ok: false, error: `SQL worker died (${signal ?? `exit ${code}`}): the statement exhausted memory or crashed SQLite`, timedOut: false });
      this.#replace(slot);
    });
    return slot;
  }

  #finish(slot: Slot, result: ExecResult): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    const job = slot.job;
    slot.job = null;
    job?.resolve(result);
    this.#dispatch();
  }

  #replace(slot: Slot): void {
    const index = this.#slots.indexOf(slot);
    if (index < 0 || this.#closed) return;
    this.restarts += 1;
    this.#slots[index] = this.#spawn();
    this.#dispatch();
  }

  #dispatch(): void {
    for (const slot of this.#slots) {
      if (this.#queue.length === 0) return;
      if (slot.job || slot.dead || !slot.ready || !slot.child.connected) continue;
      const job = this.#queue.shift()!;
      slot.job = job;
      slot.timer = setTimeout(() => {
        // Deadline: answer TIMEOUT now, kill the process; its exit handler spawns a replacement.
        const stuck = slot.job;
        slot.job = null;
        slot.timer = null;
        slot.dead = true;
        stuck?.resolve({ ok: false, error: "TIMEOUT", timedOut: true });
        slot.child.kill("SIGKILL");
      }, this.timeoutMs);
      slot.child.send({
        id: job.id,
        db: job.db,
        sql: job.sql,
        maxRows: this.#maxRows,
        maxBytes: this.#maxBytes,
        textErrors: job.textErrors ?? "replace",
        distinct: job.distinct ?? false,
      });
    }
  }
}
