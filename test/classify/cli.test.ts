/**
 * Tests `merit classify` (lib/cli/classify.ts, DESIGN.md §2): a JSONL round trip on a temp file adds
 * error_type and error_subtype and keeps every other byte of each line; bad lines are input errors
 * that name the file and the line number (exit 2).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";

const temp = mkdtempSync(join(tmpdir(), "merit-classify-"));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

async function runCli(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

function writeInput(name: string, text: string): string {
  const file = join(temp, name);
  writeFileSync(file, text);
  return file;
}

// Input lines and the expected output lines, written by hand from METHOD.md §3.
const INPUT = [
  '{"index":0,"db_id":"concert_singer","status":"CORRECT","db_error":null}',
  '{"index":1,"db_id":"pets_1","status":"DENOTATION_MISMATCH","db_error":null}',
  '{"index":2,"db_id":"pets_1","status":"EXECUTION_ERROR","db_error":"no such column: nme"}',
  '{"status":"TIMEOUT","db_error":"TIMEOUT","x":1.0,"big":12345678901234567890}',
  '{"db_error":"misuse of aggregate function count()","status":"EXECUTION_ERROR"}',
  '{"status":"DENOTATION_MISMATCH","db_error":null,"predicted_exec_ok":false}',
  '{"status":"NO_DATABASE","db_error":"database not found: /x/wta_1.sqlite"}',
  '{"status":"EXECUTION_ERROR","db_error":"row value misused","error_type":"stale","note":"é"}',
];
const EXPECTED = [
  '{"index":0,"db_id":"concert_singer","status":"CORRECT","db_error":null,"error_type":null,"error_subtype":null}',
  '{"index":1,"db_id":"pets_1","status":"DENOTATION_MISMATCH","db_error":null,"error_type":"Result Mismatch","error_subtype":"Unknown"}',
  '{"index":2,"db_id":"pets_1","status":"EXECUTION_ERROR","db_error":"no such column: nme","error_type":"Schema Linking","error_subtype":"Missing Column"}',
  // appended textually: 1.0 and the 20-digit integer keep their exact spelling
  '{"status":"TIMEOUT","db_error":"TIMEOUT","x":1.0,"big":12345678901234567890,"error_type":"Execution","error_subtype":"Timeout"}',
  '{"db_error":"misuse of aggregate function count()","status":"EXECUTION_ERROR","error_type":"Aggregation","error_subtype":"DBMS Aggregate Misuse"}',
  '{"status":"DENOTATION_MISMATCH","db_error":null,"predicted_exec_ok":false,"error_type":"Unknown","error_subtype":"Unknown"}',
  '{"status":"NO_DATABASE","db_error":"database not found: /x/wta_1.sqlite","error_type":"Execution","error_subtype":"DB Not Found"}',
  // an existing error_type is replaced where it stands; error_subtype is appended
  '{"status":"EXECUTION_ERROR","db_error":"row value misused","error_type":"Unknown","note":"é","error_subtype":"Unknown"}',
];

describe("merit classify", () => {
  it("writes the classified lines to --out", async () => {
    const input = writeInput("in.jsonl", INPUT.join("\n") + "\n");
    const output = join(temp, "out.jsonl");
    const { code } = await runCli(["classify", "--in", input, "--out", output]);
    expect(code).toBe(0);
    expect(readFileSync(output, "utf8")).toBe(EXPECTED.join("\n") + "\n");
  });

  it("prints to stdout by default, also without a final newline and with CRLF line ends", async () => {
    const input = writeInput("crlf.jsonl", INPUT.slice(0, 3).join("\r\n"));
    const { code, out } = await runCli(["classify", "--in", input]);
    expect(code).toBe(0);
    expect(out).toEqual(EXPECTED.slice(0, 3));
  });

  it("keeps whitespace inside a line and handles an empty object body", async () => {
    const input = writeInput("spaced.jsonl", '{ "status" : "EXECUTION_ERROR", "db_error" : "incomplete input" }\n');
    const { out } = await runCli(["classify", "--in", input]);
    expect(out).toEqual(['{ "status" : "EXECUTION_ERROR", "db_error" : "incomplete input","error_type":"Syntax","error_subtype":"Parse Failure"}']);
  });

  it("an empty file gives no lines", async () => {
    const { code, out } = await runCli(["classify", "--in", writeInput("empty.jsonl", "")]);
    expect(code).toBe(0);
    expect(out).toEqual([]);
  });

  const BAD: [string, string, RegExp][] = [
    ["malformed JSON", `${INPUT[0]}\n${INPUT[1]}\n{"status": "CORRECT",\n`, /line 3: malformed JSON/],
    ["a blank line", `${INPUT[0]}\n\n${INPUT[1]}\n`, /line 2: blank line/],
    ["a non-object", `${INPUT[0]}\n[1, 2]\n`, /line 2: not a JSON object/],
    ["an unknown status", '{"status":"WRONG","db_error":null}\n', /line 1: "status" must be one of CORRECT, /],
    ["a missing db_error", '{"status":"EXECUTION_ERROR"}\n', /line 1: "db_error" must be a string or null/],
    ["a numeric db_error", '{"status":"EXECUTION_ERROR","db_error":3}\n', /line 1: "db_error" must be a string or null, got 3/],
    ["a non-boolean predicted_exec_ok", '{"status":"CORRECT","db_error":null,"predicted_exec_ok":"yes"}\n', /line 1: "predicted_exec_ok" must be a boolean/],
  ];
  for (const [what, text, message] of BAD) {
    it(`${what} is an InputFileError naming the file and line (exit 2)`, async () => {
      const input = writeInput("bad.jsonl", text);
      const { code, out, err } = await runCli(["classify", "--in", input]);
      expect(code).toBe(2);
      expect(out).toEqual([]);
      expect(err.join("\n")).toContain(`${input}: `);
      expect(err.join("\n")).toMatch(message);
    });
  }

  it("a missing --in or unreadable file is refused with exit 2", async () => {
    expect((await runCli(["classify"])).err.join("\n")).toMatch(/missing required flag --in/);
    const missing = await runCli(["classify", "--in", join(temp, "nope.jsonl")]);
    expect(missing.code).toBe(2);
    expect(missing.err.join("\n")).toMatch(/cannot read \(ENOENT\)/);
  });
});
