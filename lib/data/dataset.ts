/**
 * Data loading, datasets (METHOD.md §1.1–§1.4): loads a dataset directory, laid out as its adapter
 * says (lib/data/datasets/), into a `Dataset` (examples, rendered schemas, databases on disk,
 * checksums). Missing databases are reported, not fatal.
 * @module
 */
import { join } from "node:path";
import { InputFileError } from "../errors.ts";
import { contentHash } from "../hash.ts";
import type { DatasetLayout } from "./adapter.ts";
import { discoverDatabaseRoots, verifyDatabaseFiles } from "./databases.ts";
import { datasetAdapter } from "./datasets/index.ts";
import { assertAllValid, parseExamples } from "./examples.ts";
import { readJsonFile } from "./json-file.ts";
import { parseTablesEntry, renderSchema, SchemaEntryError } from "./schema-text.ts";
import type { Dataset, DatasetName, Example } from "./types.ts";

/** The layout of a registered dataset (METHOD.md §1.1); throws "unknown dataset … Did you mean …?". */
export function layoutOf(name: DatasetName): DatasetLayout {
  return datasetAdapter(name).layout;
}

/** The database roots of a dataset directory: its own root, then the layout's extra roots. */
export function databaseRootsOf(name: DatasetName, dir: string): string[] {
  const layout = layoutOf(name);
  return [layout.databaseRoot, ...(layout.extraDatabaseRoots ?? [])].map((root) => join(dir, root));
}

export interface LoadDatasetOptions {
  name: DatasetName;
  /** Dataset directory, e.g. `data/spider`. */
  dir: string;
  /** Database root instead of the layout's `<dir>/<databaseRoot>` (the Spider test-suite set). */
  databaseRoot?: string;
  /**
   * false: render no schema text (`Dataset.schemas` stays empty) — for work that prompts no model
   * (`merit eval`). The tables file is still read, hashed into the dataset checksum, and must list
   * every example's db_id. Default true.
   */
  schemas?: boolean;
}

/** Loads one dataset; throws InputFileError for unreadable, malformed or inconsistent input files. */
export async function loadDataset({ name, dir, databaseRoot, schemas: render = true }: LoadDatasetOptions): Promise<Dataset> {
  const adapter = datasetAdapter(name);
  const layout = adapter.layout;
  const examplesFile = join(dir, layout.examples);
  const tablesFile = join(dir, layout.tables);
  const fix = `put the official ${name} files in ${dir} (${adapter.downloadHint})`;

  const examplesJson = readJsonFile(examplesFile, fix);
  const examples = assertAllValid(parseExamples(examplesJson.value, name, examplesFile), examplesFile);
  const tablesJson = readJsonFile(tablesFile, fix);
  const schemas = render ? renderSchemas(tablesJson.value, name, tablesFile) : new Map<string, string>();
  assertKnownDbIds(examples, render ? schemas : tablesDbIds(tablesJson.value, name, tablesFile), examplesFile, tablesFile);

  const discovery = await discoverDatabaseRoots(databaseRoot !== undefined ? [databaseRoot] : databaseRootsOf(name, dir));
  verifyDatabaseFiles(discovery); // a garbage, empty or truncated .sqlite is refused, naming the file
  return {
    name,
    dir,
    examples,
    schemas,
    databases: discovery.databases,
    datasetChecksum: datasetChecksum(name, examplesJson.sha256, tablesJson.sha256),
    databaseManifestHash: discovery.manifestHash,
  };
}

/** content_hash of {dataset_name, examples_sha256, tables_sha256} (METHOD.md §1.4); the sha256s are of file bytes. */
export function datasetChecksum(name: DatasetName, examplesSha256: string, tablesSha256: string): string {
  return contentHash({ dataset_name: name, examples_sha256: examplesSha256, tables_sha256: tablesSha256 });
}

/** A db_id that examples use but whose database file is absent, with how many examples use it. */
export interface MissingDatabase {
  dbId: string;
  examples: number;
}

/** db_ids referenced by examples but absent on disk, sorted; their examples are NO_DATABASE for callers. */
export function missingDatabases(dataset: Pick<Dataset, "examples" | "databases">): MissingDatabase[] {
  const counts = new Map<string, number>();
  for (const example of dataset.examples) {
    if (!dataset.databases.has(example.dbId)) counts.set(example.dbId, (counts.get(example.dbId) ?? 0) + 1);
  }
  return [...counts.keys()].sort().map((dbId) => ({ dbId, examples: counts.get(dbId) ?? 0 }));
}

/** Validates every tables entry and renders its schema text, keyed by db_id (duplicates are an error). */
function renderSchemas(document: unknown, name: DatasetName, file: string): Map<string, string> {
  if (!Array.isArray(document)) throw new InputFileError(file, "expected a JSON list of schema entries", `point the loader at the ${name} tables file`);
  const schemas = new Map<string, string>();
  document.forEach((raw, index) => {
    const parsed = parseTablesEntry(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new InputFileError(file, `entry ${index}: ${issue.path.join(".")}: ${issue.message}`, "repair the entry or re-download the official tables file");
    }
    const entry = parsed.data;
    if (schemas.has(entry.db_id)) throw new InputFileError(file, `db_id "${entry.db_id}" appears twice (second at entry ${index})`, "keep one schema per db_id");
    try {
      schemas.set(entry.db_id, renderSchema(entry, name));
    } catch (error) {
      if (error instanceof SchemaEntryError) throw new InputFileError(file, `entry ${index}: ${error.message}`, "repair the entry or re-download the official tables file", error);
      throw error;
    }
  });
  return schemas;
}

/** The db_ids of a tables file that is not rendered (`schemas: false`): a list of entries with a string db_id each. */
function tablesDbIds(document: unknown, name: DatasetName, file: string): Set<string> {
  if (!Array.isArray(document)) throw new InputFileError(file, "expected a JSON list of schema entries", `point the loader at the ${name} tables file`);
  return new Set(
    document.map((raw, index) => {
      const dbId = (raw as { db_id?: unknown } | null)?.db_id;
      if (typeof dbId !== "string") throw new InputFileError(file, `entry ${index}: db_id: expected a string`, "repair the entry or re-download the official tables file");
      return dbId;
    }),
  );
}

function assertKnownDbIds(examples: readonly Example[], schemas: ReadonlyMap<string, string> | ReadonlySet<string>, examplesFile: string, tablesFile: string): void {
  const unknown = examples.find((example) => !schemas.has(example.dbId));
  if (unknown === undefined) return;
  const count = examples.filter((example) => example.dbId === unknown.dbId).length;
  throw new InputFileError(examplesFile, `unknown db_id "${unknown.dbId}" (example id ${unknown.id} and ${count - 1} more) is not in ${tablesFile}`, "use the tables file of the same release as the examples");
}
