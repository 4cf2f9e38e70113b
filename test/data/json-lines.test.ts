// The one JSON Lines parser (lib/data/json-file.ts `parseJsonLines`) behind trajectories.jsonl, a run's
// logs (run-dir.ts readJsonLines) and `merit report --annotations`: blank lines skipped, a bad line
// named by its 1-based number with the caller's fix.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { parseJsonLines } from "../../lib/data/json-file.ts";

const Row = z.object({ id: z.string() }).strict();

describe("parseJsonLines", () => {
  it("returns the non-blank lines' values, checked by the schema when given", () => {
    expect(parseJsonLines('{"id":"a"}\n\n  \n{"id":"b"}\n', "f.jsonl", { json: "fix" }, Row)).toEqual([{ id: "a" }, { id: "b" }]);
    expect(parseJsonLines("1\n[2]\n", "f.jsonl", { json: "fix" })).toEqual([1, [2]]);
  });

  it("names the file, the line and the fix of a line that is not JSON", () => {
    expect(() => parseJsonLines('{"id":"a"}\n\n{"id":', "f.jsonl", { json: "delete the partial line" })).toThrow(/f\.jsonl: line 3 is not JSON.*delete the partial line/s);
  });

  it("names the path of the schema's first issue, or (record) for the line itself, with the schema fix", () => {
    expect(() => parseJsonLines('{"id":1}', "f.jsonl", { json: "j", schema: "fix the row" }, Row)).toThrow(/line 1: id Expected string.*fix the row/s);
    expect(() => parseJsonLines("[]", "f.jsonl", { json: "j", schema: "fix the row" }, Row)).toThrow(/line 1: \(record\) Expected object/);
  });
});
