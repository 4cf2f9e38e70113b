/**
 * The executor pool's pipeline (lib/oracle/executor-pool.ts `pipeline`): with a worker that runs its
 * statements one at a time in arrival order (as sql-worker.mjs does), a second statement is sent
 * before the first is answered; the deadline is still one statement's, counted from when the one
 * before it was answered; a deadline or a crash sends the statements queued behind it back to the
 * queue, where the replacement runs them, never blamed for the first.
 */
import { describe, expect, it } from "vitest";
import { ExecutorPool, type PoolWorker, type PoolWorkerEvents, type WorkerJob } from "../../lib/oracle/executor-pool.ts";

/** A sequential scripted worker: "sleep N" takes N ms, "hang" never ends, "crash" exits; one statement at a time. */
class SerialWorker implements PoolWorker {
  static started: SerialWorker[] = [];
  readonly received: string[] = [];
  readonly #queue: WorkerJob[] = [];
  #busy = false;
  exited = false;
  readonly events: PoolWorkerEvents;
  constructor(events: PoolWorkerEvents) {
    this.events = events;
    SerialWorker.started.push(this);
    setTimeout(() => !this.exited && this.events.message({ ready: true }), 2);
  }
  send(job: WorkerJob): void {
    this.received.push(job.sql);
    this.#queue.push(job);
    this.#next();
  }
  #next(): void {
    if (this.#busy || this.exited) return;
    const job = this.#queue.shift();
    if (!job) return;
    this.#busy = true;
    const [verb, ms] = job.sql.split(" ");
    if (verb === "crash") setTimeout(() => this.kill(), 1);
    if (verb === "sleep") {
      setTimeout(() => {
        if (this.exited) return;
        this.#busy = false;
        this.events.message({ id: job.id, ok: true, rows: [[job.sql]] });
        this.#next();
      }, Number(ms));
    }
  }
  kill(): Promise<void> {
    if (!this.exited) {
      this.exited = true;
      setTimeout(() => this.events.exit("serial worker died"), 1);
    }
    return Promise.resolve();
  }
}

function pool(timeoutMs: number, pipeline = 2) {
  SerialWorker.started = [];
  return new ExecutorPool({ jobs: 1, timeoutMs, pipeline, spawn: (events) => new SerialWorker(events) });
}

describe("ExecutorPool pipeline", () => {
  it("sends the next statement before the first is answered, and answers both", async () => {
    const p = pool(1_000);
    const first = p.execute({ db: "a", sql: "sleep 40" });
    const second = p.execute({ db: "a", sql: "sleep 1" });
    await new Promise((r) => setTimeout(r, 20));
    expect(SerialWorker.started[0].received).toEqual(["sleep 40", "sleep 1"]); // both sent while the first runs
    expect(await Promise.all([first, second])).toEqual([
      { ok: true, rows: [["sleep 40"]] },
      { ok: true, rows: [["sleep 1"]] },
    ]);
    await p.close();
  });

  it("a statement queued behind another gets its own deadline, from when the one before it was answered", async () => {
    const p = pool(150);
    // Together 240 ms, past one deadline; each alone is within it.
    const results = await Promise.all([p.execute({ db: "a", sql: "sleep 120" }), p.execute({ db: "a", sql: "sleep 120" })]);
    expect(results).toEqual([
      { ok: true, rows: [["sleep 120"]] },
      { ok: true, rows: [["sleep 120"]] },
    ]);
    expect(p.restarts).toBe(0);
    await p.close();
  });

  it("on a deadline only the running statement is TIMEOUT; the one queued behind it runs on the replacement", async () => {
    const p = pool(80);
    const [hung, queued] = await Promise.all([p.execute({ db: "a", sql: "hang" }), p.execute({ db: "a", sql: "sleep 1" })]);
    expect(hung).toEqual({ ok: false, error: "TIMEOUT", timedOut: true });
    expect(queued).toEqual({ ok: true, rows: [["sleep 1"]] });
    expect(SerialWorker.started.map((w) => w.received)).toEqual([["hang", "sleep 1"], ["sleep 1"]]);
    expect(p.restarts).toBe(1);
    await p.close();
  });

  it("on a crash only the running statement gets the error; the one queued behind it runs on the replacement", async () => {
    const p = pool(1_000);
    const [crashed, queued] = await Promise.all([p.execute({ db: "a", sql: "crash" }), p.execute({ db: "a", sql: "sleep 1" })]);
    expect(crashed).toEqual({ ok: false, error: "serial worker died", timedOut: false });
    expect(queued).toEqual({ ok: true, rows: [["sleep 1"]] });
    expect(SerialWorker.started.map((w) => w.received)).toEqual([["crash", "sleep 1"], ["sleep 1"]]);
    await p.close();
  });

  it("close answers the running and the queued statements", async () => {
    const p = pool(1_000);
    await new Promise((r) => setTimeout(r, 10));
    const pending = [p.execute({ db: "a", sql: "hang" }), p.execute({ db: "a", sql: "hang" }), p.execute({ db: "a", sql: "hang" })];
    await p.close();
    const closed = { ok: false, error: "executor is closed", timedOut: false };
    expect(await Promise.all(pending)).toEqual([closed, closed, closed]);
  });

  it("without a pipeline (the default) the second statement waits for the first answer", async () => {
    const p = pool(1_000, 1);
    const first = p.execute({ db: "a", sql: "sleep 40" });
    const second = p.execute({ db: "a", sql: "sleep 1" });
    await new Promise((r) => setTimeout(r, 20));
    expect(SerialWorker.started[0].received).toEqual(["sleep 40"]);
    await Promise.all([first, second]);
    expect(SerialWorker.started[0].received).toEqual(["sleep 40", "sleep 1"]);
    await p.close();
  });
});

/**
 * A batching scripted worker (executor-pool.ts `batch`): takes several statements per message, runs
 * them in order, and — the worst case the pool must handle — holds every answer until its whole batch
 * is done; `running()` is its progress record, as sql-worker.mjs writes one.
 */
class BatchWorker implements PoolWorker {
  static started: BatchWorker[] = [];
  readonly messages: string[][] = [];
  #current: { id: number; startedAt: number } | null = null;
  exited = false;
  readonly events: PoolWorkerEvents;
  constructor(events: PoolWorkerEvents) {
    this.events = events;
    BatchWorker.started.push(this);
    setTimeout(() => !this.exited && this.events.message({ ready: true }), 2);
  }
  send(job: WorkerJob): void {
    this.sendBatch([job]);
  }
  sendBatch(jobs: WorkerJob[]): void {
    this.messages.push(jobs.map((j) => j.sql));
    void this.#run(jobs);
  }
  running() {
    return this.#current;
  }
  async #run(jobs: WorkerJob[]): Promise<void> {
    const answers = [];
    for (const job of jobs) {
      if (this.exited) return;
      this.#current = { id: job.id, startedAt: Date.now() };
      const [verb, ms] = job.sql.split(" ");
      if (verb === "hang") return;
      if (verb === "crash") return void this.kill();
      await new Promise((r) => setTimeout(r, Number(ms)));
      answers.push({ id: job.id, ok: true, rows: [[job.sql]] });
    }
    if (!this.exited) this.events.message({ answers });
  }
  kill(): Promise<void> {
    if (!this.exited) {
      this.exited = true;
      setTimeout(() => this.events.exit("batch worker died"), 1);
    }
    return Promise.resolve();
  }
}

function batchPool(timeoutMs: number) {
  BatchWorker.started = [];
  return new ExecutorPool({ jobs: 1, timeoutMs, pipeline: 8, batch: 4, spawn: (events) => new BatchWorker(events) });
}

const ok = (sql: string) => ({ ok: true, rows: [[sql]] });

describe("ExecutorPool batches", () => {
  it("sends statements submitted together as one message and takes their answers from one", async () => {
    const p = batchPool(1_000);
    await new Promise((r) => setTimeout(r, 10)); // the worker is ready
    const sqls = ["sleep 1", "sleep 2", "sleep 3", "sleep 4", "sleep 5", "sleep 6"];
    expect(await Promise.all(sqls.map((sql) => p.execute({ db: "a", sql })))).toEqual(sqls.map(ok));
    expect(BatchWorker.started[0].messages).toEqual([sqls.slice(0, 4), sqls.slice(4)]);
    await p.close();
  });

  it("each statement of a batch gets its own deadline, from its own start, though the answers before it are held", async () => {
    const p = batchPool(150);
    await new Promise((r) => setTimeout(r, 10));
    // Answered together after 240 ms, past one deadline from the batch's start; each alone is within it.
    const results = await Promise.all([p.execute({ db: "a", sql: "sleep 120" }), p.execute({ db: "a", sql: "sleep 120" })]);
    expect(results).toEqual([ok("sleep 120"), ok("sleep 120")]);
    expect(p.restarts).toBe(0);
    await p.close();
  });

  it("a hang in the middle of a batch is the TIMEOUT; the finished statement before it and the one after run again on the replacement", async () => {
    const p = batchPool(100);
    await new Promise((r) => setTimeout(r, 10));
    const results = await Promise.all(["sleep 5", "hang", "sleep 5"].map((sql) => p.execute({ db: "a", sql })));
    expect(results).toEqual([ok("sleep 5"), { ok: false, error: "TIMEOUT", timedOut: true }, ok("sleep 5")]);
    expect(BatchWorker.started.map((w) => w.messages)).toEqual([[["sleep 5", "hang", "sleep 5"]], [["sleep 5", "sleep 5"]]]);
    expect(p.restarts).toBe(1);
    await p.close();
  });

  it("a crash in the middle of a batch is charged to the statement that was running, not the oldest unanswered", async () => {
    const p = batchPool(1_000);
    await new Promise((r) => setTimeout(r, 10));
    const results = await Promise.all(["sleep 5", "crash", "sleep 5"].map((sql) => p.execute({ db: "a", sql })));
    expect(results).toEqual([ok("sleep 5"), { ok: false, error: "batch worker died", timedOut: false }, ok("sleep 5")]);
    await p.close();
  });

  it("a worker without a progress record gets one statement per message", async () => {
    SerialWorker.started = [];
    const p = new ExecutorPool({ jobs: 1, timeoutMs: 1_000, pipeline: 8, batch: 4, spawn: (events) => new SerialWorker(events) });
    await new Promise((r) => setTimeout(r, 10));
    await Promise.all(["sleep 1", "sleep 1", "sleep 1"].map((sql) => p.execute({ db: "a", sql })));
    expect(SerialWorker.started[0].received).toEqual(["sleep 1", "sleep 1", "sleep 1"]);
    await p.close();
  });
});
