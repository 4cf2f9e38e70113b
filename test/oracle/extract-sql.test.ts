// Known answers for SQL extraction from model output (METHOD.md §2.7 with §11.3), written from the spec.
import { describe, expect, it } from "vitest";
import { extractSql, singleStatement } from "../../lib/oracle/extract-sql.ts";

describe("extractSql", () => {
  it("takes the first <answer> block, case-insensitively and non-greedily", () => {
    expect(extractSql("think...\n<ANSWER>SELECT a FROM t</answer> then <answer>SELECT b FROM t</answer>")).toBe("SELECT a FROM t");
  });
  it("takes a fenced block inside the answer, with or without the sql tag", () => {
    expect(extractSql("<answer>```sql\nSELECT 1\n```</answer>")).toBe("SELECT 1");
    expect(extractSql("Here:\n```\nSELECT name FROM singer\n```\nDone.")).toBe("SELECT name FROM singer");
  });
  it("cuts prose before the first whole word WITH or SELECT", () => {
    expect(extractSql("The query is: SELECT x FROM y")).toBe("SELECT x FROM y");
    // The documented caveat: the English word "with" in prose also starts the SQL.
    expect(extractSql("Start with this: SELECT 1")).toBe("with this: SELECT 1");
    // "selected" is not the whole word SELECT.
    expect(extractSql("I selected: WITH a AS (SELECT 1) SELECT * FROM a")).toBe("WITH a AS (SELECT 1) SELECT * FROM a");
  });
  it("cuts at a stray tag or a chat-role line", () => {
    expect(extractSql("SELECT a FROM t\n<reflection>oops")).toBe("SELECT a FROM t");
    expect(extractSql("SELECT a FROM t\nHuman: next question")).toBe("SELECT a FROM t");
    expect(extractSql("SELECT a FROM t</answer>")).toBe("SELECT a FROM t");
  });
  it("returns the empty string for no or several statements", () => {
    expect(extractSql("")).toBe("");
    expect(extractSql("   \n ")).toBe("");
    expect(extractSql("SELECT 1; SELECT 2")).toBe("");
    expect(extractSql("SELECT 1; DROP TABLE t")).toBe("");
  });
});

describe("singleStatement", () => {
  it("drops one trailing semicolon followed only by whitespace or comments", () => {
    expect(singleStatement("SELECT 1;")).toBe("SELECT 1");
    expect(singleStatement("  SELECT 1  ;  -- done\n")).toBe("SELECT 1");
    expect(singleStatement("SELECT 1; /* c */")).toBe("SELECT 1");
  });
  it("ignores semicolons inside quotes, brackets and comments", () => {
    expect(singleStatement("SELECT ';' , \"a;b\", `c;d`, [e;f] FROM t -- x;y\n")).toBe("SELECT ';' , \"a;b\", `c;d`, [e;f] FROM t -- x;y");
    expect(singleStatement("SELECT 'it''s;' FROM t;")).toBe("SELECT 'it''s;' FROM t");
    expect(singleStatement("SELECT 1 /* ; */ FROM t")).toBe("SELECT 1 /* ; */ FROM t");
  });
  it("rejects two semicolons and text after the semicolon", () => {
    expect(singleStatement("SELECT 1;;")).toBe("");
    expect(singleStatement("SELECT 1; x")).toBe("");
  });
});
