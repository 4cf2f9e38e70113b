/**
 * Experiment, a study's grid (README "Write a follow-up study"): the study file opened with its
 * plugins and arms, its streams grouped by their arm's conditions (one grid per config), which runs
 * are complete, the models line every plan and run prints, and the report layout of its tables
 * (read by lib/analysis/study-plan.ts `planStudy` and lib/report/study-run.ts `runStudy`).
 * @module
 */
import { existsSync } from "node:fs";
import { loadPlugins, type PluginRecord } from "../methods/index.ts";
import type { ExperimentConfig } from "./config.ts";
import { runFile } from "./run-dir.ts";
import { armConditions, checkStudyArms, checkStudyFiles, checkStudyNames, loadStudyFile, registerStudyArms, studyConditions, studyPluginFiles, type Study } from "./study.ts";

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

/** The study's models in one line (the tiny models under a loud warning). */
export function studyModelsLine(study: Study, config: ExperimentConfig): string {
  if (study.models.kind === "tiny") return `models: the TINY RANDOM test models (${config.model.path}): real mechanics, SMOKE-SCALE AND MEANINGLESS numbers; switch to realModels() or server({...}) in the study file for real ones`;
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
export function studyReportLayout(study: Study): { methods: string[]; comparisons: [string, string][]; conditions: ReturnType<typeof studyConditions> } {
  return { methods: [...study.methods], comparisons: study.comparisons.map(([a, b]): [string, string] => [a, b]), conditions: studyConditions(study) };
}
