/**
 * Experiment, a study's grid (README "Write a follow-up study"): the study file opened with its
 * plugins and arms, its streams grouped by their arm's conditions (one grid per config), which runs
 * are complete, the models line every plan and run prints, and the report layout of its tables
 * (read by lib/analysis/study-plan.ts `planStudy` and lib/report/study-run.ts `runStudy`).
 * @module
 */
import { existsSync } from "node:fs";
import { getMethod, isMethodName, loadPlugins, methodDefinition, type PluginRecord } from "../methods/index.ts";
import type { ExperimentConfig } from "./config.ts";
import { runFile } from "./run-dir.ts";
import { loadConfigDataset } from "./database-set.ts";
import { armConditions, checkStudyArms, checkStudyFiles, checkStudyNames, loadStudyFile, registerStudyArms, studyConditions, studyConfig, studyDatabases, studyPluginFiles, TEST_SUITE_DATABASES, type Study, type StudyPaths } from "./study.ts";

/** Timing of the study's last grid on this machine, read by the next plan (in the study's runs folder, git-ignored). */
export const STUDY_TIMING_FILE = "timing.json";

/** A study file with its plugins loaded, its arms registered and its names checked. */
export async function openStudy(file: string): Promise<{ study: Study; plugins: PluginRecord[] }> {
  const study = await loadStudyFile(file);
  checkStudyFiles(study, file);
  const plugins = await loadPlugins(studyPluginFiles(study, file));
  registerStudyArms(study);
  checkStudyNames(study);
  checkStudyArms(study);
  return { study, plugins };
}

/** The database set of each dataset of the study, one line for plans, logs and reports ("" when no dataset has a choice). */
export function studyDatabasesLine(study: Study): string {
  const parts = study.datasets.flatMap((d) => {
    const set = studyDatabases(study, d);
    if (set === null) return [];
    const why = study.databases !== undefined ? `databases: "${set}"` : study.models.kind === "tiny" ? "the tiny test models' default, as merit demo" : "the default";
    return [set === "test-suite" ? `${d} on the test-suite databases of ${TEST_SUITE_DATABASES} (the paper's protocol; ${why})` : `${d} on its single databases (one per db_id; not the paper's test-suite EX; ${why})`];
  });
  return parts.length === 0 ? "" : `databases: ${parts.join("; ")}`;
}

/**
 * Each dataset scored on the test-suite databases has them (before any compute): otherwise one line
 * naming the study file, what is missing, the command that gets them and the study field that opts out.
 */
export async function checkStudyDatabases(study: Study, file: string, paths: StudyPaths): Promise<void> {
  for (const dataset of study.datasets) {
    if (studyDatabases(study, dataset) !== "test-suite") continue;
    await loadConfigDataset(studyConfig(study, dataset, paths), { configFile: `${file} (${dataset})`, optOut: `set databases: "single" in the study file` });
  }
}

/** The study's models in one line (the tiny models under a loud warning). */
export function studyModelsLine(study: Study, config: ExperimentConfig): string {
  if (study.models.kind === "tiny") return `models: the TINY RANDOM test models (${config.model.path}): real mechanics, SMOKE-SCALE AND MEANINGLESS numbers; switch to realModels() or server({...}) in the study file for real ones`;
  if (study.models.kind === "simulated") return `models: the SIMULATED ENGINE (${config.model.simulation}): effects are planted, not measured (docs/METHOD.md "Simulated engine"); switch to realModels() or server({...}) in the study file for real ones`;
  if (study.models.kind === "real") return `models: ${config.model.path} and ${config.embedder.path} (local GGUFs; \`make models\`)`;
  return `models: ${config.model.model_name} at ${config.model.base_urls.join(", ")}`;
}

/** Streams grouped by their arm's conditions (the study's own first), each group run as one grid with its config. */
export function byConditions<T extends { method: string }>(study: Study, streams: readonly T[]): T[][] {
  const groups = new Map<string, T[]>();
  for (const s of streams) {
    const key = JSON.stringify(armConditions(study, s.method));
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  return [...groups.values()];
}

/** Whether a stream's run directory holds a finished run (metrics.json is written last). */
export function isRunComplete(dir: string): boolean {
  return existsSync(runFile(dir, "metrics"));
}

/**
 * The report layout of a finished study (lib/report/build-report.ts options): its methods in
 * Tables 1 and 3, its comparisons as Table 2, and the conditions its arms change.
 */
export function studyReportLayout(study: Study): { methods: string[]; comparisons: [string, string][]; conditions: ReturnType<typeof studyConditions>; setting: true; peers?: string[] } {
  const controls = studyControls(study);
  // the peer memory methods: those declaring a citation (analysis/table-peers.ts peerMethodsOf)
  const peers = study.methods.filter((m) => m !== "merit" && isMethodName(m) && typeof methodDefinition(m).citation === "string");
  // the peers table's family: the study's peers and, when it runs one, its equal-budget control (the reference is merit)
  const family = peers.length > 0 && controls.length > 0 && study.methods.includes("merit") ? { peers: [...peers, ...controls] } : {};
  return { methods: [...study.methods], comparisons: study.comparisons.map(([a, b]): [string, string] => [a, b]), conditions: studyConditions(study), setting: true, ...family };
}

/**
 * The study's equal-budget controls (METHOD.md §13, "Budget-matched control"): arms of a memoryless
 * method without hooks (iterative) whose one change is a larger K than the study's.
 */
export function studyControls(study: Study): string[] {
  return Object.entries(study.arms)
    .filter(([, arm]) => {
      const base = getMethod(arm.method);
      const changes = Object.keys(arm).filter((k) => k !== "method" && k !== "description");
      return base.record.hooks === undefined && changes.length === 1 && arm.max_repair_steps !== undefined && arm.max_repair_steps > study.max_repair_steps;
    })
    .map(([name]) => name)
    .filter((name) => study.methods.includes(name));
}
