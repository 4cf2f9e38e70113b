/**
 * The engine-independent worker pool (lib/oracle/executor-pool.ts; METHOD.md §2.1, §11.1) with an
 * in-process test double for a worker: FIFO order, the deadline (TIMEOUT, kill, replacement,
 * `restarts`), no deadline before `ready`, crash and failed-start replacement, idempotent close.
 * The real engines behind it are tested by sandbox-*.test.ts, hostile.test.ts and examples/sqljs-executor.test.ts.
 */
import { describe, expect, it } from "vitest";
import { ExecutorPool, type PoolWorker, type PoolWorkerEvents, type WorkerJob } from "../../lib/oracle/executor-pool.ts";

/** A scripted worker: `sql` "sleep N" answers after N ms, "hang" never, "crash" exits; ready after `startMs`. */
class FakeWorker implements PoolWorker {
  static started: FakeWorker[] = [];
  readonly jobs: WorkerJob[] = [];
  exited = false;
  readonly events: PoolWorkerEvents;
  readonly heapMiB: number;
  constructor(
    events: PoolWorkerEvents,
    heapMiB: number,
    startMs: number,
    failStart = false,
  ) {
    this.events = events;
    this.heapMiB = heapMiB;
    FakeWorker.started.push(this);
    setTimeout(() => (this.exited ? undefined : this.events.message(failStart ? { failed: "no engine" } : { ready: true })), startMs);
  }
  send(job: WorkerJob): void {
    this.jobs.push(job);
    const [verb, ms] = job.sql.split(" ");
    if (verb === "crash") setTimeout(() => this.kill(), 1);
    if (verb === "sleep") setTimeout(() => !this.exited && this.events.message({ id: job.id, ok: true, rows: [[job.sql]] }), Number(ms));
    if (verb === "error") setTimeout(() => !this.exited && this.events.message({ id: job.id, ok: false, error: "no such table: t", overCap: false }), 1);
  }
  kill(): Promise<void> {
    if (!this.exited) {
      this.exited = true;
      setTimeout(() => this.events.exit("fake worker died"), 1);
    }
    return Promise.resolve();
  }
}

function pool(opts: { jobs?: number; timeoutMs?: number; startMs?: number; failFirst?: boolean } = {}) {
  FakeWorker.started = [];
  let n = 0;
  return new ExecutorPool({
    jobs: opts.jobs ?? 1,
    timeoutMs: opts.timeoutMs ?? 200,
    maxRows: 7,
    spawn: (events, heapMiB) => new FakeWorker(events, heapMiB, opts.startMs ?? 5, opts.failFirst === true && n++ === 0),
  });
}

describe("ExecutorPool", () => {
  it("answers in FIFO order on one worker, with the resolved caps and request defaults", async () => {
    const p = pool();
    const results = await Promise.all([p.execute({ db: "a", sql: "sleep 30" }), p.execute({ db: "a", sql: "sleep 1" }), p.execute({ db: "a", sql: "error" })]);
    expect(results).toEqual([
      { ok: true, rows: [["sleep 30"]] },
      { ok: true, rows: [["sleep 1"]] },
      { ok: false, error: "no such table: t", timedOut: false },
    ]);
    const [worker] = FakeWorker.started;
    expect(worker.jobs.map((j) => j.id)).toEqual([1, 2, 3]);
    expect(worker.jobs[0]).toEqual({ id: 1, db: "a", sql: "sleep 30", maxRows: 7, maxBytes: 512 * 1024 * 1024, textErrors: "replace", distinct: false, pack: false });
    expect(worker.heapMiB).toBe(2048);
    expect(p.restarts).toBe(0);
    await p.close();
  });

  it("a statement past the deadline is TIMEOUT, its worker killed and replaced; the next statement runs", async () => {
    const p = pool({ timeoutMs: 100 });
    const [hung, next] = await Promise.all([p.execute({ db: "a", sql: "hang" }), p.execute({ db: "a", sql: "sleep 1" })]);
    expect(hung).toEqual({ ok: false, error: "TIMEOUT", timedOut: true });
    expect(next).toEqual({ ok: true, rows: [["sleep 1"]] });
    expect(FakeWorker.started.map((w) => w.exited)).toEqual([true, false]);
    expect(p.restarts).toBe(1);
    expect(p.workers).toEqual([FakeWorker.started[1]]);
    await p.close();
  });

  it("start-up does not count against the deadline", async () => {
    const p = pool({ timeoutMs: 100, startMs: 250 });
    expect(await p.execute({ db: "a", sql: "sleep 50" })).toEqual({ ok: true, rows: [["sleep 50"]] });
    await p.close();
  });

  it("a crash answers the statement it ran with the worker's error; a queued statement goes to the replacement", async () => {
    const p = pool();
    const [crashed, queued] = await Promise.all([p.execute({ db: "a", sql: "crash" }), p.execute({ db: "a", sql: "sleep 1" })]);
    expect(crashed).toEqual({ ok: false, error: "fake worker died", timedOut: false });
    expect(queued).toEqual({ ok: true, rows: [["sleep 1"]] });
    expect(FakeWorker.started[0].jobs.map((j) => j.sql)).toEqual(["crash"]);
    expect(p.restarts).toBe(1);
    await p.close();
  });

  it("a worker that fails to start is replaced", async () => {
    const p = pool({ failFirst: true });
    expect(await p.execute({ db: "a", sql: "sleep 1" })).toEqual({ ok: true, rows: [["sleep 1"]] });
    expect(FakeWorker.started[0].jobs).toEqual([]);
    expect(p.restarts).toBe(1);
    await p.close();
  });

  it("close answers running and queued statements, kills every worker, is idempotent; later executions are refused", async () => {
    const p = pool({ jobs: 2 });
    await new Promise((r) => setTimeout(r, 20));
    const pending = [p.execute({ db: "a", sql: "hang" }), p.execute({ db: "a", sql: "hang" }), p.execute({ db: "a", sql: "hang" })];
    await Promise.all([p.close(), p.close()]);
    const closed = { ok: false, error: "executor is closed", timedOut: false };
    expect(await Promise.all(pending)).toEqual([closed, closed, closed]);
    expect(await p.execute({ db: "a", sql: "sleep 1" })).toEqual(closed);
    await new Promise((r) => setTimeout(r, 20));
    expect(FakeWorker.started.map((w) => w.exited)).toEqual([true, true]);
    expect(p.restarts).toBe(0);
  });
  it("grow starts workers up to the count (never fewer), which take queued statements; nothing after close", async () => {
    const p = pool({ jobs: 1 });
    const queued = [p.execute({ db: "a", sql: "sleep 40" }), p.execute({ db: "a", sql: "sleep 40" }), p.execute({ db: "a", sql: "sleep 40" })];
    p.grow(3);
    p.grow(2);
    expect(p.workers).toHaveLength(3);
    await Promise.all(queued);
    expect(FakeWorker.started.map((w) => w.jobs.length)).toEqual([1, 1, 1]); // spread over the new workers
    await p.close();
    p.grow(5);
    expect(FakeWorker.started).toHaveLength(3);
  });
});
