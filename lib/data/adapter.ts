/**
 * Data loading, dataset adapters (DESIGN.md §1 "Datasets", METHOD.md §1): everything the kit knows
 * about one benchmark in one plain object — its default layout under `data/`, how a raw record
 * becomes an `Example`, how its schema text and prompt context are built, which scoring semantics
 * and protocol id the oracle applies, and where its files come from. A study's dataset is one plugin
 * file outside lib/ that calls `registerDataset` (README "How to add a dataset"; the files' format:
 * data/README.md); the kit's own are in lib/data/datasets/, one line each in its index.ts.
 * @module
 */

/** Where each file of a dataset lives, relative to its directory (METHOD.md §1.1). */
export interface DatasetLayout {
  examples: string;
  /** The tables file; may lie outside the directory (`../spider/tables.json`) when a variant reuses another's schemas. */
  tables: string;
  /** The dataset's own database root (one folder per db_id). */
  databaseRoot: string;
  /**
   * Further database roots searched after `databaseRoot`, relative to the dataset directory (Spider-DK
   * reuses Spider's: `../spider/database`). A db_id found in two roots is an error.
   */
  extraDatabaseRoots?: readonly string[];
  /** Official gold file (`SQL<TAB>db_id`), used only by post-hoc official scoring; absent when the release has none. */
  gold?: string;
}

/** Which keys of a raw record hold the fields of an `Example` (METHOD.md §1.2); ids are `question_id` or the list position. */
export interface RecordFields {
  question: string;
  gold: string;
  /** Key of the external knowledge shown in prompts (BIRD `evidence`); absent = always "". */
  evidence?: string;
  /** Key of the difficulty label; absent or empty = "unknown". */
  difficulty?: string;
}

/**
 * How the oracle scores a prediction (METHOD.md §2.3, §2.4). `test-suite`: Spider semantics under one of
 * the Spider protocols, on every `.sqlite` of the db folder, text decoded with errors="ignore".
 * `set`: BIRD semantics, the set of rows of the canonical database, one protocol.
 */
export interface ScoringSpec {
  semantics: "test-suite" | "set";
  /**
   * The protocol id recorded in summaries, manifests and the initial cache, for the chosen Spider
   * protocol and the dataset scored (`spider`'s and `bird`'s name the dataset, so a plugin dataset
   * that keeps their scoring — `{ ...spider, name: "geoquery" }` — gets an id of its own, not Spider's).
   */
  protocolId(protocol: string, dataset?: string): string;
  /** true iff `--protocol` / config `protocol` chooses among the Spider protocols. */
  protocolChoice: boolean;
  /** Why `--protocol` is refused when `protocolChoice` is false (one line). */
  noProtocolChoice?: string;
}

export interface DatasetAdapter {
  /** Registry name: `--dataset`, config `dataset`, manifests, `data/<name>`. */
  name: string;
  /** Human name, e.g. "Spider dev". */
  title: string;
  layout: DatasetLayout;
  record: RecordFields;
  /** Whether a primary-key item may be a nested list (BIRD composite keys, METHOD.md §1.3). */
  compositePrimaryKeys: boolean;
  /** Prompt template family: templates `<family>-<kind>-v4` in prompts/ (METHOD.md §6.3). */
  promptFamily: string;
  /** Dataset-specific template slots of a question (BIRD: `evidence`). */
  promptContext(question: { evidence: string }): Record<string, string>;
  scoring: ScoringSpec;
  /** Whether config `test_suite_databases` (distilled variants per db_id) applies. */
  testSuiteDatabases: boolean;
  /** How to get the files when they are missing (the end of a one-line error). */
  downloadHint: string;
  /** The make target that fetches what is not bundled (named by `merit preflight`). */
  dataCommand: string;
}
