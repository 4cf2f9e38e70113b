/**
 * Tests lib/classify.ts (METHOD.md §3) on REAL SQLite error messages, produced by executing broken
 * SQL on a Spider database opened read-only with better-sqlite3 (SQLITE_DQS=0 build).
 */
import Database from "better-sqlite3";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { classifyFailure } from "../../lib/classify.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const db = new Database(join(ROOT, "data/spider/database/concert_singer/concert_singer.sqlite"), { readonly: true, fileMustExist: true });
afterAll(() => db.close());

/** The message SQLite raises for `sql` (fails the test if the statement succeeds). */
function sqliteMessage(sql: string): string {
  try {
    const statement = db.prepare(sql);
    if (statement.reader) statement.all();
    else statement.run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`expected SQLite to reject: ${sql}`);
}

// [broken SQL, what SQLite says (checked, so the case is known to be real), type, subtype]
const CASES: [string, RegExp, string, string][] = [
  ["SELECT * FROM singers", /^no such table: singers$/, "Schema Linking", "Missing Table"],
  ["SELECT * FROM main.v", /^no such table: main\.v$/, "Schema Linking", "Missing Table"],
  ["SELECT nme FROM singer", /^no such column: nme$/, "Schema Linking", "Missing Column"],
  // The DQS=0 gotcha: a double-quoted literal is a missing column.
  ['SELECT name FROM singer WHERE name = "Joe"', /^no such column: "Joe" - should this be a string literal/, "Schema Linking", "Missing Column"],
  // `no such view:` from SQLite: name resolution of DROP VIEW fails before the read-only check.
  ["DROP VIEW v", /^no such view: v$/, "Schema Linking", "Missing View"],
  [
    "SELECT singer_id FROM singer JOIN singer_in_concert ON singer.singer_id = singer_in_concert.singer_id",
    /^ambiguous column name: singer_id$/,
    "Schema Linking",
    "Ambiguous Column",
  ],
  ["SELECT foo(name) FROM singer", /^no such function: foo$/, "Syntax", "Unknown Function"],
  ["SELECT FROM singer", /^near "FROM": syntax error$/, "Syntax", "Parse Failure"],
  ["SELECT name FROM singer WHERE (", /^incomplete input$/, "Syntax", "Parse Failure"],
  ["SELECT name FROM singer WHERE name = 'abc", /^unrecognized token: "'abc"$/, "Syntax", "Parse Failure"],
  ["SELECT name FROM singer WHERE count(*) > 1", /^misuse of aggregate function count\(\)$/, "Aggregation", "DBMS Aggregate Misuse"],
  ["SELECT count(*) FROM singer GROUP BY count(*)", /^aggregate functions are not allowed in the GROUP BY clause$/, "Aggregation", "DBMS Aggregate Misuse"],
  ["SELECT name FROM singer LIMIT 'abc'", /^datatype mismatch$/, "Filter/Value", "Type Mismatch"],
  ["DELETE FROM singer", /^attempt to write a readonly database$/, "Execution", "Read Only Violation"],
  ["CREATE VIEW v AS SELECT 1", /^attempt to write a readonly database$/, "Execution", "Read Only Violation"],
  // Messages that no rule covers fall to Unknown (METHOD.md §3 step 1c).
  ["SELECT name FROM singer WHERE singer_id IN (SELECT singer_id, name FROM singer)", /^sub-select returns 2 columns - expected 1$/, "Unknown", "Unknown"],
  ["SELECT substr() FROM singer", /^wrong number of arguments to function substr\(\)$/, "Unknown", "Unknown"],
  ["SELECT (1, 2) FROM singer", /^row value misused$/, "Unknown", "Unknown"],
  ["SELECT name FROM singer WHERE row_number() OVER () > 1", /^misuse of window function row_number\(\)$/, "Unknown", "Unknown"],
  // better-sqlite3's own multi-statement refusal (Python's sqlite3 says the literal tested below).
  ["SELECT 1; SELECT 2", /^The supplied SQL string contains more than one statement$/, "Unknown", "Unknown"],
];

describe("classifier on real SQLite messages (concert_singer, read-only)", () => {
  for (const [sql, expectedMessage, type, subtype] of CASES) {
    it(`${sql} → ${type} / ${subtype}`, () => {
      const message = sqliteMessage(sql);
      expect(message).toMatch(expectedMessage);
      expect(classifyFailure({ status: "EXECUTION_ERROR", dbError: message, predictedExecOk: false })).toEqual({
        errorType: type,
        errorSubtype: subtype,
        evidence: message,
        source: "dbms",
      });
    });
  }
});

describe("messages SQLite cannot produce here (literal text from METHOD.md)", () => {
  // `only SELECT or WITH queries`: the reference oracle's own refusal of non-queries (§3 rule 9).
  // `database not found: <absolute path>`: MERIT's own message for a missing db file (§2.5).
  // `You can only execute one statement at a time.`: Python sqlite3's message, not SQLite's (§3 1c).
  // `TIMEOUT`: the literal db_error the oracle writes for a timed-out prediction (§2.5, §11.1).
  const cases: [string, string, string][] = [
    ["only SELECT or WITH queries are allowed", "Execution", "Read Only Violation"],
    ["database not found: /srv/spider/database/wta_1/wta_1.sqlite", "Execution", "DB Not Found"],
    ["You can only execute one statement at a time.", "Unknown", "Unknown"],
    ["TIMEOUT", "Execution", "Timeout"],
  ];
  for (const [message, type, subtype] of cases) {
    it(`${message} → ${type} / ${subtype}`, () => {
      const c = classifyFailure({ status: message === "TIMEOUT" ? "TIMEOUT" : "EXECUTION_ERROR", dbError: message });
      expect([c?.errorType, c?.errorSubtype]).toEqual([type, subtype]);
    });
  }
});
