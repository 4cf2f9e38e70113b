/**
 * The executor seam (lib/oracle/executor.ts, DESIGN.md §1 "Executors"): the oracle scores through any
 * `SqlExecutor`, not only the SQLite sandbox. A table-lookup executor (no SQL engine at all) stands in
 * for PostgreSQL/DuckDB: its rows and its error text must reach the verdicts unchanged, under both
 * scoring semantics, and engines are created by registered name with a did-you-mean error.
 */
import { describe, expect, it } from "vitest";
import type { DatabaseFiles, Example } from "../../lib/data/types.ts";
import { registerExecutor, type ExecRequest, type ExecResult, type SqlExecutor } from "../../lib/oracle/executor.ts";
import { createExecutor, EXECUTORS } from "../../lib/oracle/executors.ts";
import { Oracle } from "../../lib/oracle/oracle.ts";
import { SqlSandbox } from "../../lib/oracle/sandbox.ts";

/** Answers each SQL text from a table; unknown text is an engine error. Records every request. */
class LookupExecutor implements SqlExecutor {
  readonly engine = "lookup";
  readonly timeoutMs = 1000;
  readonly requests: ExecRequest[] = [];
  closed = false;
  readonly answers: Record<string, ExecResult>;
  constructor(answers: Record<string, ExecResult>) {
    this.answers = answers;
  }
  async execute(request: ExecRequest): Promise<ExecResult> {
    this.requests.push(request);
    return this.answers[request.sql] ?? { ok: false, error: `lookup: no answer for ${request.sql}`, timedOut: false };
  }
  async close(): Promise<void> {
    this.closed = true;
  }
}

const db: DatabaseFiles = { dbId: "shop", canonicalPath: "/nowhere/shop.db", allPaths: ["/nowhere/shop.db"] };
const example = (goldSql: string): Example => ({ id: "0", sourceIndex: 0, dbId: "shop", question: "q", evidence: "", goldSql, difficulty: "unknown" });
const answers: Record<string, ExecResult> = {
  "SELECT n FROM t": { ok: true, rows: [[1n], [2n]] },
  "SELECT n FROM t ORDER BY n DESC": { ok: true, rows: [[2n], [1n]] },
  "SELECT x FROM t": { ok: false, error: "column x does not exist", timedOut: false },
  "SELECT slow()": { ok: false, error: "TIMEOUT", timedOut: true },
};

describe("the oracle on a non-SQLite executor", () => {
  it("test-suite semantics: rows, the engine's error text and TIMEOUT become the four statuses", async () => {
    const executor = new LookupExecutor(answers);
    const oracle = new Oracle({ dataset: "spider", databases: new Map([["shop", db]]), protocol: "strict", executor });
    const gold = example("SELECT n FROM t");
    expect((await oracle.score(gold, "SELECT n FROM t ORDER BY n DESC")).status).toBe("CORRECT"); // no ORDER BY in gold: bag equality
    expect(await oracle.score(gold, "SELECT x FROM t")).toMatchObject({ status: "EXECUTION_ERROR", dbError: "column x does not exist", dbExecutions: 1 });
    expect((await oracle.score(gold, "SELECT slow()")).status).toBe("TIMEOUT");
    expect((await oracle.score(example("SELECT n FROM t ORDER BY n DESC"), "SELECT n FROM t")).status).toBe("DENOTATION_MISMATCH");
    expect((await oracle.score(example("SELECT missing"), "SELECT n FROM t")).status).toBe("GOLD_ERROR");
    expect(executor.requests.every((r) => r.db === db.canonicalPath && r.textErrors === "ignore")).toBe(true);
    expect(oracle.executor).toBe(executor);
    expect(() => oracle.sandbox).toThrow(/"lookup" executor, not the SQLite sandbox/);
    await oracle.close();
    expect(executor.closed).toBe(true);
  });

  it("set semantics (BIRD): the prediction is asked for distinct rows, and order does not matter", async () => {
    const executor = new LookupExecutor(answers);
    const oracle = new Oracle({ dataset: "bird", databases: new Map([["shop", db]]), executor });
    expect((await oracle.score(example("SELECT n FROM t"), "SELECT n FROM t ORDER BY n DESC")).status).toBe("CORRECT");
    expect(executor.requests[0]).toMatchObject({ sql: "SELECT n FROM t ORDER BY n DESC", distinct: true });
    expect(oracle.protocolId).toBe("bird-set-v1");
    await oracle.close();
  });

  it("engines are created by registered name; an unknown one fails with a suggestion", async () => {
    registerExecutor("lookup-test", () => new LookupExecutor(answers));
    expect(EXECUTORS.names()).toEqual(expect.arrayContaining(["sqlite", "lookup-test"]));
    const oracle = new Oracle({ dataset: "spider", databases: new Map([["shop", db]]), protocol: "strict", engine: "lookup-test" });
    expect(oracle.executor.engine).toBe("lookup");
    expect((await oracle.score(example("SELECT n FROM t"), "SELECT n FROM t")).status).toBe("CORRECT");
    await oracle.close();
    expect(() => createExecutor("sqlit")).toThrow(/unknown executor "sqlit"\. Did you mean "sqlite"\?/);
    const sqlite = createExecutor("sqlite", { timeoutMs: 5000 });
    expect(sqlite).toBeInstanceOf(SqlSandbox);
    expect(sqlite.engine).toBe("sqlite");
    await sqlite.close();
  });
});
