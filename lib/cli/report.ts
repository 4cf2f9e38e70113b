/**
 * `merit report` (METHOD.md §8, §9): reads the trajectories of finished runs and writes Tables 1–5
 * (CSV, Markdown, LaTeX), one row per run (runs.csv) and the figures (SVG, PNG) to an output directory.
 * @module
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { classifierValidation, AnnotationRowSchema, type ClassifierValidation } from "../analysis/classifier-validation.ts";
import { renderPng, renderSvg } from "../analysis/figure-render.ts";
import { cumulativeRepairFigure, exFigure, forestFigure, tokensVsExFigure } from "../analysis/figures.ts";
import { summarizeRun, type RunSummary } from "../analysis/run-summary.ts";
import { renderCsv, renderLatex, renderMarkdown, type Table } from "../analysis/table.ts";
import { ablationTable, comparisonTable, confusionTable, exTable, failureTable, repairTable, type TableSelection } from "../analysis/tables.ts";
import { InputFileError, UsageError } from "../errors.ts";
import { parseTrajectoryLines, type Trajectory } from "../repair/trajectory.ts";
import { numberFlag, parseFlags, required, type Command } from "./command.ts";

const USAGE = `usage: merit report RUN_DIR... --out DIR [--reference METHOD] [--full METHOD --ablations A,B,...]
                    [--resamples N] [--seed S] [--interval percentile|bca] [--level L]
                    [--labels name=Label,...] [--annotations FILE.jsonl --annotations-dataset NAME] [--no-figures]

Each RUN_DIR is a run directory (with trajectories.jsonl) or a folder searched for them.
Writes DIR/tables/table{1..5}.{csv,md,tex}, DIR/runs.csv and DIR/figures/*.{svg,png}.
Table 2 compares --reference (default: merit, when present) with every other method;
Table 4 needs --full and --ablations. Bootstrap defaults: B = 10000, seed 0, percentile, level 0.95.`;

export const reportCommand: Command = {
  name: "report",
  summary: "write the paper's tables and figures from finished runs (METHOD.md §9)",
  usage: USAGE,
  async run(argv, io) {
    const { values, positionals } = parseFlags(
      argv,
      {
        out: { type: "string" }, reference: { type: "string" }, full: { type: "string" }, ablations: { type: "string" },
        resamples: { type: "string" }, seed: { type: "string" }, interval: { type: "string" }, level: { type: "string" },
        labels: { type: "string" }, annotations: { type: "string" }, "annotations-dataset": { type: "string" }, "no-figures": { type: "boolean" },
      },
      USAGE,
      true,
    );
    const out = required(values.out, "out", USAGE);
    if (positionals.length === 0) throw new UsageError(`pass at least one run directory\n${USAGE}`);
    const interval = values.interval ?? "percentile";
    if (interval !== "percentile" && interval !== "bca") throw new UsageError(`--interval must be percentile or bca, got "${interval}"`);
    const boot = {
      resamples: numberFlag(values.resamples, "resamples", 10_000, { integer: true, min: 1 }),
      seed: numberFlag(values.seed, "seed", 0, { integer: true, min: 0 }),
      level: numberFlag(values.level, "level", 0.95),
      interval: interval as "percentile" | "bca",
    };
    const sel: TableSelection = { labels: parseLabels(values.labels) };

    const files = positionals.flatMap(findTrajectoryFiles);
    if (files.length === 0) throw new InputFileError(positionals.join(", "), "holds no trajectories.jsonl", "pass directories written by `merit run`");
    const runs: RunSummary[] = [];
    const firstTrajectories = new Map<string, Trajectory[]>();
    for (const file of files) {
      const trajectories = parseTrajectoryLines(readFileSync(file, "utf8"), file);
      if (trajectories.length === 0) throw new InputFileError(file, "has no trajectories", "finish the run before reporting it");
      const run = summarizeRun(trajectories);
      if (!firstTrajectories.has(run.dataset)) firstTrajectories.set(run.dataset, trajectories);
      runs.push(run);
    }
    io.err(`report: ${runs.length} runs from ${files.length} files; bootstrap B = ${boot.resamples}, seed ${boot.seed}, ${boot.interval}`);

    const tables: Table[] = [exTable(runs, sel)];
    const reference = values.reference ?? (runs.some((r) => r.method === "merit") ? "merit" : undefined);
    if (reference !== undefined && runs.some((r) => r.method !== reference)) tables.push(comparisonTable(runs, { ...sel, reference, ...boot }));
    tables.push(repairTable(runs, sel));
    if (values.full !== undefined || values.ablations !== undefined) {
      const full = required(values.full, "full", USAGE);
      const ablations = required(values.ablations, "ablations", USAGE).split(",").map((s) => s.trim()).filter(Boolean);
      tables.push(ablationTable(runs, { ...sel, full, ablations, ...boot }));
    }
    const validation = loadValidation(values.annotations, values["annotations-dataset"], firstTrajectories);
    tables.push(failureTable(runs, { ...sel, validation }));
    for (const [dataset, v] of Object.entries(validation ?? {})) tables.push(confusionTable(v, sel.labels?.[dataset] ?? dataset));

    const written: string[] = [];
    const write = (path: string, content: string | Buffer) => {
      mkdirSync(join(path, ".."), { recursive: true });
      writeFileSync(path, content);
      written.push(relative(out, path));
    };
    for (const t of tables) {
      write(join(out, "tables", `${t.id}.csv`), renderCsv(t));
      write(join(out, "tables", `${t.id}.md`), renderMarkdown(t));
      write(join(out, "tables", `${t.id}.tex`), renderLatex(t));
      io.out(renderMarkdown(t));
    }
    write(join(out, "runs.csv"), runsCsv(runs));
    if (!values["no-figures"]) {
      const comparison = tables.find((t) => t.id === "table2");
      const figures = { "ex-per-method": exFigure(runs, sel), "cumulative-repairs": cumulativeRepairFigure(runs, sel), "tokens-vs-ex": tokensVsExFigure(runs, sel), ...(comparison ? { "forest-delta": forestFigure(comparison, sel) } : {}) };
      for (const [name, spec] of Object.entries(figures)) {
        write(join(out, "figures", `${name}.svg`), await renderSvg(spec));
        write(join(out, "figures", `${name}.png`), await renderPng(spec));
      }
    }
    io.err(`report: wrote ${written.length} files under ${out}`);
    io.out(JSON.stringify({ runs: runs.length, tables: tables.map((t) => t.id), files: written.length, resamples: boot.resamples, seed: boot.seed, interval: boot.interval }));
    return 0;
  },
};

/** trajectories.jsonl files: the directory's own, else every one below it (sorted paths). */
function findTrajectoryFiles(dir: string): string[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new InputFileError(dir, "is not a directory", "pass run directories or a folder that contains them");
  const own = join(dir, "trajectories.jsonl");
  if (existsSync(own)) return [own];
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (entry.isDirectory()) found.push(...findTrajectoryFiles(join(dir, entry.name)));
  }
  return found;
}

/** `spider=Spider,bird=BIRD` → {spider: "Spider", bird: "BIRD"}. */
function parseLabels(text: string | undefined): Record<string, string> | undefined {
  if (text === undefined) return undefined;
  const pairs = text.split(",").map((p) => p.split("="));
  const bad = pairs.find((p) => p.length !== 2 || p[0].trim() === "" || p[1].trim() === "");
  if (bad) throw new UsageError(`--labels expects name=Label pairs separated by commas, got "${bad.join("=")}"`);
  return Object.fromEntries(pairs.map(([k, v]) => [k.trim(), v.trim()]));
}

function loadValidation(file: string | undefined, dataset: string | undefined, trajectories: Map<string, Trajectory[]>): Record<string, ClassifierValidation> | undefined {
  if (file === undefined) return undefined;
  if (dataset === undefined) throw new UsageError(`--annotations needs --annotations-dataset (the dataset the cases come from)\n${USAGE}`);
  const runTrajectories = trajectories.get(dataset);
  if (!runTrajectories) throw new UsageError(`--annotations-dataset ${dataset} has no runs among the inputs; known: ${[...trajectories.keys()].join(", ")}`);
  const rows = readFileSync(file, "utf8").split("\n").flatMap((line, i) => {
    if (line.trim() === "") return [];
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (cause) {
      throw new InputFileError(file, `line ${i + 1} is not JSON`, "write one annotation object per line", cause);
    }
    const parsed = AnnotationRowSchema.safeParse(json);
    if (!parsed.success) throw new InputFileError(file, `line ${i + 1}: ${parsed.error.issues[0].path.join(".")} ${parsed.error.issues[0].message}`, "fix the annotation row");
    return [parsed.data];
  });
  return { [dataset]: classifierValidation(rows, runTrajectories) };
}

/** One row per run, sorted by (dataset, method, seed), like the reference results.csv (METHOD.md §9). */
function runsCsv(runs: readonly RunSummary[]): string {
  const header = "dataset,method,stream_seed,n,success_at_1,final_accuracy,repaired_count,failed_count,steps,oscillation_rate,total_tokens,llm_calls,db_executions,embedding_calls,retrieval_calls";
  const sorted = [...runs].sort((x, y) => (x.dataset !== y.dataset ? (x.dataset < y.dataset ? -1 : 1) : x.method !== y.method ? (x.method < y.method ? -1 : 1) : x.stream_seed - y.stream_seed));
  const lines = sorted.map((r) => {
    const m = r.metrics;
    const a = m.accounting;
    return [r.dataset, r.method, r.stream_seed, m.total, m.success_at_1.toFixed(6), m.final_accuracy.toFixed(6), m.repaired_count, m.failed_count, m.steps.toFixed(6), m.oscillation_rate.toFixed(6), a.total_tokens, a.llm_calls, a.db_executions, a.embedding_calls, a.retrieval_calls].join(",");
  });
  return [header, ...lines].join("\n") + "\n";
}
