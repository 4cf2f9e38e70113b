// Tests lib/data/schema-text.ts: schema text of METHOD.md §1.3, known answers written by hand from the spec.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { renderSchema, SchemaEntryError, TablesEntrySchema, type TablesEntry } from "../../lib/data/schema-text.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const entryOf = (file: string, dbId: string): TablesEntry =>
  TablesEntrySchema.parse((JSON.parse(readFileSync(ROOT + file, "utf8")) as { db_id: string }[]).find((e) => e.db_id === dbId));

describe("renderSchema on real entries", () => {
  it("renders Spider concert_singer exactly", () => {
    // Read by hand from data/spider/tables.json: tables stadium, singer, concert, singer_in_concert;
    // types by column index 1..21; primary_keys [1,8,15,20]; foreign_keys [[18,1],[21,8],[20,15]]
    // → col 18 concert.Stadium_ID -> stadium.Stadium_ID, col 21 -> singer.Singer_ID, col 20 -> concert.concert_ID.
    // Col 14 Is_male has type "others"; col 0 "*" is skipped; no trailing blank line.
    const expected = [
      "Database: concert_singer",
      "",
      "Table: stadium",
      "  - Stadium_ID (number, PRIMARY KEY)",
      "  - Location (text)",
      "  - Name (text)",
      "  - Capacity (number)",
      "  - Highest (number)",
      "  - Lowest (number)",
      "  - Average (number)",
      "",
      "Table: singer",
      "  - Singer_ID (number, PRIMARY KEY)",
      "  - Name (text)",
      "  - Country (text)",
      "  - Song_Name (text)",
      "  - Song_release_year (text)",
      "  - Age (number)",
      "  - Is_male (others)",
      "",
      "Table: concert",
      "  - concert_ID (number, PRIMARY KEY)",
      "  - concert_Name (text)",
      "  - Theme (text)",
      "  - Stadium_ID (text, FOREIGN KEY -> stadium.Stadium_ID)",
      "  - Year (text)",
      "",
      "Table: singer_in_concert",
      "  - concert_ID (number, PRIMARY KEY, FOREIGN KEY -> concert.concert_ID)",
      "  - Singer_ID (text, FOREIGN KEY -> singer.Singer_ID)",
    ].join("\n");
    expect(renderSchema(entryOf("data/spider/tables.json", "concert_singer"), "spider")).toBe(expected);
  });

  it("flattens BIRD toxicology's composite key [7,8]", () => {
    // primary_keys [1,4,[7,8],10] → {1,4,7,8,10}; foreign_keys [[2,10],[5,10],[9,4],[8,1],[7,1]];
    // column 7 = connected.atom_id, 8 = connected.atom_id2, 9 = connected.bond_id; all types text.
    const text = renderSchema(entryOf("data/bird/dev_tables.json", "toxicology"), "bird");
    expect(text).toContain(
      ["Table: connected", "  - atom_id (text, PRIMARY KEY, FOREIGN KEY -> atom.atom_id)", "  - atom_id2 (text, PRIMARY KEY, FOREIGN KEY -> atom.atom_id)", "  - bond_id (text, FOREIGN KEY -> bond.bond_id)", ""].join("\n"),
    );
    expect(text.endsWith("Table: molecule\n  - molecule_id (text, PRIMARY KEY)\n  - label (text)")).toBe(true);
  });
});

describe("renderSchema on synthetic entries", () => {
  const base = {
    db_id: "toy",
    table_names_original: ["Dept", "Emp"],
    column_names_original: [[-1, "*"], [0, "id"], [0, "code"], [1, "eid"], [1, "dept_ref"]] as [number, string][],
    column_types: ["text", "number", null, "number"], // col 2 null, col 4 absent → text
    primary_keys: [1],
    foreign_keys: [] as [number, number][],
  };

  it("skips *, defaults missing types to text, and separates tables with one blank line", () => {
    expect(renderSchema(TablesEntrySchema.parse(base), "spider")).toBe(
      "Database: toy\n\nTable: Dept\n  - id (number, PRIMARY KEY)\n  - code (text)\n\nTable: Emp\n  - eid (number)\n  - dept_ref (text)",
    );
  });

  it("renders only the LAST foreign-key pair of a column", () => {
    // [4→1] then [4→2]: the map keeps 4→2 = Dept.code.
    const text = renderSchema(TablesEntrySchema.parse({ ...base, foreign_keys: [[4, 1], [4, 2]] }), "spider");
    expect(text).toContain("  - dept_ref (text, FOREIGN KEY -> Dept.code)");
    expect(text).not.toContain("Dept.id)");
  });

  it("flattens nested BIRD primary keys recursively", () => {
    // [[1, [3]], [[4]]] → {1, 3, 4}; column 2 stays without PRIMARY KEY.
    const text = renderSchema(TablesEntrySchema.parse({ ...base, primary_keys: [[1, [3]], [[4]]] }), "bird");
    expect(text.split("\n").filter((line) => line.includes("PRIMARY KEY"))).toEqual(["  - id (number, PRIMARY KEY)", "  - eid (number, PRIMARY KEY)", "  - dept_ref (text, PRIMARY KEY)"]);
  });

  it("refuses nested primary keys in a Spider entry", () => {
    const entry = TablesEntrySchema.parse({ ...base, primary_keys: [1, [3, 4]] });
    expect(() => renderSchema(entry, "spider")).toThrow(SchemaEntryError);
    expect(() => renderSchema(entry, "spider")).toThrow(/nested primary key \[3,4\]/);
  });

  it("refuses out-of-range column references", () => {
    expect(() => renderSchema(TablesEntrySchema.parse({ ...base, foreign_keys: [[4, 9]] }), "spider")).toThrow(/column 9/);
  });
});
