/**
 * Oracle execution (METHOD.md §2.1, §11.1), the engine-independent half of an executor: a pool of
 * killable workers (child processes, worker threads, …) with a FIFO queue and a hard per-statement
 * deadline. A statement that overruns is answered `TIMEOUT` and its worker is killed and replaced; a
 * worker that dies (out of memory, crash) is replaced too, so the pool survives anything a prediction
 * does. Deadlines start only once a worker has said it is ready (start-up is not the statement's
 * time). The bundled `sqlite` sandbox (sandbox.ts) and executor plugins (`examples/sqljs-executor.ts`,
 * through lib/plugin.ts) differ only in how a worker is started and what runs inside it.
 * @module
 */
import type { ExecRequest, ExecResult, ExecutorOptions } from "./executor.ts";
import type { Rows } from "./types.ts";

/** What the pool sends a worker for one statement (the caps already resolved to numbers). */
export interface WorkerJob {
  id: number;
  db: string;
  sql: string;
  maxRows: number;
  maxBytes: number;
  textErrors: "ignore" | "replace";
  distinct: boolean;
  /** Answer `packed` (the v8 serialization of the rows) instead of `rows`. */
  pack: boolean;
}

/**
 * What a worker sends back: once `{ready: true}` when it has loaded, then one reply per job (`id` as
 * sent). `{failed}` means it could not start; the pool kills it and starts another.
 */
export type WorkerMessage = { ready: true } | { failed: string } | WorkerAnswer | { answers: WorkerAnswer[] };

/** One statement's answer (`id` as sent); a batching worker sends several in one `{answers}` message. */
export interface WorkerAnswer {
  id: number;
  ok: boolean;
  rows?: Rows;
  /** v8.serialize(rows), for a job sent with `pack` (then `rows` is absent, and `count` is its length). */
  packed?: Uint8Array;
  count?: number;
  error?: string;
  overCap?: boolean;
}

/** The statement a worker last started and when (epoch milliseconds, `Date.now()`: the same clock in every process). */
export interface RunningStatement {
  id: number;
  startedAt: number;
}

/** How a worker tells the pool what happened; `spawn` receives one per worker. */
export interface PoolWorkerEvents {
  /** A message from the worker (`ready`, `failed` or a reply). */
  message(msg: WorkerMessage): void;
  /** The worker has exited; `error` is the answer for the statement it was running, if any. */
  exit(error: string): void;
}

/** One worker, as the pool drives it. */
export interface PoolWorker {
  /** Sends one job. */
  send(job: WorkerJob): void;
  /** Kills the worker at once (it may be stuck in a statement); resolves once it has exited (at once if it has). */
  kill(): Promise<void>;
  /** Whether a job can be sent now (e.g. the IPC channel is open); absent = always. */
  canSend?(): boolean;
  /**
   * Sends several jobs in one message (the worker runs them in order and may answer several in one
   * `{answers}` message). Used only together with `running`, and only when the pool's `batch` > 1.
   */
  sendBatch?(jobs: WorkerJob[]): void;
  /**
   * The statement the worker last started and when (read from a progress record the worker writes
   * before each statement, without asking it), or null when it has started none. With it, a batching
   * worker's deadlines and crashes are charged to the statement that was really running, and each
   * deadline counts from that statement's own start.
   */
  running?(): RunningStatement | null;
}

export interface ExecutorPoolOptions<W extends PoolWorker> extends ExecutorOptions {
  /** Starts one worker; `heapMiB` is the resolved `workerHeapMiB`. Its events must go to `events`. */
  spawn(events: PoolWorkerEvents, heapMiB: number): W;
  /** The error of an execution after `close()` (default "executor is closed"). */
  closedError?: string;
  /**
   * Statements sent to one worker before it has answered the first (default 1). A worker that runs
   * its statements one after another in arrival order (as sql-worker.mjs does) can take 2, so it
   * never waits idle for the next statement to cross the process boundary. The deadline is still one
   * statement's: it runs for the oldest unanswered statement, from when the one before it was
   * answered; on a deadline or a crash the statements queued behind it go back to the head of the
   * queue, to the next free worker, and are never blamed for it.
   */
  pipeline?: number;
  /**
   * Statements per message to a worker that has `sendBatch` and `running` (default 1: one message
   * per statement). A batching worker answers the statements of a batch together, so answers of
   * statements that finished wait in the worker while the next ones run; the pool therefore asks the
   * worker's progress record which statement is running when a deadline fires or the worker dies:
   * that one is TIMEOUT or gets the error, counted from its own start, and the others still
   * unanswered (finished or not yet started) go back to the head of the queue and run again on the
   * replacement (read-only statements: the same answer). Verdicts do not depend on the batch size.
   */
  batch?: number;
}

interface Job extends ExecRequest {
  id: number;
  resolve: (r: ExecResult) => void;
}

interface Slot<W> {
  worker: W;
  /** Statements sent and not yet answered, oldest first; the deadline runs for the oldest. */
  jobs: Job[];
  timer: NodeJS.Timeout | null;
  /** Being killed (deadline, failed start) or gone; a replacement takes the slot on exit. */
  dead: boolean;
  /** The worker has loaded and said so; deadlines start only then. */
  ready: boolean;
}

/**
 * A pool of `jobs` workers executing statements under `timeoutMs` and the row/byte caps (defaults as
 * in METHOD.md §11.1). `execute` never rejects; `close()` is idempotent. An executor extends it and
 * adds its `engine` (`class … extends ExecutorPool implements SqlExecutor`).
 */
export class ExecutorPool<W extends PoolWorker = PoolWorker> {
  readonly timeoutMs: number;
  readonly #maxRows: number;
  readonly #maxBytes: number;
  readonly #heapMiB: number;
  readonly #spawnWorker: ExecutorPoolOptions<W>["spawn"];
  readonly #closedError: string;
  readonly #pipeline: number;
  readonly #batch: number;
  readonly #slots: Slot<W>[] = [];
  readonly #queue: Job[] = [];
  #nextId = 1;
  #closed = false;
  #dispatchQueued = false;
  /** Workers killed on a deadline or replaced after a crash (for tests and reports). */
  restarts = 0;

  constructor(opts: ExecutorPoolOptions<W>) {
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.#maxRows = opts.maxRows ?? 1_000_000;
    this.#maxBytes = opts.maxBytes ?? 512 * 1024 * 1024;
    this.#heapMiB = opts.workerHeapMiB ?? 2048;
    this.#spawnWorker = opts.spawn;
    this.#closedError = opts.closedError ?? "executor is closed";
    this.#pipeline = Math.max(1, opts.pipeline ?? 1);
    this.#batch = Math.max(1, Math.min(this.#pipeline, opts.batch ?? 1));
    const jobs = Math.max(1, opts.jobs ?? 1);
    for (let i = 0; i < jobs; i++) this.#slots.push(this.#spawn());
  }

  /** Executes one statement; never rejects (errors come back as `{ok: false}`). */
  execute(request: ExecRequest): Promise<ExecResult> {
    if (this.#closed) return Promise.resolve({ ok: false, error: this.#closedError, timedOut: false });
    return new Promise((resolve) => {
      this.#queue.push({ ...request, id: this.#nextId++, resolve });
      // Statements submitted in one go (e.g. a file's worth) are dispatched together, in batches.
      if (!this.#dispatchQueued) {
        this.#dispatchQueued = true;
        queueMicrotask(() => {
          this.#dispatchQueued = false;
          this.#dispatch();
        });
      }
    });
  }

  /** Kills every worker; pending executions resolve with the closed error. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const job of this.#queue.splice(0)) job.resolve({ ok: false, error: this.#closedError, timedOut: false });
    await Promise.all(
      this.#slots.map((slot) => {
        if (slot.timer) clearTimeout(slot.timer);
        for (const job of slot.jobs.splice(0)) job.resolve({ ok: false, error: this.#closedError, timedOut: false });
        return slot.worker.kill();
      }),
    );
  }

  /** Starts more workers, up to `jobs` in all (SqlExecutor `grow`); never stops any. */
  grow(jobs: number): void {
    if (this.#closed) return;
    while (this.#slots.length < jobs) this.#slots.push(this.#spawn());
  }

  /** The live workers, in slot order (e.g. for their PIDs). */
  get workers(): W[] {
    return this.#slots.map((s) => s.worker);
  }

  #spawn(): Slot<W> {
    const slot = { jobs: [], timer: null, dead: false, ready: false } as Omit<Slot<W>, "worker"> as Slot<W>;
    slot.worker = this.#spawnWorker(
      {
        message: (msg) => {
          if ("ready" in msg) {
            slot.ready = true;
            this.#dispatch();
          } else if ("failed" in msg) {
            slot.dead = true;
            void slot.worker.kill();
          } else {
            this.#finish(slot, "answers" in msg ? msg.answers : [msg]);
          }
        },
        exit: (error) => {
          if (this.#closed) return;
          slot.dead = true; // never dispatch to it again, even before its replacement exists
          if (slot.timer) clearTimeout(slot.timer);
          slot.timer = null;
          // The statement running when the worker died gets the error (the oldest unanswered, unless
          // the worker's progress record names a later one); the others go back to the queue.
          const running = this.#runningJob(slot);
          const others = slot.jobs.splice(0).filter((j) => j !== running);
          this.#queue.unshift(...others);
          running?.resolve({ ok: false, error, timedOut: false });
          this.#replace(slot);
        },
      },
      this.#heapMiB,
    );
    return slot;
  }

  #finish(slot: Slot<W>, answers: readonly WorkerAnswer[]): void {
    const oldest = slot.jobs[0];
    const done: [Job, ExecResult][] = [];
    for (const msg of answers) {
      const index = slot.jobs.findIndex((j) => j.id === msg.id);
      if (index < 0) continue; // not (or no longer) this worker's: e.g. answered after its deadline
      const [job] = slot.jobs.splice(index, 1);
      done.push([job, msg.ok ? (msg.packed !== undefined ? { ok: true, packed: msg.packed } : { ok: true, rows: msg.rows ?? [] }) : { ok: false, error: msg.error ?? "unknown error", timedOut: false, ...(msg.overCap ? { overCap: true } : {}) }]);
    }
    if (done.length === 0) return;
    if (slot.jobs[0] !== oldest) {
      // The oldest was answered: the next one's deadline starts now (it has just begun to run).
      if (slot.timer) clearTimeout(slot.timer);
      slot.timer = null;
      if (slot.jobs.length > 0) this.#startDeadline(slot);
    }
    for (const [job, result] of done) job.resolve(result);
    this.#dispatch();
  }

  /**
   * The unanswered statement the worker is running: the one its progress record names, if it is
   * this slot's and unanswered, else the oldest unanswered (a worker without a record runs its
   * statements in order and answers each at once, so the oldest is the one running).
   */
  #runningJob(slot: Slot<W>): Job | undefined {
    const running = slot.worker.running?.() ?? null;
    return (running !== null ? slot.jobs.find((j) => j.id === running.id) : undefined) ?? slot.jobs[0];
  }

  /** Arms the deadline of the slot's oldest unanswered statement (`ms` after now). */
  #startDeadline(slot: Slot<W>, ms = this.timeoutMs): void {
    slot.timer = setTimeout(() => {
      slot.timer = null;
      // A worker with a progress record may have started its running statement after this timer was
      // armed (the answers before it were held in a batch): that statement gets its full deadline.
      const running = slot.worker.running?.() ?? null;
      if (running !== null && slot.jobs.some((j) => j.id === running.id)) {
        const left = Math.min(this.timeoutMs, running.startedAt + this.timeoutMs - Date.now());
        if (left > 0) return this.#startDeadline(slot, Math.ceil(left));
      }
      // Deadline: answer TIMEOUT now, kill the worker; its exit event spawns a replacement, and the
      // other unanswered statements (not started, or finished with their answers still held in the
      // worker) go back to the head of the queue.
      const stuck = this.#runningJob(slot);
      const others = slot.jobs.splice(0).filter((j) => j !== stuck);
      slot.dead = true;
      this.#queue.unshift(...others);
      stuck?.resolve({ ok: false, error: "TIMEOUT", timedOut: true });
      void slot.worker.kill();
      this.#dispatch();
    }, ms);
  }

  #replace(slot: Slot<W>): void {
    const index = this.#slots.indexOf(slot);
    if (index < 0 || this.#closed) return;
    this.restarts += 1;
    this.#slots[index] = this.#spawn();
    this.#dispatch();
  }

  #dispatch(): void {
    // Round by round, each worker takes at most one batch up to its pipeline depth, at most its share
    // of the queue: a short queue is spread over the workers rather than stacked on the first.
    for (let sent = true; sent && this.#queue.length > 0; ) {
      sent = false;
      const open = this.#slots.filter((s) => s.jobs.length < this.#pipeline && !s.dead && s.ready && s.worker.canSend?.() !== false);
      for (const slot of open) {
        if (this.#queue.length === 0) return;
        const batching = this.#batch > 1 && slot.worker.sendBatch !== undefined && slot.worker.running !== undefined;
        const n = batching ? Math.min(this.#batch, this.#pipeline - slot.jobs.length, Math.ceil(this.#queue.length / open.length)) : 1;
        // A busy batching worker waits for room for a whole batch rather than taking the queue one by one.
        if (batching && n < this.#batch && slot.jobs.length > 0 && this.#queue.length > n) continue;
        const jobs = this.#queue.splice(0, n);
        const first = slot.jobs.length === 0;
        slot.jobs.push(...jobs);
        if (first) this.#startDeadline(slot);
        const messages = jobs.map((job) => ({
          id: job.id,
          db: job.db,
          sql: job.sql,
          maxRows: this.#maxRows,
          maxBytes: this.#maxBytes,
          textErrors: job.textErrors ?? "replace",
          distinct: job.distinct ?? false,
          pack: job.pack ?? false,
        }));
        if (batching) slot.worker.sendBatch!(messages);
        else slot.worker.send(messages[0]);
        sent = true;
      }
    }
  }
}
