/**
 * Dataset vocabulary (METHOD.md §1): one example as every stage sees it, and a loaded dataset with
 * the identities a manifest records.
 * @module
 */

/** A registered dataset's name (lib/data/datasets/index.ts): "spider", "bird", … */
export type DatasetName = string;

/** One benchmark question, kept in source order. */
export interface Example {
  /** Stable id: Spider = source index as a string; BIRD = String(question_id) (METHOD.md §1.2). */
  id: string;
  /** 0-based position in the source JSON list. */
  sourceIndex: number;
  dbId: string;
  question: string;
  /** External knowledge (BIRD evidence, may be ""); "" for datasets without it (Spider). */
  evidence: string;
  /** Gold SQL (evaluator only; never shown to a model). */
  goldSql: string;
  /** The adapter's difficulty field (BIRD `difficulty`, Spider `hardness`), else "unknown". */
  difficulty: string;
}

/** One database as discovered on disk (METHOD.md §1.4). */
export interface DatabaseFiles {
  dbId: string;
  /** The canonical `<root>/<db_id>/<db_id>.sqlite` (or the single candidate). */
  canonicalPath: string;
  /** Every `*.sqlite` file of that db (test-suite layout), sorted by relative POSIX path. */
  allPaths: string[];
}

export interface Dataset {
  name: DatasetName;
  /** Directory the dataset was loaded from. */
  dir: string;
  examples: Example[];
  /**
   * Rendered schema text per db_id (METHOD.md §1.3). Empty when loaded with `schemas: false`
   * (`merit eval`, which prompts no model: the tables file is then only hashed and its db_ids checked).
   */
  schemas: Map<string, string>;
  /** Databases found under the database root, by db_id (missing ones are absent). */
  databases: Map<string, DatabaseFiles>;
  /** content_hash of {dataset_name, sha256(examples file), sha256(tables file)} (METHOD.md §1.4). */
  datasetChecksum: string;
  /** content_hash of the sorted list of {path, size, sha256} of every `*.sqlite` file. */
  databaseManifestHash: string;
}
