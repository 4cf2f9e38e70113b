// Tests lib/report/db-error-text.ts: the episode view's user-facing reason for the oracle's own refusals (Spider's one-statement format); DBMS errors pass through.
import { describe, expect, it } from "vitest";
import { renderOneLine } from "../../lib/oracle/protocol.ts";
import { userFacingDbError } from "../../lib/report/db-error-text.ts";

describe("userFacingDbError", () => {
  it("replaces the internal messages of the Spider line rendering", () => {
    const refused = renderOneLine("SELECT 1; SELECT 2", 634);
    expect(refused).toEqual({ ok: false, error: "Spider prediction is not one statement at source index 634" });
    const text = userFacingDbError(refused.ok ? null : refused.error);
    expect(text).toBe("Not executed: the SQL is not exactly one statement (several statements, or none), and Spider scores one statement per line.");
    expect(text).not.toMatch(/source index/);
    const newline = renderOneLine("SELECT 'a\nb'", 3);
    expect(userFacingDbError(newline.ok ? null : newline.error)).toMatch(/^Not executed: a string literal or quoted name contains a line break/);
    expect(userFacingDbError("Spider prediction is empty after rendering")).toMatch(/^Not executed: no SQL remained/);
  });
  it("keeps DBMS errors and null", () => {
    expect(userFacingDbError("no such column: nme")).toBe("no such column: nme");
    expect(userFacingDbError(null)).toBeNull();
  });
});
