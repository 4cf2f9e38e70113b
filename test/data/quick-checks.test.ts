// The hand-written quick checks in front of the zod schemas (schema-text.ts `parseTablesEntry`,
// examples.ts `parseExamples`): whatever the quick check decides, the outcome is the schema's —
// the same acceptance, the same parsed entry, the same first issue as the reason.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseExamples } from "../../lib/data/examples.ts";
import { parseTablesEntry, TablesEntrySchema } from "../../lib/data/schema-text.ts";
import { REPO } from "../helpers/run-fixture.ts";

const tables = JSON.parse(readFileSync(join(REPO, "data", "spider", "tables.json"), "utf8")) as Record<string, unknown>[];
const base = tables[0];

/** What the loader reports of a refusal: the first issue's path, message and code. */
const firstIssue = ([issue]: Array<{ path: unknown; message: string; code: string }>) => ({ path: issue.path, message: issue.message, code: issue.code });

/** Entries that differ from a valid one in one field: each is accepted or refused as zod does. */
const variants: Array<[string, unknown]> = [
  ["valid", base],
  ["not an object", [base]],
  ["null", null],
  ["a string", "x"],
  ["db_id padded", { ...base, db_id: "  pets_1 " }],
  ["db_id blank", { ...base, db_id: "   " }],
  ["db_id a number", { ...base, db_id: 7 }],
  ["db_id absent", (({ db_id: _, ...rest }) => rest)(base)],
  ["table name a number", { ...base, table_names_original: [1] }],
  ["tables absent", (({ table_names_original: _, ...rest }) => rest)(base)],
  ["column pair of 3", { ...base, column_names_original: [[-1, "*", 1]] }],
  ["column pair of 1", { ...base, column_names_original: [[-1]] }],
  ["column index −2", { ...base, column_names_original: [[-2, "*"]] }],
  ["column index 0.5", { ...base, column_names_original: [[0.5, "a"]] }],
  ["column index a string", { ...base, column_names_original: [["0", "a"]] }],
  ["column name null", { ...base, column_names_original: [[0, null]] }],
  ["column types absent", (({ column_types: _, ...rest }) => rest)(base)],
  ["column types null", { ...base, column_types: null }],
  ["column type null", { ...base, column_types: [null, "text"] }],
  ["column type a number", { ...base, column_types: [1] }],
  ["primary keys absent", (({ primary_keys: _, ...rest }) => rest)(base)],
  ["primary keys nested", { ...base, primary_keys: [[1, [2, 3]], 4] }],
  ["primary key −1", { ...base, primary_keys: [-1] }],
  ["primary key a string", { ...base, primary_keys: ["1"] }],
  ["primary key nested string", { ...base, primary_keys: [[1, "2"]] }],
  ["foreign keys absent", (({ foreign_keys: _, ...rest }) => rest)(base)],
  ["foreign key −1", { ...base, foreign_keys: [[-1, 2]] }],
  ["foreign key of 3", { ...base, foreign_keys: [[1, 2, 3]] }],
  ["foreign key target 1.5", { ...base, foreign_keys: [[1, 1.5]] }],
  ["foreign keys an object", { ...base, foreign_keys: { 0: [1, 2] } }],
  ["extra keys", { ...base, note: { deep: [1] } }],
];

describe("parseTablesEntry: the schema's outcome, faster", () => {
  it.each(variants)("%s", (_, raw) => {
    const quick = parseTablesEntry(raw);
    const schema = TablesEntrySchema.safeParse(raw);
    expect(quick.success).toBe(schema.success);
    if (quick.success && schema.success) expect(quick.data).toEqual(schema.data);
    else if (!quick.success && !schema.success) expect(firstIssue(quick.error.issues)).toEqual(firstIssue(schema.error.issues));
  });

  it("every entry of the bundled Spider tables.json parses as the schema parses it", () => {
    for (const raw of tables) expect(parseTablesEntry(raw)).toEqual(TablesEntrySchema.safeParse(raw));
  });
});

// The snapshot was recorded with parseExamples before the quick check existed (every record through
// the zod schema), so it is the schema's own answer for these records.
describe("parseExamples: quick-checked records give the schema's examples and reasons", () => {
  const record = { db_id: "pets_1", question: "How many pets?", query: "SELECT count(*) FROM pets", hardness: "easy" };
  const records: unknown[] = [
    record,
    { ...record, question_id: 30 },
    { ...record, question_id: "q3" },
    { ...record, question_id: null },
    { ...record, question_id: true },
    { ...record, db_id: 1 },
    { ...record, question: null },
    { ...record, query: ["SELECT 1"] },
    { ...record, evidence: null },
    { ...record, evidence: 2 },
    { ...record, SQL: null },
    { ...record, difficulty: null },
    { ...record, hardness: 3 },
    { ...record, db_id: "" },
    [record],
    null,
    7,
  ];

  it("Spider and BIRD: every record valid or invalid with zod's first issue", () => {
    for (const dataset of ["spider", "bird"] as const) {
      const parsed = parseExamples(records.map((r) => (r !== null && typeof r === "object" && !Array.isArray(r) && dataset === "bird" ? { ...r, SQL: (r as { query?: unknown }).query } : r)), dataset, "f.json");
      expect(parsed).toMatchSnapshot(dataset);
    }
  });
});
