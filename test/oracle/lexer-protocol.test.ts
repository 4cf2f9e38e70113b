/**
 * Oracle pre-processing (METHOD.md §2.3, §2.4, §11.3, §11.6): the sqlparse-compatible lexer and
 * statement splitter, the test-suite's `remove_distinct`, MERIT's one-line rendering, the per-protocol
 * preparation of Spider predictions and golds, BIRD's Python-sqlite3 statement rule, and the sandbox's
 * emulation of SQLite's double-quoted-string fallback. Expected strings are derived by hand from the
 * sqlparse token rules quoted in the comments.
 */
import Database from "better-sqlite3";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  NO_SINGLE_STATEMENT,
  PYTHON_MULTI_STATEMENT,
  goldOrderMatters,
  prepareBirdPrediction,
  prepareSpiderGold,
  prepareSpiderPrediction,
  renderOneLine,
} from "../../lib/oracle/protocol.ts";
import { SqlSandbox } from "../../lib/oracle/sandbox.ts";
import { removeDistinct, removeDistinctByTokens, splitStatements, tokenizeSql, tokenizeSqlByRules } from "../../lib/oracle/sql-lexer.ts";
import { PyRandom } from "../../lib/random.ts";
import { readFileSync } from "node:fs";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const texts = (sql: string) => tokenizeSql(sql).map((t) => t.text);
const split = (sql: string) => splitStatements(tokenizeSql(sql)).map((s) => s.map((t) => t.text).join(""));

describe("tokenizeSql", () => {
  it("gives one token per whitespace character and keeps multi-word keywords whole", () => {
    expect(texts("a  b")).toEqual(["a", " ", " ", "b"]); // sqlparse: Whitespace is \s+? (lazy, one char)
    expect(texts("a\r\nb")).toEqual(["a", "\r\n", "b"]); // Newline: \r\n|\r|\n
    expect(texts("ORDER\nBY x")).toEqual(["ORDER\nBY", " ", "x"]); // ORDER\s+BY\b is one Keyword
    expect(texts("a -- c\nb")).toEqual(["a", " ", "-- c\n", "b"]); // single-line comment eats its newline
    expect(texts("'it''s' \"q\"")).toEqual(["'it''s'", " ", '"q"']);
    expect(tokenizeSql("SELECT x").map((t) => t.text).join("")).toBe("SELECT x");
  });
});

describe("splitStatements (sqlparse StatementSplitter)", () => {
  it.each([
    // After ';' the statement absorbs following spaces and single-line comments, not newlines.
    ["SELECT 1; SELECT 2", ["SELECT 1; ", "SELECT 2"]],
    ["SELECT 1;\nSELECT 2", ["SELECT 1;", "\nSELECT 2"]],
    ["SELECT 1; -- c\nSELECT 2", ["SELECT 1; -- c\n", "SELECT 2"]],
    ["SELECT 1; /* c */ SELECT 2", ["SELECT 1; ", "/* c */ SELECT 2"]],
    ["SELECT ';'; SELECT 2", ["SELECT ';'; ", "SELECT 2"]], // ';' inside a string does not split
    ["SELECT (1; 2)", ["SELECT (1; 2)"]], // level 1 inside parentheses
    ["SELECT CASE WHEN a THEN 1 END; SELECT 2", ["SELECT CASE WHEN a THEN 1 END; ", "SELECT 2"]],
    ["SELECT 1;   ", ["SELECT 1;   "]],
    ["SELECT 1;\n", ["SELECT 1;"]], // a whitespace-only last statement is dropped
    ["SELECT 1;;", ["SELECT 1;", ";"]],
    ["   ", []],
  ])("%j", (sql, statements) => {
    expect(split(sql)).toEqual(statements);
  });
});

describe("removeDistinct (test-suite remove_distinct)", () => {
  it.each([
    ["SELECT DISTINCT a FROM t", "SELECT  a FROM t"],
    ["select Distinct a", "select  a"],
    ["SELECT count(DISTINCT x) FROM t", "SELECT count( x) FROM t"],
    ["SELECT DISTINCT(a) FROM t", "SELECT (a) FROM t"], // Name token "DISTINCT" (followed by "(")
    ["SELECT a FROM t WHERE b = 'distinct'", "SELECT a FROM t WHERE b = 'distinct'"], // string token "'distinct'"
    ['SELECT "distinct" FROM t', 'SELECT "distinct" FROM t'], // symbol token '"distinct"'
    ["SELECT t.distinct FROM t", "SELECT t. FROM t"], // Name token "distinct" after "." is dropped too
    ["SELECT a AS distinctive FROM t", "SELECT a AS distinctive FROM t"],
    ["SELECT DISTINCT a; SELECT b", "SELECT  a; "], // first statement only, with its absorbed space
    ["", ""],
  ])("%j → %j", (sql, out) => {
    expect(removeDistinct(sql)).toBe(out);
  });
});

describe("removeDistinct's shortcut (no `;`, no \"distinct\") gives what the tokens give", () => {
  it("on every bundled prediction and gold query, and on edge cases", () => {
    const predictions = readFileSync(join(ROOT, "data", "predictions", "spider_dev__Deepseek-Coder-7B.sql"), "utf8").split("\n");
    const golds = (JSON.parse(readFileSync(join(ROOT, "data", "spider", "dev.json"), "utf8")) as Array<{ query: string }>).map((e) => e.query);
    const edge = ["", " ", "\n", "\r\n\t ", "\u00a0", "-- c", "# c\n", "/* c */", "SELECT 1 -- x", "SELECT 'a;b'", "SELECT DİSTINCT a", "SELECT dIsTiNcT a", "SELECT ΣΑΣ", "SELECT a\u2028b", "SELECT 1 /* unclosed", "SELECT 1; SELECT 2", "SELECT 1;\n", "SELECT DISTINCT a"];
    for (const sql of [...predictions, ...golds, ...edge]) expect(removeDistinct(sql)).toBe(removeDistinctByTokens(sql));
  });
});

describe("tokenizeSql's first-character dispatch gives what trying every rule gives", () => {
  it("on every bundled prediction file and gold query", () => {
    const files = ["spider_dev__Deepseek-Coder-7B.sql", "spider_dev__Llama3-8B.sql", "spider_dev__SFT_CodeS_7B.sql", "bird_dev__SFT_CodeS_7B_EK.sql"];
    const lines = files.flatMap((f) => readFileSync(join(ROOT, "data", "predictions", f), "utf8").split("\n"));
    const golds = (JSON.parse(readFileSync(join(ROOT, "data", "spider", "dev.json"), "utf8")) as Array<{ query: string }>).map((e) => e.query);
    expect(lines.length + golds.length).toBeGreaterThan(5000);
    for (const sql of [...lines, ...golds]) expect(tokenizeSql(sql)).toEqual(tokenizeSqlByRules(sql));
  });

  it("on random text over every ASCII character and the non-ASCII ones the rules name or fold", () => {
    // every ASCII character, letters and digits more often, keyword fragments, and non-ASCII
    // characters that matter: ´ (a rule of its own), À/é (NAME_START), K (U+212A) and ſ (U+017F,
    // which case-fold to ASCII letters), U+00A0 and U+2028 (\s), Σ and ٣ (\p{L}, \p{N})
    const ascii = Array.from({ length: 128 }, (_, i) => String.fromCharCode(i));
    const pieces = [...ascii, ..."abcxyzABCXYZ0123456789_ .".split(""), "JOIN", "LEFT ", "ORDER BY", "NOT NULL", "NULLS FIRST", "UNION ALL", "END IF", "GROUP\nBY", "like", "REGEXP", "CASE", "as", "0x1F", "1.5e-3", "-2", "´", "À", "é", "\u212a", "\u017f", "\u00a0", "\u2028", "Σ", "٣", "''", '""', "/*", "*/", "--", "# ", "[a]", "`b`", "::", ":="];
    const random = new PyRandom(22);
    for (let n = 0; n < 4000; n++) {
      let sql = "";
      const length = 1 + random.randbelow(24);
      for (let i = 0; i < length; i++) sql += pieces[random.randbelow(pieces.length)];
      expect(tokenizeSql(sql), JSON.stringify(sql)).toEqual(tokenizeSqlByRules(sql));
    }
  });
});

describe("renderOneLine (MERIT Spider line rendering)", () => {
  it.each([
    ["SELECT a\nFROM t", "SELECT a FROM t"],
    ["SELECT a\r\nFROM t", "SELECT a FROM t"],
    ["SELECT a\n\tFROM t", "SELECT a  FROM t"], // newline and tab: one space each
    ["SELECT a  FROM t", "SELECT a  FROM t"],
    ["SELECT a /* x */ FROM t", "SELECT a   FROM t"], // space, comment → space, space
    ["SELECT a -- c\nFROM t", "SELECT a  FROM t"], // the comment token includes its newline
    ["  SELECT 1 ;  ", "SELECT 1 ;"],
    ["SELECT 1;\n", "SELECT 1;"],
  ])("%j → %j", (sql, out) => {
    expect(renderOneLine(sql, 7)).toEqual({ ok: true, sql: out });
  });
  it("fails on a token that contains a newline", () => {
    const expected = { ok: false, error: "Spider line format cannot preserve a token newline at source index 7" };
    expect(renderOneLine("SELECT a FROM t ORDER\nBY a", 7)).toEqual(expected);
    expect(renderOneLine("SELECT 'a\nb'", 7)).toEqual(expected);
  });
  it("fails unless there is exactly one statement", () => {
    const expected = { ok: false, error: "Spider prediction is not one statement at source index 3" };
    expect(renderOneLine("SELECT 1; SELECT 2", 3)).toEqual(expected);
    expect(renderOneLine("-- only a comment", 3)).toEqual(expected);
    expect(renderOneLine("SELECT 1;;", 3)).toEqual(expected);
  });
});

describe("prepareSpiderPrediction / prepareSpiderGold", () => {
  const prep = (sql: string, protocol: "official" | "merit" | "strict") => prepareSpiderPrediction(sql, protocol, 0);
  it("substitutes value → 1 in official and merit, not strict (case-sensitive, also inside literals)", () => {
    expect(prep("SELECT a FROM t WHERE b = value", "official")).toEqual({ ok: true, sql: "SELECT a FROM t WHERE b = 1" });
    expect(prep("SELECT a FROM t WHERE b = value", "merit")).toEqual({ ok: true, sql: "SELECT a FROM t WHERE b = 1" });
    expect(prep("SELECT a FROM t WHERE b = value", "strict")).toEqual({ ok: true, sql: "SELECT a FROM t WHERE b = value" });
    expect(prep("SELECT a FROM t WHERE b = 'values'", "official")).toEqual({ ok: true, sql: "SELECT a FROM t WHERE b = '1s'" });
    expect(prep("SELECT VALUE FROM t", "merit")).toEqual({ ok: true, sql: "SELECT VALUE FROM t" });
  });
  it("fixes spaced operators in official and merit, not strict", () => {
    const sql = "SELECT a FROM t WHERE b > = 3 AND c < = 2 AND d ! = 1";
    const fixed = "SELECT a FROM t WHERE b >= 3 AND c <= 2 AND d != 1";
    expect(prep(sql, "official")).toEqual({ ok: true, sql: fixed });
    expect(prep(sql, "merit")).toEqual({ ok: true, sql: fixed });
    expect(prep(sql, "strict")).toEqual({ ok: true, sql });
  });
  it("official keeps the first tab field and drops DISTINCT; merit renders and keeps it", () => {
    expect(prep("SELECT a FROM t\tconcert_singer", "official")).toEqual({ ok: true, sql: "SELECT a FROM t" });
    expect(prep("SELECT a FROM t\tconcert_singer", "merit")).toEqual({ ok: true, sql: "SELECT a FROM t concert_singer" });
    expect(prep("SELECT DISTINCT a FROM t", "official")).toEqual({ ok: true, sql: "SELECT  a FROM t" });
    expect(prep("SELECT DISTINCT a\nFROM t", "merit")).toEqual({ ok: true, sql: "SELECT DISTINCT a FROM t" });
  });
  it("replaces YEAR(CURDATE()) and the whitespace after it by 2020", () => {
    expect(prep("SELECT a FROM t WHERE YEAR(CURDATE()) - b > 3", "official")).toEqual({ ok: true, sql: "SELECT a FROM t WHERE 2020- b > 3" });
  });
  it("reports empty output as no single statement", () => {
    for (const protocol of ["official", "merit", "strict"] as const) {
      expect(prep("", protocol)).toEqual({ ok: false, error: NO_SINGLE_STATEMENT });
      expect(prep("  \n ", protocol)).toEqual({ ok: false, error: NO_SINGLE_STATEMENT });
    }
  });
  it("prepares gold without the value substitution", () => {
    expect(prepareSpiderGold(" SELECT DISTINCT value FROM t ", "official")).toBe("SELECT  value FROM t");
    expect(prepareSpiderGold(" SELECT DISTINCT value FROM t ", "merit")).toBe("SELECT DISTINCT value FROM t");
    expect(prepareSpiderGold("SELECT a FROM t WHERE b > = 1", "strict")).toBe("SELECT a FROM t WHERE b > = 1");
  });
  it("decides order by the substring `order by` of the lower-cased gold", () => {
    expect(goldOrderMatters("SELECT a FROM t ORDER BY a")).toBe(true);
    expect(goldOrderMatters("select a from t order by a")).toBe(true);
    expect(goldOrderMatters("SELECT a FROM t ORDER  BY a")).toBe(false); // two spaces: no substring
    expect(goldOrderMatters("SELECT a FROM t")).toBe(false);
  });
});

describe("prepareBirdPrediction (Python sqlite3: one statement at a time)", () => {
  it.each([
    ["SELECT 1;", { ok: true, sql: "SELECT 1;" }],
    ["  SELECT 1  \n", { ok: true, sql: "SELECT 1" }],
    ["SELECT 1; -- c", { ok: true, sql: "SELECT 1; -- c" }],
    ["SELECT 1; /* c */", { ok: true, sql: "SELECT 1; /* c */" }],
    ["SELECT 1;;", { ok: false, error: PYTHON_MULTI_STATEMENT }], // tail ";" is not whitespace/comment
    ["SELECT 1; SELECT 2", { ok: false, error: PYTHON_MULTI_STATEMENT }],
    // CPython's lstrip_sql skips only whitespace, -- and /* */ comments: "#" is a second statement.
    ["SELECT 1; # c", { ok: false, error: PYTHON_MULTI_STATEMENT }],
    ["", { ok: false, error: NO_SINGLE_STATEMENT }],
    [" \n ", { ok: false, error: NO_SINGLE_STATEMENT }],
  ])("%j", (sql, prepared) => {
    expect(prepareBirdPrediction(sql)).toEqual(prepared);
  });
  it("uses Python's exact message", () => {
    expect(PYTHON_MULTI_STATEMENT).toBe("You can only execute one statement at a time.");
  });
});

describe("double-quoted strings (SQLite DQS fallback emulated on a DQS=0 build)", () => {
  const car1 = join(ROOT, "data/spider/database/car_1/car_1.sqlite");
  it("treats an unknown \"x\" as a string literal and keeps real errors", async () => {
    const direct = new Database(car1, { readonly: true, fileMustExist: true });
    direct.defaultSafeIntegers(true);
    const truth = (sql: string) => direct.prepare(sql).raw(true).all();
    const sandbox = new SqlSandbox({ jobs: 1, timeoutMs: 10_000 });
    try {
      const run = (sql: string) => sandbox.execute({ db: car1, sql });
      for (const [dq, sq] of [
        ['SELECT count(*) FROM car_names WHERE Make = "amc"', "SELECT count(*) FROM car_names WHERE Make = 'amc'"],
        ['SELECT count(*) FROM car_names WHERE Model = "amc"', "SELECT count(*) FROM car_names WHERE Model = 'amc'"],
        ['SELECT MakeId FROM car_names WHERE Make = "ford pinto" ORDER BY MakeId', "SELECT MakeId FROM car_names WHERE Make = 'ford pinto' ORDER BY MakeId"],
      ]) {
        expect(await run(dq)).toEqual({ ok: true, rows: truth(sq) });
      }
      // Not vacuous: the model 'amc' and the make 'ford pinto' exist.
      expect((truth("SELECT count(*) FROM car_names WHERE Model = 'amc'")[0] as bigint[])[0]).toBeGreaterThan(0n);
      expect(truth("SELECT MakeId FROM car_names WHERE Make = 'ford pinto'").length).toBeGreaterThan(1);
      // A double-quoted name that IS a column stays a column; text inside '…' is not rewritten.
      expect(await run('SELECT count(*) FROM car_names WHERE "Make" = Make')).toEqual({ ok: true, rows: truth("SELECT count(*) FROM car_names WHERE Make = Make") });
      expect(await run("SELECT count(*) FROM car_names WHERE Make = '\"amc\"'")).toEqual({ ok: true, rows: [[0n]] });
      // A genuinely missing unquoted column still errors.
      expect(await run("SELECT count(*) FROM car_names WHERE Mak = 'amc'")).toEqual({ ok: false, error: "no such column: Mak", timedOut: false });
    } finally {
      direct.close();
      await sandbox.close();
    }
  });
});
