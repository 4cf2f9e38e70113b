// Tests `merit classify --method NAME --plugin FILE.ts` (issue 39 §13: classify had no --plugin): a
// plugin method's classify hook labels the failed lines of a JSONL file from their "sql", in place of
// METHOD.md §3's classifier; a method without a hook, a line without "sql" and a label the hook does
// not declare are refused in one line, exit 2.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";

const tmp = mkdtempSync(join(tmpdir(), "merit-classify-method-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function merit(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

const lines = [
  { query_id: "1", status: "DENOTATION_MISMATCH", db_error: null, sql: "SELECT a FROM t JOIN u ON t.id = u.id" },
  { query_id: "2", status: "DENOTATION_MISMATCH", db_error: null, sql: "SELECT count(*) FROM t" },
  { query_id: "3", status: "EXECUTION_ERROR", db_error: "no such column: x", sql: "SELECT x FROM t" },
  { query_id: "4", status: "CORRECT", db_error: null, sql: "SELECT 1" },
];
const input = join(tmp, "outcomes.jsonl");
writeFileSync(input, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");

describe("merit classify --method", () => {
  it("labels with merit_fine_types' hook (examples/error-taxonomy.ts); without --method, METHOD.md §3's types", async () => {
    const r = await merit(["classify", "--in", input, "--plugin", "examples/error-taxonomy.ts", "--method", "merit_fine_types"]);
    expect(r.code, r.err.join("\n")).toBe(0);
    expect(r.out.map((l) => JSON.parse(l).error_type)).toEqual(["Mismatch: join", "Mismatch: aggregation", "Schema Linking", null]);
    expect(r.out.map((l) => JSON.parse(l).error_subtype)).toEqual([null, null, null, null]);
    const coarse = await merit(["classify", "--in", input]);
    expect(coarse.out.map((l) => JSON.parse(l).error_type)).toEqual(["Result Mismatch", "Result Mismatch", "Schema Linking", null]);
  });

  it("refuses a method without a classify hook, and a failed line without sql, in one line", async () => {
    const none = await merit(["classify", "--in", input, "--method", "merit"]);
    expect(none.code).toBe(2);
    expect(none.err).toHaveLength(1);
    expect(none.err[0]).toMatch(/--method merit has no classify hook; leave --method out for METHOD\.md §3's classifier/);
    const bare = join(tmp, "bare.jsonl");
    writeFileSync(bare, JSON.stringify({ status: "DENOTATION_MISMATCH", db_error: null }) + "\n");
    const nosql = await merit(["classify", "--in", bare, "--plugin", "examples/error-taxonomy.ts", "--method", "merit_fine_types"]);
    expect(nosql.code).toBe(2);
    expect(nosql.err.filter((l) => l.startsWith("merit classify"))).toHaveLength(1);
    expect(nosql.err.at(-1)).toMatch(/bare\.jsonl: line 1: --method merit_fine_types reads the attempt's "sql" \(a string\), got undefined/);
  });
});
