/**
 * Report stage, input adapter (METHOD.md §1.2, §1.3): the question, evidence and rendered schema of
 * each query, read from a run's dataset directory (examples file and tables file only — databases
 * are not opened, so a report builds where only the JSON files exist).
 * @module
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { DATASETS, datasetNames, parseExamples, parseTablesEntry, readJsonFile, renderSchema, type DatasetName } from "../data/index.ts";
import { InputFileError } from "../errors.ts";

/** What the episode view shows about one query besides its trajectory. */
export interface QueryText {
  question: string;
  evidence: string;
  /** BIRD `difficulty`, Spider `hardness`, else "unknown" (METHOD.md §1.2). */
  difficulty: string;
}

/** Question/evidence by query id and schema text by db_id for one dataset directory. */
export interface DatasetContext {
  queries: Map<string, QueryText>;
  schemas: Map<string, string>;
}

/**
 * Loads the context of `dataset` from `dataDir` (resolved against `cwd`). Returns a reason string
 * instead when the files are absent, so the caller can count and report it.
 */
export function loadDatasetContext(dataset: string, dataDir: string, cwd: string): DatasetContext | string {
  if (!DATASETS.has(dataset)) return `dataset "${dataset}" has no known file layout (${datasetNames().join(", ")})`;
  const name: DatasetName = dataset;
  const dir = resolve(cwd, dataDir);
  const layout = DATASETS.get(name).layout;
  const examplesFile = join(dir, layout.examples);
  const tablesFile = join(dir, layout.tables);
  for (const file of [examplesFile, tablesFile]) {
    if (!existsSync(file)) return `${file} is missing, so ${dataset} questions and schemas are not shown (run the report where the run's data_dir exists)`;
  }
  const fix = `restore the official ${name} files in ${dir}`;
  const parsed = parseExamples(readJsonFile(examplesFile, fix).value, name, examplesFile);
  const queries = new Map<string, QueryText>();
  for (const e of parsed.examples) queries.set(e.id, { question: e.question, evidence: e.evidence, difficulty: e.difficulty });
  const schemas = new Map<string, string>();
  const tables = readJsonFile(tablesFile, fix).value;
  if (!Array.isArray(tables)) throw new InputFileError(tablesFile, "expected a JSON list of schema entries", fix);
  tables.forEach((raw, index) => {
    const entry = parseTablesEntry(raw);
    if (!entry.success) throw new InputFileError(tablesFile, `entry ${index}: ${entry.error.issues[0].path.join(".")}: ${entry.error.issues[0].message}`, fix);
    schemas.set(entry.data.db_id, renderSchema(entry.data, name));
  });
  return { queries, schemas };
}
