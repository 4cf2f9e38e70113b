/**
 * Preflight of `make reproduce` (README "Notebooks and the full paper grid"): before hours of work
 * start, every input the configs name must be on disk. The checks run in the order of the set-up
 * steps — model files (`make models`), then each config's databases (`make data-spider`,
 * `make data-bird`) — and the first missing input is reported as ONE line naming it and the command
 * that gets it. Cheap on purpose: files are looked up, never hashed (loading a dataset hashes every
 * database; the runs do that).
 * @module
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { databaseRootsOf, layoutOf } from "../data/dataset.ts";
import { datasetAdapter } from "../data/datasets/index.ts";
import { MeritError } from "../errors.ts";
import { loadConfig, type ExperimentConfig } from "./config.ts";

/** One input that is not there, and what gets it. */
export interface MissingInput {
  /** The missing file or folder. */
  path: string;
  /** What it is and which config asks for it. */
  what: string;
  /** The command that gets it, e.g. `make models`. */
  command: string;
}

/** The one line for a missing input. */
export function missingInputLine(m: MissingInput): string {
  return `${m.path} is missing (${m.what}): run \`${m.command}\` first`;
}

/** The command that fetches a dataset's official files and databases. */
/** GGUF files the config's llama backends load (OpenAI-compatible servers need none here). */
function modelInputs(file: string, config: ExperimentConfig): MissingInput[] {
  const inputs: MissingInput[] = [];
  if (config.model.backend === "llama") inputs.push({ path: config.model.path, what: `chat model, ${file} model.path; models/models.json lists it`, command: "make models" });
  if (config.embedder.backend === "llama") inputs.push({ path: config.embedder.path, what: `embedding model, ${file} embedder.path; models/models.json lists it`, command: "make models" });
  return inputs;
}

/** True when `root` holds a database for `dbId`: `<dbId>/*.sqlite` or `<dbId>.sqlite`. */
function hasDatabase(root: string, dbId: string): boolean {
  if (existsSync(join(root, `${dbId}.sqlite`))) return true;
  const dir = join(root, dbId);
  return existsSync(dir) && statSync(dir).isDirectory() && readdirSync(dir).some((f) => f.endsWith(".sqlite"));
}

/**
 * The config's database inputs: its examples file, then the database of every db_id the examples use
 * (the first absent one is reported with how many are absent in all).
 */
function databaseInput(file: string, config: ExperimentConfig): MissingInput | null {
  const layout = layoutOf(config.dataset);
  const command = datasetAdapter(config.dataset).dataCommand;
  const examplesFile = join(config.data_dir, layout.examples);
  if (!existsSync(examplesFile)) return { path: examplesFile, what: `${config.dataset} questions, ${file} data_dir`, command };
  let dbIds: string[];
  try {
    dbIds = [...new Set((JSON.parse(readFileSync(examplesFile, "utf8")) as { db_id: string }[]).map((e) => e.db_id))].sort();
  } catch (error) {
    throw new MeritError(`${examplesFile}: not a ${config.dataset} questions file (${(error as Error).message}); run \`${command}\` again`);
  }
  // A dataset may search several roots (Spider-DK: its own, then Spider's); the first is named.
  const sets: Array<{ roots: string[]; field: string; label: string }> = [{ roots: databaseRootsOf(config.dataset, config.data_dir), field: "data_dir", label: `${config.dataset} databases` }];
  // The paper's Spider protocol scores on the test-suite databases too (METHOD.md §1.1).
  if (config.test_suite_databases !== undefined) sets.push({ roots: [config.test_suite_databases], field: "test_suite_databases", label: `${config.dataset} test-suite databases` });
  for (const { roots, field, label } of sets) {
    const [root] = roots;
    const absent = dbIds.filter((id) => !roots.some((r) => hasDatabase(r, id)));
    if (absent.length === 0) continue;
    if (absent.length === dbIds.length) return { path: root, what: `no ${label} at all (${dbIds.length} needed), ${file} ${field}`, command };
    return { path: join(root, absent[0]), what: `${absent.length} of ${dbIds.length} ${label} absent, ${file} ${field}`, command };
  }
  return null;
}

/**
 * The first missing input of the configs, in set-up order (every model file of every config first,
 * then the databases config by config), or null when everything is there. A config that cannot be
 * read or parsed throws its own one-line InputFileError.
 */
export function firstMissingInput(configFiles: readonly string[]): MissingInput | null {
  const configs = configFiles.map((file) => ({ file, config: loadConfig(file) }));
  for (const { file, config } of configs) {
    for (const input of modelInputs(file, config)) if (!existsSync(input.path)) return input;
  }
  for (const { file, config } of configs) {
    const missing = databaseInput(file, config);
    if (missing) return missing;
  }
  return null;
}
