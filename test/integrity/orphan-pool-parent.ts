// Test helper (test/integrity/files-faults.test.ts): a SqlSandbox of two workers (so their watchdog
// is the pool's shell, sandbox.ts `PoolWatchdog`) runs a runaway recursive CTE on each, prints the
// workers' PIDs on one line and waits to be SIGKILLed.
import { SqlSandbox } from "../../lib/oracle/sandbox.ts";

const [db] = process.argv.slice(2);
const sandbox = new SqlSandbox({ jobs: 2, timeoutMs: 600_000 });
await Promise.all([sandbox.execute({ db, sql: "SELECT 1" }), sandbox.execute({ db, sql: "SELECT 2" })]);
const runaway = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";
void sandbox.execute({ db, sql: runaway });
void sandbox.execute({ db, sql: runaway });
setTimeout(() => process.stdout.write(`${sandbox.pids.join(" ")}\n`), 100);
setInterval(() => {}, 1000);
