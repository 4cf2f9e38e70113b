/**
 * Dataset adapters (lib/data/adapter.ts, DESIGN.md §1 "Datasets"): the registry is what configs, the
 * initial cache and the CLI accept, with a did-you-mean error; a registered adapter's record keys,
 * schema rule, prompt family and scoring spec are what the loader, the renderer and the oracle use;
 * a layout with several database roots is discovered as one set.
 */
import Database from "better-sqlite3";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../lib/cli.ts";
import { DATASETS, datasetAdapter, datasetNames, registerDataset } from "../../lib/data/datasets/index.ts";
import { loadDataset } from "../../lib/data/dataset.ts";
import { discoverDatabaseRoots, discoverDatabases } from "../../lib/data/databases.ts";
import { parseExamples } from "../../lib/data/examples.ts";
import { renderSchema } from "../../lib/data/schema-text.ts";
import { parseConfig } from "../../lib/experiment/config.ts";
import { protocolIdOf } from "../../lib/oracle/oracle.ts";
import { templateName } from "../../lib/prompts.ts";

const temp = mkdtempSync(join(tmpdir(), "merit-adapter-"));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

function sqlite(path: string, table: string): void {
  mkdirSync(join(path, ".."), { recursive: true });
  const db = new Database(path);
  db.exec(`CREATE TABLE ${table} (id INTEGER PRIMARY KEY); INSERT INTO ${table} VALUES (1)`);
  db.close();
}

// A Spider variant whose questions live under another key and whose databases are partly Spider's.
registerDataset({
  ...datasetAdapter("spider"),
  name: "toy-variant",
  title: "Toy variant",
  layout: { examples: "questions.json", tables: "tables.json", databaseRoot: "database", extraDatabaseRoots: ["../toy-base/database"], gold: "gold.sql" },
  record: { question: "OtherQuestion", gold: "query" },
  scoring: { ...datasetAdapter("spider").scoring, protocolId: (p) => `toy-${p}-v1` },
});

describe("the dataset registry", () => {
  it("lists the bundled datasets first, in table order, and refuses unknown names with a suggestion", () => {
    expect(datasetNames().slice(0, 2)).toEqual(["spider", "bird"]);
    expect(() => datasetAdapter("brid")).toThrow(/unknown dataset "brid"\. Did you mean "bird"\?/);
    expect(() => registerDataset(datasetAdapter("spider"))).toThrow(/dataset "spider" is already registered/);
  });

  it("configs accept any registered dataset and name the nearest for a typo", () => {
    expect(parseConfig({ dataset: "toy-variant", data_dir: "d", initial_cache: "c" }).dataset).toBe("toy-variant");
    expect(() => parseConfig({ dataset: "spidr", data_dir: "d", initial_cache: "c" }, "c.json")).toThrow(/dataset: unknown dataset "spidr"\. Did you mean "spider"\?/);
  });

  it("merit eval and merit data info refuse an unknown dataset with a suggestion", async () => {
    const err: string[] = [];
    const io = { out: () => {}, err: (l: string) => err.push(l) };
    expect(await main(["eval", "--dataset", "spidr", "--pred", "x.sql"], io)).toBe(2);
    expect(await main(["data", "info", "brd"], io)).toBe(2);
    expect(err.join("\n")).toMatch(/--dataset must be one of spider, bird.*got "spidr" \(did you mean "spider"\?\)/);
    expect(err.join("\n")).toMatch(/unknown dataset "brd" \(expected spider, bird.*\) \(did you mean "bird"\?\)/);
  });
});

describe("a registered adapter drives loading, schemas, prompts and scoring ids", () => {
  it("record keys: the question comes from the adapter's key; evidence and difficulty default", () => {
    const parsed = parseExamples([{ db_id: "a", OtherQuestion: " How many? ", question: "ignored", query: "SELECT 1", hardness: "easy" }, { db_id: "a", query: "SELECT 1" }], "toy-variant", "q.json");
    expect(parsed.examples).toEqual([{ id: "0", sourceIndex: 0, dbId: "a", question: "How many?", evidence: "", goldSql: "SELECT 1", difficulty: "unknown" }]);
    expect(parsed.invalid).toEqual([{ sourceIndex: 1, reason: "missing or empty OtherQuestion" }]);
    expect(parseExamples([{ db_id: "a", OtherQuestion: 3, query: "SELECT 1" }], "toy-variant", "q.json").invalid[0].reason).toMatch(/^OtherQuestion: /);
  });

  it("schema rule, prompt family and protocol id come from the adapter", () => {
    const entry = { db_id: "a", table_names_original: ["t"], column_names_original: [[-1, "*"], [0, "id"]] as [number, string][], column_types: ["text", "number"], primary_keys: [[1]], foreign_keys: [] };
    expect(() => renderSchema(entry, "toy-variant")).toThrow(/nested primary key \[1\] in a Toy variant schema/);
    expect(renderSchema(entry, "bird")).toBe("Database: a\n\nTable: t\n  - id (number, PRIMARY KEY)");
    expect(templateName("toy-variant", "repair")).toBe("spider-repair-v4");
    expect(protocolIdOf("toy-variant", "merit")).toBe("toy-merit-v1");
    expect(protocolIdOf("spider", "merit")).toBe("spider-test-suite-merit-v1");
  });

  it("extra database roots: one set, later roots' paths relative to the first, duplicates refused", async () => {
    const own = join(temp, "toy-variant");
    sqlite(join(own, "database/new_a/new_a.sqlite"), "t");
    sqlite(join(temp, "toy-base/database/a/a.sqlite"), "t");
    writeFileSync(join(own, "questions.json"), JSON.stringify([{ db_id: "a", OtherQuestion: "q1", query: "SELECT id FROM t" }, { db_id: "new_a", OtherQuestion: "q2", query: "SELECT id FROM t" }, { db_id: "b", OtherQuestion: "q3", query: "SELECT 1" }]));
    const table = (db: string) => ({ db_id: db, table_names_original: ["t"], column_names_original: [[-1, "*"], [0, "id"]], column_types: ["text", "number"], primary_keys: [1], foreign_keys: [] });
    writeFileSync(join(own, "tables.json"), JSON.stringify(["a", "new_a", "b"].map(table)));
    const data = await loadDataset({ name: "toy-variant", dir: own });
    expect([...data.databases.keys()].sort()).toEqual(["a", "new_a"]);
    expect(data.databases.get("a")?.canonicalPath).toBe(join(temp, "toy-base/database/a/a.sqlite"));

    const both = await discoverDatabaseRoots([join(own, "database"), join(temp, "toy-base/database")]);
    expect(both.manifest.map((m) => m.path)).toEqual(["new_a/new_a.sqlite", "../../toy-base/database/a/a.sqlite"]);
    expect(both.manifestHash).toBe(data.databaseManifestHash);
    const one = await discoverDatabases(join(own, "database"));
    expect(await discoverDatabaseRoots([join(own, "database")])).toEqual(one);

    sqlite(join(temp, "toy-base/database/new_a/new_a.sqlite"), "t");
    await expect(discoverDatabaseRoots([join(own, "database"), join(temp, "toy-base/database")])).rejects.toThrow(/database "new_a" is also in/);
    expect(DATASETS.has("toy-variant")).toBe(true);
  });
});
