/**
 * `merit annotate` (METHOD.md §8 classifier validation): samples initially failed queries of a run
 * with CPython-compatible `Random(seed).sample` and writes them as an RFC 4180 CSV for human
 * labelling; `merit report --gold-labels` reads the labelled file back.
 * @module
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { casesCsv, failedCases, sampleCases } from "../analysis/annotation-cases.ts";
import { readRunIdentity } from "../analysis/run-directory.ts";
import { assertAllValid, DATASETS, datasetChecksum, datasetNames, parseExamples, readJsonFile, type DatasetName } from "../data/index.ts";
import { InputFileError, UsageError } from "../errors.ts";
import { isRunDir, readRunDataDir, readTrajectories, RUN_FILES, runFile } from "../experiment/run-dir.ts";
import { numberFlag, parseFlags, required, type Command } from "./command.ts";
import { loadCommandPlugins, PLUGIN_FLAG, PLUGIN_USAGE } from "./plugin-flag.ts";
import { assertWritableFile } from "../experiment/output-paths.ts";

const USAGE = `usage: merit annotate --run RUN_DIR --sample N --seed S --out cases.csv [--data-dir DIR] [--plugin FILE.ts ...]

Writes N initially failed queries of the run (drawn like Python's random.Random(S).sample over the
failed queries in source order) with columns query_id, db_id, question, predicted_sql,
error_message, predicted_type, gold_type, annotator_id; the last two are left empty for annotators.
A case labelled by two annotators gets a second row. Questions come from the run's data_dir
(config.json) unless --data-dir is given; the examples and tables files must match the run's manifest.
The plugins the run's manifest records are loaded (a run on a plugin's dataset needs it).
${PLUGIN_USAGE}`;

export const annotateCommand: Command = {
  name: "annotate",
  summary: "export a seeded sample of initially failed cases for classifier validation (METHOD.md §8)",
  usage: USAGE,
  async run(argv, io) {
    const { values } = parseFlags(
      argv,
      { run: { type: "string" }, sample: { type: "string" }, seed: { type: "string" }, out: { type: "string" }, "data-dir": { type: "string" }, ...PLUGIN_FLAG },
      USAGE,
    );
    const runDir = required(values.run, "run", USAGE);
    const out = required(values.out, "out", USAGE);
    const n = numberFlag(required(values.sample, "sample", USAGE), "sample", 0, { integer: true, min: 1 });
    const seed = numberFlag(required(values.seed, "seed", USAGE), "seed", 0, { integer: true, min: 0 });
    assertWritableFile(out, "--out");
    await loadCommandPlugins(values.plugin, { runDirs: [runDir] }, io);

    if (!isRunDir(runDir)) throw new InputFileError(runDir, `has no ${RUN_FILES.trajectories}`, "pass a run directory written by `merit run`");
    const identity = readRunIdentity(runDir);
    const trajectories = readTrajectories(runDir);
    const dataDir = values["data-dir"] ?? requireDataDir(runDir);
    const questions = readQuestions(identity.dataset as DatasetName, dataDir, identity.dataset_checksum);

    const cases = failedCases(trajectories, questions);
    const sample = sampleCases(cases, n, seed);
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, casesCsv(sample));
    io.err(`annotate: ${sample.length} of ${cases.length} initially failed queries (${trajectories.length} in the run), seed ${seed} → ${out}`);
    io.out(JSON.stringify({ run: runDir, failed: cases.length, sampled: sample.length, seed, out }));
    return 0;
  },
};

/** `config.data_dir` of the run (readRunIdentity has already required its config.json). */
function requireDataDir(runDir: string): string {
  const dir = readRunDataDir(runDir);
  if (dir === null) throw new InputFileError(runFile(runDir, "config"), "has no config.data_dir", "pass --data-dir");
  return dir;
}

/** query_id → question of the dataset in `dir`, after checking the files are the ones the run used. */
function readQuestions(name: DatasetName, dir: string, expectedChecksum: string): Map<string, string> {
  if (!DATASETS.has(name)) throw new UsageError(`annotate: the run's dataset is an unknown dataset "${name}" (registered: ${datasetNames().join(", ")})`);
  const layout = DATASETS.get(name).layout;
  const fix = `pass --data-dir with the ${name} files the run used`;
  const examplesFile = join(dir, layout.examples);
  const examplesJson = readJsonFile(examplesFile, fix);
  const tablesJson = readJsonFile(join(dir, layout.tables), fix);
  if (datasetChecksum(name, examplesJson.sha256, tablesJson.sha256) !== expectedChecksum) {
    throw new InputFileError(dir, "holds other dataset files than the run used (dataset checksum differs from manifest.json)", fix);
  }
  const examples = assertAllValid(parseExamples(examplesJson.value, name, examplesFile), examplesFile);
  return new Map(examples.map((e) => [e.id, e.question]));
}
