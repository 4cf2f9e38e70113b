// Test helper (test/integrity/files-faults.test.ts): forks one SQL worker, starts a runaway
// recursive CTE on it, prints the worker's PID and waits to be SIGKILLed.
import { fork } from "node:child_process";

const [worker, db] = process.argv.slice(2);
const child = fork(worker, [], { stdio: ["ignore", "ignore", "inherit", "ipc"] });
child.on("message", (m) => {
  if (!m.ready) return;
  child.send({ id: 1, db, sql: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c", maxRows: 10, maxBytes: 1000, textErrors: "replace" });
  process.stdout.write(`${child.pid}\n`);
});
setInterval(() => {}, 1000);
