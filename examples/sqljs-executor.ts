/**
 * Example plugin, the executor seam with a real second SQL engine (issue 21 §1): engine `sqljs`,
 * SQLite compiled to WebAssembly by sql.js 1.17.0 (SQLite 3.54.1, its own build and compile options)
 * instead of better-sqlite3's native SQLite 3.53.2, with nothing in lib/ changed. It proves that an
 * executor needs only lib/plugin.ts: `registerExecutor`, the worker pool the bundled sandbox runs in
 * (`ExecutorPool`, lib/oracle/executor-pool.ts: slots, queue, deadline, replacement), and the statement
 * rules every executor shares (lib/oracle/sql-rules.mjs: what is refused before preparing and with
 * which message, the result caps and set de-duplication), so the two engines can only differ where
 * SQLite itself does.
 *
 * The same hostile-SQL limits as the bundled `sqlite` executor (METHOD.md §2.1, §11.1):
 * - deadline: each statement runs in a worker thread (sql.js is synchronous WebAssembly, so the
 *   event loop that set the timer is not the one that is stuck); past `timeoutMs` the answer is
 *   `TIMEOUT` and the thread is terminated (V8 interrupts WebAssembly too) and replaced. Deadlines
 *   start only once a thread has compiled sql.js.
 * - read-only: a database is the file's bytes loaded into WebAssembly memory, so nothing can reach
 *   the file; still, statements that are not queries are refused as the bundled executor refuses them
 *   (`refusedKeyword`, message from a throwaway copy's prepare error via `refusalOf`), the connection
 *   runs with `query_only`, and a WITH statement whose program opens a write transaction (its EXPLAIN
 *   has `Transaction` with p2 ≠ 0, which is what sqlite3_stmt_readonly reads; sql.js does not export
 *   it) or a statement without result columns is `not authorized` (better-sqlite3's reader/readonly
 *   backstop). ATTACH is refused by keyword. `load_extension` is compiled out of sql.js ("no such
 *   function"); it is defined to fail with "not authorized", what SQLite says with extension loading
 *   off (better-sqlite3, Python), so the two engines give the same error text.
 * - caps: `collectRows` with the row and byte caps (`overCap`), SQLite's heap capped by
 *   `hard_heap_limit` (1 GiB, as the bundled worker) and the thread's JavaScript heap by `workerHeapMiB`.
 * - one statement: text after the first statement other than whitespace, `;` and comments is
 *   better-sqlite3's "The supplied SQL string contains more than one statement".
 * Values follow `Rows` (lib/oracle/types.ts): integers as bigint (sql.js `useBigInt`), reals as
 * number, text as string (sql.js decodes UTF-8 with U+FFFD for bad bytes, as better-sqlite3; the
 * `ignore` mode drops them), blobs as Uint8Array. sql.js's legacy extension functions (median,
 * stdev, replicate, …) are turned off (`useOldExtensionFunctions: false`) so only SQLite's own
 * functions exist. Known engine differences are measured by examples/sqljs-parity.ts (README).
 * Limit: each thread holds every database it has opened in WebAssembly memory (at most 4 GiB), so
 * a thread that opens several of BIRD's largest databases (hundreds of MB each) can run out of it; Spider's are a few MB.
 *
 * Run: `merit eval --plugin examples/sqljs-executor.ts --executor sqljs …`, or a config with
 * `"oracle": {"executor": "sqljs"}` and `"plugins": ["examples/sqljs-executor.ts"]`; from code: import this file, then `new Oracle({ …, engine: "sqljs" })`.
 * Test: `npx vitest run examples/sqljs-executor.test.ts`; parity: `node examples/sqljs-parity.ts`.
 * @module
 */
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { ExecutorPool, registerExecutor, SQL_RULES_URL, type ExecutorOptions, type PoolWorker, type PoolWorkerEvents, type SqlExecutor, type WorkerMessage } from "../lib/plugin.ts";

/** SQLite heap cap per database connection, as the bundled worker's MERIT_SQL_HEAP_LIMIT default. */
const HEAP_LIMIT = 1024 * 1024 * 1024;

/** The worker thread: CommonJS source run with `eval` (no loader needed for a .ts plugin). */
const WORKER_SOURCE = String.raw`
const { parentPort, workerData } = require("node:worker_threads");
const { readFileSync } = require("node:fs");
(async () => {
  const rules = await import(workerData.rulesUrl);
  const SQL = await require(workerData.sqlJsPath)({ useOldExtensionFunctions: false });
  const files = new Map();
  const connections = new Map();
  const open = (path) => {
    let bytes = files.get(path);
    if (bytes === undefined) files.set(path, (bytes = readFileSync(path)));
    const db = new SQL.Database(bytes);
    db.exec("PRAGMA query_only = ON; PRAGMA hard_heap_limit = " + workerData.heapLimit);
    // sql.js is built without load_extension (OMIT_LOAD_EXTENSION: "no such function"); a standard
    // build with extension loading off, like better-sqlite3's and Python's, answers "not authorized".
    // sql.js registers a function with the arity of the JavaScript function: one for each form.
    db.create_function("load_extension", function (file) { throw new Error("not authorized"); });
    db.create_function("load_extension", function (file, entry) { throw new Error("not authorized"); });
    return db;
  };
  const connect = (path) => {
    let db = connections.get(path);
    if (db === undefined) connections.set(path, (db = open(path)));
    return db;
  };
  const drop = (path) => {
    connections.get(path)?.close();
    connections.delete(path);
  };
  // better-sqlite3's rule for the text after the first statement: only whitespace, ';' and comments.
  const onlySkipped = (tail) => /^(?:[\s;]|--[^\n]*(?:\n|$)|\/\*[\s\S]*?(?:\*\/|$))*$/.test(tail);
  function refusal(path, sql, keyword) {
    const scratch = open(path);
    try {
      scratch.prepare(sql).free();
      return rules.refusalOf(sql, keyword, null);
    } catch (error) {
      return rules.refusalOf(sql, keyword, error instanceof Error ? error.message : String(error));
    } finally {
      scratch.close();
    }
  }
  function writes(db, sql) {
    const plan = db.exec("EXPLAIN " + sql)[0];
    return plan !== undefined && plan.values.some((op) => op[1] === "Transaction" && op[3] !== 0);
  }
  function run(job) {
    const refused = rules.refusedKeyword(job.sql);
    if (refused !== null) throw new Error(refusal(job.db, job.sql, refused));
    const db = connect(job.db);
    const statements = db.iterateStatements(job.sql);
    const first = statements.next();
    if (first.done) throw new Error("The supplied SQL string contains no statements");
    const stmt = first.value;
    try {
      if (!onlySkipped(statements.getRemainingSQL())) throw new RangeError("The supplied SQL string contains more than one statement");
      const keyword = (rules.LEADING_KEYWORD.exec(job.sql)?.[1] ?? "").toUpperCase();
      if (stmt.getColumnNames().length === 0 || (keyword === "WITH" && writes(db, job.sql))) {
        drop(job.db); // a refused statement was prepared on this connection; never reuse it
        throw new Error(rules.NOT_AUTHORIZED);
      }
      function* iterate() {
        while (stmt.step()) yield stmt.get(null, { useBigInt: true });
      }
      return rules.collectRows(iterate(), job);
    } finally {
      try { stmt.free(); } catch {}
    }
  }
  parentPort.on("message", (job) => {
    try {
      parentPort.postMessage({ id: job.id, ok: true, rows: run(job) });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      parentPort.postMessage({ id: job.id, ok: false, error: message, overCap: error instanceof rules.OverCap });
    }
  });
  parentPort.postMessage({ ready: true });
})().catch((error) => parentPort.postMessage({ failed: String(error && error.stack || error) }));
`;

/** Starts one thread (compiling sql.js, then `{ready: true}`) and wires it to the pool. */
function startThread(events: PoolWorkerEvents, heapMiB: number): PoolWorker {
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { rulesUrl: SQL_RULES_URL, sqlJsPath: createRequire(import.meta.url).resolve("sql.js"), heapLimit: HEAP_LIMIT },
    resourceLimits: { maxOldGenerationSizeMb: heapMiB },
    stdout: true,
    stderr: true,
  });
  worker.stdout.resume();
  worker.stderr.resume();
  worker.on("message", (msg: WorkerMessage) => events.message(msg));
  worker.on("error", () => {}); // reported through exit
  worker.on("exit", () => events.exit("sql.js worker died: the statement exhausted memory or crashed"));
  return {
    send: (job) => worker.postMessage(job),
    kill: async () => {
      await worker.terminate();
    },
  };
}

/**
 * A pool of terminable worker threads running sql.js: the `sqljs` executor. The slots, queue,
 * deadline (terminate and replace, `TIMEOUT`), crash replacement and `restarts` are `ExecutorPool`'s.
 */
export class SqlJsExecutor extends ExecutorPool implements SqlExecutor {
  readonly engine = "sqljs";

  constructor(opts: ExecutorOptions = {}) {
    super({ ...opts, spawn: startThread, closedError: "executor is closed" });
  }
}

registerExecutor("sqljs", (opts) => new SqlJsExecutor(opts));
