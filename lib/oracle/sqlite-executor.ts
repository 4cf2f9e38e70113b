/**
 * Oracle execution, the SQLite executor (METHOD.md §2.1, §11.1): the killable process pool of
 * lib/oracle/sandbox.ts (deadline by SIGKILL, caps, read-only refusals and SQLite's error text in
 * lib/oracle/sql-worker.mjs), registered as engine `sqlite`, the default of every oracle.
 * @module
 */
import { registerExecutor } from "./executor.ts";
import { SqlSandbox } from "./sandbox.ts";

registerExecutor("sqlite", (opts) => new SqlSandbox(opts));
