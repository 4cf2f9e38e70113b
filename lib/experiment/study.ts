/**
 * Experiment runs, a follow-up study (README "Write a follow-up study"; DESIGN.md §1): one
 * TypeScript file, `studies/NAME/study.ts`, whose default export is `defineStudy({...})` — the
 * datasets, the methods (the paper's and the study's own, registered by its plugin files), the
 * stream seeds, the reference method and the comparisons of interest, how many queries, and the
 * models (`tinyModels()` by default, `realModels()` or `server({...})`). `merit study plan|run`
 * read it; every run it implies is an ordinary experiment config built here (`studyConfig`).
 * @module
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { datasetNames } from "../data/datasets/index.ts";
import { InputFileError, MeritError } from "../errors.ts";
import { registrationCaller } from "../registry.ts";
import { getMethod } from "../methods/index.ts";
import { importErrorText, type PluginSource } from "../plugin-import.ts";
import { parseConfig, type ExperimentConfig, type SubsetRule } from "./config.ts";
import { TINY_CHAT, TINY_EMBEDDER } from "./quick-config.ts";
import type { OrderKind } from "./stream-order.ts";
import { armConditions } from "./study-arms.ts";
import { DEFAULT_PREDICTIONS, studyDatabases, TEST_SUITE_DATABASES, type Study } from "./study-schema.ts";

export * from "./study-schema.ts";
export * from "./study-arms.ts";

/** Where a study writes: run directories, the working call cache and initial caches, the report. */
export interface StudyPaths {
  /** runs/studies/NAME (git-ignored). */
  runs: string;
  /** results/studies/NAME. */
  results: string;
}

export function studyPaths(study: Study, overrides: Partial<StudyPaths> = {}): StudyPaths {
  return { runs: overrides.runs ?? join("runs", "studies", study.name), results: overrides.results ?? join("results", "studies", study.name) };
}

/** The grid folder of one dataset: RUNS/<dataset>, each stream in `<method>-s<seed>`. */
export function datasetRunRoot(paths: StudyPaths, dataset: string): string {
  return join(paths.runs, dataset);
}

/** The run root of one dataset under one stream order: RUNS/<dataset> for the paper's shuffle, RUNS/order-<kind>/<dataset> for a structured order (apart, so each report reads one order). */
export function orderRunRoot(paths: StudyPaths, dataset: string, kind: OrderKind): string {
  return kind === "random" ? datasetRunRoot(paths, dataset) : join(paths.runs, `order-${kind}`, dataset);
}

/** The report folder of one stream order: OUT for the paper's shuffle, OUT/order-<kind> for a structured order. */
export function orderResults(paths: StudyPaths, kind: OrderKind): string {
  return kind === "random" ? paths.results : join(paths.results, `order-${kind}`);
}

/** The study's working LLM call cache (one per study, shared by its datasets and methods). */
export function studyCallCache(paths: StudyPaths): string {
  return join(paths.runs, "llm-call-cache.sqlite");
}

/**
 * The predictions file of a dataset's initial cache, or null when none is known (then the model
 * builds it): the study's `initial` entry resolved against the study file's folder (`file`), else the
 * bundled default (a path of the kit, relative to the working folder like a config's paths).
 */
export function initialPredictions(study: Study, dataset: string, file: string): string | null {
  const given = study.initial[dataset];
  return given !== undefined ? resolve(dirname(file), given) : (DEFAULT_PREDICTIONS[dataset] ?? null);
}

/** A path the study file gives (relative to it), as a path relative to the working folder (configs hold such paths). */
export function studyPath(study: Study, given: string): string {
  const path = resolve(study.dir ?? ".", given);
  const rel = relative(process.cwd(), path);
  return rel === "" ? "." : rel.split(sep).join("/");
}

/** The experiment config of one dataset of the study: the kit's defaults, the study's K, subset and models, and the arm's conditions when `method` is an arm. */
export function studyConfig(study: Study, dataset: string, paths: StudyPaths, method?: string, order: OrderKind = "random"): ExperimentConfig {
  const m = study.models;
  const models =
    m.kind === "tiny"
      ? {
          model: { backend: "llama", path: TINY_CHAT, gpu: false },
          embedder: { backend: "llama", path: TINY_EMBEDDER },
          // the random model never stops by itself; shorter outputs keep the smoke run inside minutes (quick-config.ts)
          decoding: { max_output_tokens: 64 },
        }
      : m.kind === "simulated"
        ? { model: { backend: "simulated", simulation: m.parameters }, embedder: { backend: "simulated" } }
        : m.kind === "real"
        ? { model: { backend: "llama", path: m.chat, gpu: m.gpu }, embedder: { backend: "llama", path: m.embedder } }
        : {
            model: { backend: "openai", base_urls: m.base_urls, model_name: m.model_name, path: m.tokenizer },
            embedder: m.embedder_urls.length > 0 ? { backend: "openai", base_urls: m.embedder_urls } : { backend: "llama" },
          };
  return parseConfig(
    {
      dataset,
      data_dir: study.data[dataset] !== undefined ? studyPath(study, study.data[dataset]) : join("data", dataset),
      ...(study.prompts_dir !== undefined ? { prompts_dir: studyPath(study, study.prompts_dir) } : {}),
      ...(study.feedback !== undefined ? { feedback_regime: study.feedback } : {}),
      ...(study.feedback_noise !== undefined ? { feedback_noise: study.feedback_noise } : {}),
      ...(study.retrieval !== undefined ? { retrieval: study.retrieval } : {}),
      ...(studyDatabases(study, dataset) === "test-suite" ? { test_suite_databases: TEST_SUITE_DATABASES } : {}),
      ...(order !== "random" ? { order } : {}),
      initial_cache: join(paths.runs, "initial", `${dataset}.json`),
      call_cache: studyCallCache(paths),
      protocol: "merit",
      max_repair_steps: study.max_repair_steps,
      ...(study.subset ? { subset: study.subset } : {}),
      ...models,
      ...(method === undefined ? {} : armConditions(study, method)),
    },
    `study ${study.name} (${dataset})`,
  );
}

/**
 * Method and dataset names exist (after the study's plugins are loaded): the nearest name otherwise.
 * A method the study runs that a file outside the kit registered without being one of the study's
 * plugins (the study file imported it, say) is refused: its runs could not record that file.
 */
export function checkStudyNames(study: Study): void {
  for (const m of study.methods) {
    getMethod(m);
    const caller = study.arms[m] === undefined ? registrationCaller("method", m) : null;
    if (caller !== null) throw new MeritError(`study ${study.name}: method "${m}" is registered by ${relative(process.cwd(), caller).split(sep).join("/")}, which the study's plugins do not list, so its runs could not record it; add that file to plugins`);
  }
  const known = datasetNames();
  for (const d of study.datasets) if (!known.includes(d)) throw new MeritError(`study ${study.name}: unknown dataset "${d}"; registered: ${known.join(", ")}`);
}

/** The study's plugin files, resolved against the study file's folder; an error names the study file's `plugins` entry. */
export function studyPluginFiles(study: Study, file: string): PluginSource[] {
  return study.plugins.map((p) => ({ file: resolve(dirname(file), p), label: `${file}: plugins entry "${p}"` }));
}

/**
 * Every file the study file names (`plugins`, `initial`; relative to the study file) exists, and so
 * does each bundled default predictions file it relies on: the first missing one fails with one line
 * naming the study field, the path it resolved to, and the fix.
 */
export function checkStudyFiles(study: Study, file: string): void {
  const isFile = (path: string) => existsSync(path) && statSync(path).isFile();
  for (const p of study.plugins) {
    const path = resolve(dirname(file), p);
    if (!isFile(path)) throw new InputFileError(file, `plugins entry "${p}" is not a file (${path})`, "give the plugin's path relative to the study file");
  }
  const isDir = (path: string) => existsSync(path) && statSync(path).isDirectory();
  for (const [dataset, given] of Object.entries(study.data)) {
    const path = resolve(dirname(file), given);
    if (!isDir(path)) throw new InputFileError(file, `data.${dataset} "${given}" is not a folder (${path})`, "give the dataset folder's path relative to the study file");
  }
  if (study.prompts_dir !== undefined && !isDir(resolve(dirname(file), study.prompts_dir))) {
    throw new InputFileError(file, `prompts_dir "${study.prompts_dir}" is not a folder (${resolve(dirname(file), study.prompts_dir)})`, "give the template folder's path relative to the study file (a copy of prompts/)");
  }
  for (const dataset of study.datasets) {
    const path = initialPredictions(study, dataset, file);
    if (path === null || isFile(path)) continue;
    if (study.initial[dataset] !== undefined) throw new InputFileError(file, `initial.${dataset} "${study.initial[dataset]}" is not a file (${path})`, "give the predictions file's path relative to the study file");
    throw new InputFileError(file, `the bundled predictions of ${dataset}, ${path}, are not here`, `run merit from the kit's folder, or set initial: { ${dataset}: "FILE.sql" } (relative to the study file)`);
  }
}

/** Imports a study file and returns its validated default export. */
export async function loadStudyFile(file: string): Promise<Study> {
  const absolute = resolve(file);
  if (!existsSync(absolute)) throw new InputFileError(file, "does not exist", "pass the study.ts written by `merit study new NAME` (studies/NAME/study.ts)");
  let mod: { default?: unknown };
  try {
    mod = (await import(pathToFileURL(absolute).href)) as { default?: unknown };
  } catch (error) {
    // A refusal of the kit's own (defineStudy's check of a field) already names the field and the fix.
    if (error instanceof MeritError) throw new MeritError(`${file}: ${error.message.split("\n")[0]}`);
    throw new InputFileError(file, `failed to load (${importErrorText(error)})`, "fix the study file");
  }
  const study = mod.default as Partial<Study> | undefined;
  if (study === undefined || typeof study !== "object" || !Array.isArray(study.comparisons)) {
    throw new InputFileError(file, "has no `export default defineStudy({...})`", "export the study as the file's default (see studies/template/study.ts)");
  }
  if (Object.keys((study as Study).arms ?? {}).length > 0) await checkArmNamesOnce(absolute, file);
  // `data` and `prompts_dir` resolve against the study file's folder, like `plugins` and `initial`.
  return { ...(study as Study), dir: relative(process.cwd(), dirname(absolute)) || "." };
}

/**
 * An object literal keeps the last of two properties with one name, so two arms named alike reach
 * `defineStudy` as one: the study file's text is read (TypeScript's parser, a dev dependency of the
 * kit; without it the check is skipped) and an `arms` object naming an arm twice is refused.
 */
async function checkArmNamesOnce(absolute: string, file: string): Promise<void> {
  let ts: typeof import("typescript");
  try {
    ts = (await import("typescript")).default;
  } catch {
    return;
  }
  const source = ts.createSourceFile(absolute, readFileSync(absolute, "utf8"), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const visit = (node: import("typescript").Node): void => {
    if (ts.isPropertyAssignment(node) && node.name.getText(source).replace(/^["']|["']$/g, "") === "arms" && ts.isObjectLiteralExpression(node.initializer)) {
      const lines = new Map<string, number>();
      for (const p of node.initializer.properties) {
        if (p.name === undefined) continue;
        const name = ts.isStringLiteral(p.name) || ts.isIdentifier(p.name) || ts.isNumericLiteral(p.name) ? p.name.text : p.name.getText(source);
        const line = source.getLineAndCharacterOfPosition(p.getStart(source)).line + 1;
        const first = lines.get(name);
        if (first !== undefined) throw new InputFileError(file, `arms names "${name}" twice (lines ${first} and ${line}); the second would silently replace the first`, "give each arm its own name (and list it in methods)");
        lines.set(name, line);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}

/** The subset rule as a sentence: which `queries` a stream keeps. */
export function subsetText(study: Study): string {
  if (study.queries === null) return "every query of the dataset";
  const rule: SubsetRule | undefined = study.subset;
  if (rule?.rule === "initially_failed") {
    const correct = Math.min(rule.initially_correct, study.queries);
    return `${study.queries} queries: up to ${study.queries - correct} initially failed + ${correct} initially correct (subset rule initially_failed)`;
  }
  return `the first ${study.queries} queries of the seed-0 stream`;
}

