/**
 * Experiment runs, the database set that scores them (METHOD.md §1.1, §1.4, §2.3): the Spider
 * test-suite databases when the config names them (the paper's protocol: a prediction must match on
 * the canonical database and on every variant), else the single databases under `data_dir`. A
 * config that names test-suite databases which are not there stops with the command that gets them,
 * unless `--allow-single-db` accepts the single set; the choice is recorded in the run manifest.
 * @module
 */
import { join } from "node:path";
import { databaseRootsOf, loadDataset } from "../data/dataset.ts";
import { datasetAdapter } from "../data/datasets/index.ts";
import { databaseSetShape, discoverDatabases } from "../data/databases.ts";
import type { Dataset } from "../data/types.ts";
import { MeritError } from "../errors.ts";
import type { ExperimentConfig } from "./config.ts";

/** What the manifest records as `database_set`. */
export interface DatabaseSetRecord {
  /** `test-suite`: canonical + variant databases per db_id; `single`: one database per db_id. */
  kind: "test-suite" | "single";
  /** Database root as configured (relative paths stay relative); a layout with several roots joins them with " + ". */
  root: string;
  databases: number;
  files: number;
  /** Database manifest hash of the set (METHOD.md §1.4; = `dataset.database_manifest_hash`). */
  tree_hash: string;
  /** Whether `--allow-single-db` was given. */
  allow_single_db: boolean;
  [key: string]: string | number | boolean;
}

export interface ConfigDataset {
  dataset: Dataset;
  databaseSet: DatabaseSetRecord;
  /** Lines for stderr (scoring on the single set although the config names test-suite databases). */
  warnings: string[];
}

export interface ConfigDatasetOptions {
  /** Accept the single databases when the config's test-suite databases are absent (CI, the demo). */
  allowSingleDb?: boolean;
  /** The config file, named in messages. */
  configFile?: string;
  /** How to accept the single databases, in the refusal (default "pass --allow-single-db"; a study: its `databases` field). */
  optOut?: string;
}

/** Loads the config's dataset on its database set; throws a one-line MeritError when the test-suite set is required and absent. */
export async function loadConfigDataset(config: ExperimentConfig, opts: ConfigDatasetOptions = {}): Promise<ConfigDataset> {
  const allow = opts.allowSingleDb ?? false;
  const where = opts.configFile ?? "the config";
  // Every root of the layout (Spider-DK: its own, then Spider's), as "a + b"; one root for Spider and BIRD.
  const singleRoot = databaseRootsOf(config.dataset, config.data_dir).join(" + ");
  const single = async (warnings: string[]): Promise<ConfigDataset> => {
    const dataset = await loadDataset({ name: config.dataset, dir: config.data_dir });
    return { dataset, databaseSet: record("single", singleRoot, dataset, allow), warnings };
  };
  const root = config.test_suite_databases;
  if (root === undefined) return single([]);
  if (!datasetAdapter(config.dataset).testSuiteDatabases) throw new MeritError(`${where}: test_suite_databases applies to Spider only (BIRD has one database per db_id); remove it`);
  const problem = await testSuiteProblem(root, config);
  if (problem === null) {
    const dataset = await loadDataset({ name: config.dataset, dir: config.data_dir, databaseRoot: root });
    return { dataset, databaseSet: record("test-suite", root, dataset, allow), warnings: [] };
  }
  if (!allow) {
    throw new MeritError(
      `${where} scores Spider on the test-suite databases in ${root} (the paper's protocol), but ${problem}; run \`make data-spider\` (or \`merit data download spider-testsuite\`) to get them, or ${opts.optOut ?? "pass --allow-single-db"} to score on the single databases of ${singleRoot} (not the paper's protocol)`,
    );
  }
  return single([`warning: --allow-single-db: ${problem}, so runs are scored on the single databases of ${singleRoot}; EX is not the paper's test-suite EX (the manifest records database_set "single")`]);
}

/** Why `root` is not a complete test-suite set for the config's examples, or null when it is. */
async function testSuiteProblem(root: string, config: ExperimentConfig): Promise<string | null> {
  const discovery = await discoverDatabases(root);
  if (discovery.manifest.length === 0) return `${root} holds no .sqlite files`;
  const shape = databaseSetShape(discovery.databases);
  if (shape.withoutVariants.length > 0) {
    const [first] = shape.withoutVariants;
    return `${shape.withoutVariants.length} of its ${shape.databases} databases have no test-suite variants (first: ${join(root, first)} holds only ${discovery.databases.get(first)?.allPaths.length ?? 0} .sqlite file)`;
  }
  const dataset = await loadDataset({ name: config.dataset, dir: config.data_dir, databaseRoot: root });
  const used = [...new Set(dataset.examples.map((e) => e.dbId))].filter((dbId) => !discovery.databases.has(dbId)).sort();
  if (used.length > 0) return `it lacks ${used.length} database(s) the examples use (${used.slice(0, 5).join(", ")}${used.length > 5 ? ", …" : ""})`;
  return null;
}

function record(kind: DatabaseSetRecord["kind"], root: string, dataset: Dataset, allow: boolean): DatabaseSetRecord {
  const shape = databaseSetShape(dataset.databases);
  return { kind, root, databases: shape.databases, files: shape.files, tree_hash: dataset.databaseManifestHash, allow_single_db: allow };
}
