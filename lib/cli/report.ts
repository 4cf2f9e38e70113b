/**
 * `merit report` (METHOD.md §8, §9): reads the trajectories of finished runs and writes Tables 1–5
 * in the paper's layout (CSV, Markdown, LaTeX; paper-layout.ts), one row per run (runs.csv), a
 * deterministic manifest.json, the figures (SVG, PNG) and, with --paper-numbers, COMPARISON.md to an
 * output directory, after refusing runs that do not share K, initial cache and data. Every table
 * note and figure subtitle names the runs' model, with a banner for test models (model-identity.ts).
 * @module
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { goldLabelRows } from "../analysis/annotation-cases.ts";
import { classifierValidation, AnnotationRowSchema, type ClassifierValidation } from "../analysis/classifier-validation.ts";
import { renderPng, renderSvg, svgToPng } from "../analysis/figure-render.ts";
import { failureCompositionFigure } from "../analysis/figure-failures.ts";
import { cumulativeRepairFigure, exFigure, forestFigure, paretoFigure, tokensVsExFigure } from "../analysis/figures.ts";
import { learningCurveFigure, learningCurves, learningCurvesCsv } from "../analysis/learning-curves.ts";
import { orderSensitivityTable } from "../analysis/order-sensitivity.ts";
import { memoryGrowthFigure } from "../analysis/memory-growth.ts";
import { memorySizeCsv, memorySizeFigure, memoryUtilityTable, readRunDiagnostics, type RunDiagnostics } from "../analysis/memory-diagnostics.ts";
import { mdeFigure } from "../analysis/figure-power.ts";
import { modelIdentity, modelNotes, verifiedHashes, withModelSubtitle } from "../analysis/model-identity.ts";
import type { RunIdentity } from "../analysis/run-directory.ts";
import { paperComparison, readPaperNumbers } from "../analysis/paper-comparison.ts";
import { datasetTitles, paperAblationSelection, paperSelection, paperTableSelection, PAPER_TABLE_LABELS, reportComparisons } from "../analysis/paper-layout.ts";
import { withVerdicts } from "../analysis/comparison-verdict.ts";
import { methodsSelection, pairsComparisonTable, parseComparisonPairs } from "../analysis/study-layout.ts";
import { difficultyTable } from "../analysis/table-difficulty.ts";
import { readReportInputs } from "../analysis/report-inputs.ts";
import { RUN_CONDITIONS, type RunCondition } from "../analysis/run-alignment.ts";
import { reportManifest, type ReportExtras } from "../analysis/report-manifest.ts";
import { expandRunArgs } from "../analysis/run-paths.ts";
import type { RunSummary } from "../analysis/run-summary.ts";
import { renderCsv, renderLatex, renderMarkdown, type Table } from "../analysis/table.ts";
import { costTable, timingKey } from "../analysis/table-cost.ts";
import { feedbackTable } from "../analysis/table-feedback.ts";
import { peerMethodsOf, peersTable } from "../analysis/table-peers.ts";
import { ablationTable, comparisonTable, confusionTable, exTable, failureTable, repairTable, type TableSelection } from "../analysis/tables.ts";
import { InputFileError, MeritError, UsageError, nearestName } from "../errors.ts";
import { listRuns, readRunDataDir, readRunManifest, RUN_FILES } from "../experiment/run-dir.ts";
import { sha256Hex, type JsonValue } from "../hash.ts";
import type { Trajectory } from "../repair/trajectory.ts";
import { exampleEpisodeSvg } from "../report/example-episode.ts";
import { readExampleEpisode } from "../report/example-run.ts";
import { writeHtmlReport } from "../report/html-report.ts";
import { loadDatasetContext } from "../report/query-context.ts";
import { listFlag, numberFlag, parseFlags, required, seeHelp, type Command } from "./command.ts";
import { assertWritableDir } from "./output-paths.ts";
import { loadCommandPlugins, PLUGIN_FLAG, PLUGIN_USAGE } from "./plugins.ts";

const USAGE = `usage: merit report [RUN_DIR...] [--runs DIRS_OR_GLOBS]... --out DIR [--reference METHOD] [--full METHOD --ablations A,B,...]
                    [--resamples N] [--seed S] [--interval percentile|bca] [--level L]
                    [--labels name=Label,...] [--annotations FILE.jsonl --annotations-dataset NAME] [--no-figures] [--html]
                    [--no-curves] [--curve-resamples N] [--diagnostics] [--peers A,B,...] [--costs]
                    [--gold-labels cases.csv [--annotations-dataset NAME] [--min-gold-labels N]]
                    [--all-methods] [--all-comparisons] [--methods a,b,...] [--comparisons a:b,...] [--conditions LIST] [--paper-numbers] [--example [DATASET:]QUERY_ID]
                    [--plugin FILE.ts ...]

Each RUN_DIR is a run directory (with trajectories.jsonl) or a folder searched for them; --runs takes
the same, comma-separated and/or repeated, with globs ('runs/spider-*'). Runs must share K and, per
dataset, the initial cache and data hashes (manifest.json, config.json), else the report is refused.
--gold-labels reads the CSV of \`merit annotate\` with gold_type and annotator_id filled in (Table 5);
--min-gold-labels N accepts N or more cases instead of METHOD.md §8's 150 (to try the flow on a demo;
recorded in manifest.json and the table note).
Tables follow the paper's layout: Tables 1 and 3 show Iterative, Reflexion-style, Dyn. RAG and MERIT
(--all-methods adds every other method below a rule), Table 2 compares MERIT with the paper's
comparisons (--all-comparisons: with every method), Table 4 names the full method MERIT Full; --labels
overrides the display names. Table 1 has one block of rows per dataset; Tables 1, 3 and 4 mark the
best value per dataset in bold and the second underlined; a difference that rounds to zero prints
0.00; Table 5's Acc. is population-weighted by predicted type, with the plain accuracy beside it.
--example QUERY_ID also writes DIR/figures/example-episode.{svg,png} (the paper's Figure 2: the failed
attempt, the retrieved precedents and the repair) from the --reference method's run with the lowest
seed; DATASET:QUERY_ID when several datasets hold the id. The query must have failed initially.
A study's layout (merit study run passes it): --methods a,b,... shows exactly these methods, in this
order, in Tables 1 and 3 and the figures; --comparisons a:b,... makes Table 2 these pairs
(Δ = EX(a) − EX(b)) instead of --reference against the paper's comparisons (with the Holm p over
the pairs); --conditions feedback_regime,feedback_noise,max_repair_steps lets runs differ in those
config fields (a study's arms) and still be paired; any other difference is refused. Runs under a
feedback regime other than the oracle's add the feedback-confusion table. Runs with call kinds beyond
the paper's (a hook's distill, a judge), or --costs, add tables/cost-by-kind.*: tokens and calls per
query by call kind, embedding calls, and the measured retrieval and memory wall time per query.
Table 2's notes say in words when a comparison is uninformative (identical outcomes, a degenerate
interval, an MDE above |Δ|).
--paper-numbers writes DIR/COMPARISON.md: every cell next to the paper's number (data/paper-numbers.json).
Writes DIR/tables/table{1..5}.{csv,md,tex}, DIR/runs.csv, DIR/manifest.json (input run hashes, K, B,
seed, interval, level; no timestamps) and DIR/figures/*.{svg,png};
Every report also writes DIR/figures/learning-curves.{svg,png,csv} (--no-curves leaves them out;
--curves, the default, is still accepted): cumulative EX and repair success among
initial failures against stream position per method, the mean over stream orders with a paired
query-cluster bootstrap band (B = --curve-resamples, default 1000; --seed and --level as Table 2),
and DIR/tables/order-sensitivity.*: each method's spread of EX across its stream orders with its interval;
with the peers (below) both cover the peers and the reference too.
--diagnostics also writes the memory diagnostics of the memory methods (MERIT's entries and memory
hooks' notes; METHOD.md §9): DIR/tables/memory-utility.{csv,md,tex} (per polarity and kind of the
retrieved items, the share of repair steps after them whose attempt was correct, against the base
rate) and DIR/figures/memory-size.{svg,png,csv} (memory size over the stream).
When the runs hold peer memory methods (METHOD.md §13: methods that declare a citation), or with
--peers A,B,... (the peer family, any methods of the runs), also DIR/tables/peers.*: per dataset ×
peer, EX mean ± std, Δ = peer − --reference with the paired query-cluster bootstrap interval, p, MDE,
Holm p over the peers, tokens per query and the peer's source; and DIR/figures/peers-pareto.{svg,png}:
EX against tokens per query (every call kind) per method, the Pareto front filled (the budget-matched view).
--html also writes DIR/index.html (offline query browser and episode explorer) with DIR/assets and DIR/report-data.
Table 2 compares --reference (default: merit, when present) with the paper's comparisons present
(every other method when none is, or with --all-comparisons); Table 4 needs --full and --ablations.
Bootstrap defaults: B = 10000, seed 0, percentile, level 0.95.
The plugins the runs' manifests record are loaded (a plugin's dataset gives the per-difficulty table).
${PLUGIN_USAGE}`;

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
        labels: { type: "string" }, annotations: { type: "string" }, "annotations-dataset": { type: "string" }, "no-figures": { type: "boolean" }, html: { type: "boolean" },
        curves: { type: "boolean" }, "no-curves": { type: "boolean" }, "curve-resamples": { type: "string" }, diagnostics: { type: "boolean" }, peers: { type: "string" }, costs: { type: "boolean" },
        runs: { type: "string", multiple: true }, "gold-labels": { type: "string" }, "min-gold-labels": { type: "string" },
        "all-methods": { type: "boolean" }, "all-comparisons": { type: "boolean" }, "paper-numbers": { type: "boolean" }, example: { type: "string" },
        methods: { type: "string" }, comparisons: { type: "string" }, conditions: { type: "string" },
        ...PLUGIN_FLAG,
      },
      USAGE,
      true,
    );
    const out = required(values.out, "out", USAGE);
    assertWritableDir(out, "--out");
    const inputs = [...positionals, ...expandRunArgs(values.runs ?? [])];
    if (inputs.length === 0) throw new UsageError(`pass at least one run directory (positional or --runs)`);
    const interval = values.interval ?? "percentile";
    if (interval !== "percentile" && interval !== "bca") throw new UsageError(`--interval must be percentile or bca, got "${interval}"`);
    const boot = {
      resamples: numberFlag(values.resamples, "resamples", 10_000, { integer: true, min: 1 }),
      seed: numberFlag(values.seed, "seed", 0, { integer: true, min: 0 }),
      level: numberFlag(values.level, "level", 0.95, { min: 0, max: 1, exclusiveMin: true, exclusiveMax: true }),
      interval: interval as "percentile" | "bca",
    };
    if (values["no-curves"] && values.curves) throw new UsageError(`--curves and --no-curves contradict each other; pass one\n${USAGE}`);
    if (values["curve-resamples"] !== undefined && values["no-curves"]) throw new UsageError(`--curve-resamples sets the learning curves' band, which --no-curves leaves out; drop one\n${USAGE}`);
    const curveOpts = !values["no-curves"] ? { resamples: numberFlag(values["curve-resamples"], "curve-resamples", 1000, { integer: true, min: 1 }), seed: boot.seed, level: boot.level } : undefined;
    const minGold = values["min-gold-labels"] === undefined ? undefined : numberFlag(values["min-gold-labels"], "min-gold-labels", 150, { integer: true, min: 1 });
    if (minGold !== undefined && values["gold-labels"] === undefined) throw new UsageError(`--min-gold-labels needs --gold-labels FILE\n${USAGE}`);
    const given = parseLabels(values.labels);

    const runDirs = [...new Map(inputs.flatMap(listRuns).map((d) => [resolve(d), d])).values()];
    if (runDirs.length === 0) throw new InputFileError(inputs.join(", "), `holds no ${RUN_FILES.trajectories}`, "pass directories written by `merit run`");
    await loadCommandPlugins(values.plugin, { runDirs }, io);
    const conditions = parseConditions(values.conditions);
    const { runs, identities, memories, firstTrajectories, maxRepairSteps } = readReportInputs(runDirs, { conditions });
    // a dataset the paper does not name (a plugin's) under its adapter's title, unless --labels names it
    const labels = { ...datasetTitles(runs.map((r) => r.dataset)), ...given };
    const known = [...new Set(runs.map((r) => r.method))].sort();
    if (values.reference !== undefined) assertRunMethod(values.reference, "reference", known);
    const ablation = values.full === undefined && values.ablations === undefined ? undefined : ablationFlags(values.full, values.ablations, known);
    io.err(`report: ${runs.length} runs from ${runDirs.length} files; bootstrap B = ${boot.resamples}, seed ${boot.seed}, ${boot.interval}`);
    const study = studyLayout(values, known);
    const sel: TableSelection = study.methods ? methodsSelection(study.methods, labels) : paperSelection(runs, { allMethods: values["all-methods"] === true, labels });
    const model = modelIdentity(identities.map((id) => id.model ?? null), identities.map((id) => id.embedder ?? null), verifiedHashes());
    if (model.banner !== null) io.err(`report: ${model.banner}`);
    // read before anything is written, so a broken data/paper-numbers.json leaves the output untouched
    const paper = values["paper-numbers"] ? readPaperNumbers() : undefined;
    // Tables 1–5 in the paper's names and style; figures, COMPARISON.md and the extra tables keep `sel`
    const tableSel: TableSelection = study.methods ? { ...methodsSelection(study.methods, { ...PAPER_TABLE_LABELS, ...labels }), paperLayout: true } : paperTableSelection(runs, { allMethods: values["all-methods"] === true, labels });

    const tables: Table[] = [exTable(runs, tableSel)];
    const reference = values.reference ?? (runs.some((r) => r.method === "merit") ? "merit" : undefined);
    if (values.example !== undefined && reference === undefined) throw new UsageError(`--example needs --reference METHOD (the runs hold no merit run): the method whose episode to draw`);
    const example = values.example === undefined ? undefined : readExampleEpisode(identities, values.example, reference!, process.cwd());
    if (study.pairs) tables.push(withVerdicts(pairsComparisonTable(runs, study.pairs, { ...tableSel, ...boot }), tableSel));
    else if (reference !== undefined && runs.some((r) => r.method !== reference)) {
      const others = reportComparisons(runs, reference, values["all-comparisons"] === true);
      tables.push(withVerdicts(comparisonTable(runs, { ...tableSel, reference, others, ...boot }), tableSel));
    }
    tables.push(repairTable(runs, tableSel, conditions.includes("max_repair_steps") ? null : maxRepairSteps));
    const timings = new Map(identities.filter((id) => id.timing !== undefined).map((id) => [timingKey(id.dataset, id.method, id.stream_seed), id.timing!]));
    const cost = costTable(runs, sel, values.costs === true ? timings : null, values.costs === true);
    if (cost !== null) tables.push(cost);
    // the peers table and its budget-matched figure: only when the runs hold peers (or --peers names them)
    const peers = values.peers !== undefined ? listFlag(values.peers, "peers").map((m) => assertRunMethod(m, "peers", known)) : peerMethodsOf(runs).filter((m) => m !== reference);
    if (values.peers !== undefined && reference === undefined) throw new UsageError(`--peers needs --reference METHOD (the runs hold no merit run): the method the peers are compared with`);
    if (reference !== undefined && peers.includes(reference)) throw new UsageError(`--peers names the --reference method ${reference}; list only the peers`);
    const peerView = peers.length > 0 && reference !== undefined ? { reference, peers } : undefined;
    if (peerView) tables.push(peersTable(runs, { ...tableSel, ...peerView, ...boot }));
    const confusion = feedbackTable(runs, sel);
    if (confusion !== null) tables.push(confusion);
    if (ablation) tables.push(ablationTable(runs, { ...paperAblationSelection(tableSel, ablation.full, labels), ...ablation, ...boot }));
    if (values.annotations !== undefined && values["gold-labels"] !== undefined) throw new UsageError(`pass --annotations or --gold-labels, not both`);
    const validation =
      values["gold-labels"] !== undefined
        ? loadGoldLabels(values["gold-labels"], values["annotations-dataset"], firstTrajectories, minGold)
        : loadValidation(values.annotations, values["annotations-dataset"], firstTrajectories);
    tables.push(failureTable(runs, { ...tableSel, validation, minGoldLabels: minGold }));
    for (const [dataset, v] of Object.entries(validation ?? {})) tables.push(confusionTable(v, sel.labels?.[dataset] ?? dataset));
    const byDifficulty = difficultyTable(runs, readDifficulties(identities.map((id) => id.dir), io), sel);
    if (byDifficulty !== null) tables.splice(1, 0, byDifficulty);
    // the learning curves and the order-sensitivity table cover every method the report shows: with
    // the peers view on, the reference and the peers too (after the paper's methods)
    const curveSel: TableSelection = peerView ? { ...sel, methods: withPeers(sel.methods ?? known, peerView) } : sel;
    const sensitivity = curveOpts === undefined ? null : orderSensitivityTable(runs, curveSel, curveOpts);
    if (sensitivity !== null) tables.push(sensitivity);
    const diagnostics: RunDiagnostics[] | undefined = values.diagnostics ? identities.flatMap((id) => readRunDiagnostics(id.dir) ?? []) : undefined;
    if (diagnostics !== undefined) {
      const utility = memoryUtilityTable(diagnostics, sel);
      if (utility !== null) tables.push(utility);
      else io.err(`report: --diagnostics: no run is a memory method's (no memory/, memory_writes or retrieval_log.jsonl records); no memory diagnostics written`);
    }
    for (const t of tables) t.notes.push(...modelNotes(model));
    const executors = [...new Set(identities.map((id) => id.executor ?? "sqlite"))].sort();
    if (executors.some((e) => e !== "sqlite")) for (const t of tables) t.notes.push(`SQL executor: ${executors.join(", ")} (config oracle.executor; the paper's oracle is sqlite).`);
    const transport = transportTotals(identities);
    if (transport !== null) {
      const note = `Server transport: ${transport.transient_retries} transient failure(s) (connection errors, timeouts, 408/429/503, a first 5xx) were retried for ${transport.retried_calls} call(s) in ${transport.runs} of ${identities.length} runs (manifest.json transport); each call was answered once, and no output depends on the retries.`;
      for (const t of tables) t.notes.push(note);
      io.err(`report: ${note}`);
    }

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
    const extras: ReportExtras = {};
    if (values["gold-labels"] !== undefined) extras.gold_labels_sha256 = sha256Hex(readFileSync(values["gold-labels"]));
    if (values.annotations !== undefined) extras.annotations_sha256 = sha256Hex(readFileSync(values.annotations));
    if (minGold !== undefined) extras.min_gold_labels = minGold;
    extras.model_identity = { line: model.line, banner: model.banner, chat: model.chat as unknown as JsonValue, embedders: model.embedders as unknown as JsonValue };
    if (example !== undefined) extras.example_episode = { dataset: example.dataset, query_id: example.queryId, method: example.method, stream_seed: example.seed };
    extras.executors = executors;
    if (transport !== null) extras.transport = transport;
    if (curveOpts !== undefined) extras.learning_curves = curveOpts;
    if (diagnostics !== undefined) extras.memory_diagnostics = { runs: diagnostics.length };
    if (peerView) extras.peers = peerView;
    extras.table_selection = { all_methods: values["all-methods"] === true, all_comparisons: values["all-comparisons"] === true, ...(study.methods ? { methods: study.methods } : {}), ...(study.pairs ? { comparisons: study.pairs.map((p) => p.join(":")) } : {}), ...(conditions.length > 0 ? { conditions } : {}) };
    if (paper !== undefined) {
      extras.paper_numbers = { source: paper.numbers.source, sha256: sha256Hex(paper.bytes) };
      write(join(out, "COMPARISON.md"), paperComparison(tables, paper.numbers, sel, modelNotes(model)));
    }
    // run directories inside the working directory are recorded relative to it, others as passed
    const shown = identities.map((id) => {
      const inside = relative(process.cwd(), resolve(id.dir));
      return { ...id, dir: inside === "" ? "." : inside.startsWith("..") ? id.dir : inside };
    });
    const curves = curveOpts === undefined ? undefined : learningCurves(runs, curveSel, curveOpts);
    if (curves !== undefined) write(join(out, "figures", "learning-curves.csv"), learningCurvesCsv(curves));
    if (diagnostics !== undefined && diagnostics.length > 0) write(join(out, "figures", "memory-size.csv"), memorySizeCsv(diagnostics, sel));
    write(join(out, "manifest.json"), reportManifest(shown, maxRepairSteps, boot, extras));
    if (!values["no-figures"]) {
      const comparison = tables.find((t) => t.id === "table2");
      const figures = { "ex-per-method": exFigure(runs, sel), "cumulative-repairs": cumulativeRepairFigure(runs, sel, maxRepairSteps), "tokens-vs-ex": tokensVsExFigure(runs, sel), ...(comparison ? { "forest-delta": forestFigure(comparison, sel) } : {}) };
      Object.assign(figures, { "failure-composition": failureCompositionFigure(runs, sel), ...(memories.length > 0 ? { "memory-growth": memoryGrowthFigure(memories, sel) } : {}) });
      if (comparison && comparison.data.length > 0) Object.assign(figures, { "mde-vs-stream-orders": mdeFigure(comparison, sel) });
      if (curves !== undefined) Object.assign(figures, { "learning-curves": learningCurveFigure(curves, curveOpts) });
      if (diagnostics !== undefined && diagnostics.length > 0) Object.assign(figures, { "memory-size": memorySizeFigure(diagnostics, sel) });
      if (peerView) Object.assign(figures, { "peers-pareto": paretoFigure(runs, { ...sel, methods: [peerView.reference, ...peerView.peers, ...known.filter((m) => m !== peerView.reference && !peerView.peers.includes(m))] }) });
      for (const [name, figure] of Object.entries(figures)) {
        const spec = withModelSubtitle(figure, model);
        write(join(out, "figures", `${name}.svg`), await renderSvg(spec));
        write(join(out, "figures", `${name}.png`), await renderPng(spec));
      }
    }
    if (example !== undefined) {
      const svg = exampleEpisodeSvg(example, { dataset: sel.labels?.[example.dataset] ?? example.dataset, method: sel.labels?.[example.method] ?? example.method, subtitle: modelNotes(model) });
      write(join(out, "figures", "example-episode.svg"), svg);
      write(join(out, "figures", "example-episode.png"), svgToPng(svg));
    }
    if (values.html) {
      const html = writeHtmlReport({ outDir: out, runDirs, tables, figures: written.filter((f) => f.startsWith("figures/") && f.endsWith(".svg")), model });
      written.push(...html.files);
      for (const w of html.warnings) io.err(`report: html: ${w}`);
      io.err(`report: html: ${html.episodes} episodes in ${html.chunks} chunks, ${html.files.length} files, ${html.bytes} bytes -> ${join(out, "index.html")}`);
    }
    io.err(`report: wrote ${written.length} files under ${out}`);
    io.out(JSON.stringify({ runs: runs.length, tables: tables.map((t) => t.id), files: written.length, resamples: boot.resamples, seed: boot.seed, interval: boot.interval }));
    return 0;
  },
};

/** The runs' manifest `transport` records summed; null when no run retried anything. */
function transportTotals(identities: readonly RunIdentity[]): { transient_retries: number; retried_calls: number; runs: number } | null {
  const met = identities.filter((id) => id.transport !== undefined);
  if (met.length === 0) return null;
  return {
    transient_retries: met.reduce((n, id) => n + id.transport!.transient_retries, 0),
    retried_calls: met.reduce((n, id) => n + id.transport!.retried_calls, 0),
    runs: met.length,
  };
}

/** `--conditions a,b`: config fields runs may differ in (RUN_CONDITIONS); one line naming a bad one. */
function parseConditions(text: string | undefined): RunCondition[] {
  if (text === undefined) return [];
  return text.split(",").map((c) => {
    const name = c.trim();
    if (!(RUN_CONDITIONS as readonly string[]).includes(name)) throw new UsageError(`--conditions: "${name}" is not a condition runs may differ in; use ${RUN_CONDITIONS.join(", ")}${seeHelp(USAGE)}`);
    return name as RunCondition;
  });
}

/** `--methods` and `--comparisons`: methods of the runs, not mixed with the paper-layout flags they replace. */
function studyLayout(values: { methods?: string; comparisons?: string; "all-methods"?: boolean; "all-comparisons"?: boolean; reference?: string }, known: readonly string[]): { methods?: string[]; pairs?: [string, string][] } {
  if (values.methods !== undefined && values["all-methods"]) throw new UsageError(`pass --methods or --all-methods, not both`);
  if (values.comparisons !== undefined && (values["all-comparisons"] || values.reference !== undefined)) throw new UsageError(`--comparisons names Table 2's pairs itself; drop --reference and --all-comparisons`);
  const methods = values.methods === undefined ? undefined : listFlag(values.methods, "methods").map((m) => assertRunMethod(m, "methods", known));
  let pairs: [string, string][] | undefined;
  try {
    pairs = values.comparisons === undefined ? undefined : parseComparisonPairs(values.comparisons);
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
  for (const m of pairs?.flat() ?? []) assertRunMethod(m, "comparisons", known);
  return { methods, pairs };
}

/** Table 4's `--full` and `--ablations`: both given, each a method of the runs, every ablation once. */
function ablationFlags(fullFlag: string | undefined, ablationsFlag: string | undefined, known: readonly string[]): { full: string; ablations: string[] } {
  const full = assertRunMethod(required(fullFlag, "full", USAGE), "full", known);
  const ablations = listFlag(required(ablationsFlag, "ablations", USAGE), "ablations").map((name) => assertRunMethod(name, "ablations", known));
  if (ablations.includes(full)) throw new UsageError(`--ablations names the --full method ${full}; list only its ablations`);
  return { full, ablations };
}

/** A method name given to a report flag must be one of the runs' methods ("did you mean" otherwise). */
function assertRunMethod(name: string, flag: string, known: readonly string[]): string {
  if (known.includes(name)) return name;
  const near = nearestName(name, known);
  throw new UsageError(`--${flag}: no run of method "${name}"${near ? ` (did you mean "${near}"?)` : ""}; the runs hold ${known.join(", ")}`);
}

/** `spider=Spider,bird=BIRD` → {spider: "Spider", bird: "BIRD"}. */
function parseLabels(text: string | undefined): Record<string, string> | undefined {
  if (text === undefined) return undefined;
  const pairs = text.split(",").map((p) => p.split("="));
  const bad = pairs.find((p) => p.length !== 2 || p[0].trim() === "" || p[1].trim() === "");
  if (bad) throw new UsageError(`--labels expects name=Label pairs separated by commas, got "${bad.join("=")}"`);
  return Object.fromEntries(pairs.map(([k, v]) => [k.trim(), v.trim()]));
}

/** Table 5 validation from a labelled `merit annotate` CSV; the dataset defaults to the only one reported. */
function loadGoldLabels(file: string, dataset: string | undefined, trajectories: Map<string, Trajectory[]>, minCases?: number): Record<string, ClassifierValidation> {
  const datasets = [...trajectories.keys()];
  if (!existsSync(file)) throw new InputFileError(file, "does not exist", "pass the CSV written by `merit annotate`, labelled");
  const rows = goldLabelRows(readFileSync(file, "utf8"), file);
  // without --annotations-dataset, the one dataset whose runs hold every labelled (db_id, query_id)
  const holdsAll = (d: string) => {
    const keys = new Set(trajectories.get(d)!.map((t) => `${t.db_id}\u0000${t.query_id}`));
    return rows.every((r) => keys.has(`${r.db_id}\u0000${r.query_id}`));
  };
  const matching = datasets.filter(holdsAll);
  const name = dataset ?? (datasets.length === 1 ? datasets[0] : matching.length === 1 ? matching[0] : undefined);
  if (name === undefined) throw new UsageError(`--gold-labels: the runs cover ${datasets.join(", ")}; say which with --annotations-dataset NAME`);
  const runTrajectories = trajectories.get(name);
  if (!runTrajectories) throw new UsageError(`--annotations-dataset ${name} has no runs among the inputs; known: ${datasets.join(", ")}`);
  // --min-gold-labels N scales METHOD.md §8's 150 cases / 50 double-annotated to N / ⌊N/3⌋
  const req = minCases === undefined ? {} : { minCases, minDoubleAnnotated: Math.min(50, Math.floor(minCases / 3)) };
  try {
    return { [name]: classifierValidation(rows, runTrajectories, req) };
  } catch (e) {
    if (minCases === undefined && e instanceof Error && / cases, but \d+–\d+ are required/.test(e.message)) {
      throw new UsageError(`--gold-labels ${file}: ${e.message.replace(/^classifier validation: /, "")}; to try the flow on fewer cases pass --min-gold-labels N (recorded in the report)`);
    }
    throw e;
  }
}

/** Difficulty of each query per dataset, from the examples file of each dataset's first run's data_dir. */
function readDifficulties(dirs: readonly string[], io: { err: (line: string) => void }): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  const seen = new Set<string>();
  for (const dir of dirs) {
    const dataDir = readRunDataDir(dir);
    const dataset = readRunManifest(dir, { fix: "pass directories written by `merit run`" }).dataset.name;
    if (dataDir === null || seen.has(dataset)) continue;
    seen.add(dataset);
    let ctx: ReturnType<typeof loadDatasetContext>;
    try {
      ctx = loadDatasetContext(dataset, dataDir, process.cwd());
    } catch (e) {
      // the breakdown is an extra: a broken examples file costs it, not the report
      ctx = e instanceof MeritError ? e.message : String(e);
    }
    if (typeof ctx === "string") {
      io.err(`report: no per-difficulty breakdown for ${dataset}: ${ctx}`);
      continue;
    }
    out.set(dataset, new Map([...ctx.queries].map(([id, q]) => [id, q.difficulty])));
  }
  return out;
}

function loadValidation(file: string | undefined, dataset: string | undefined, trajectories: Map<string, Trajectory[]>): Record<string, ClassifierValidation> | undefined {
  if (file === undefined) return undefined;
  if (dataset === undefined) throw new UsageError(`--annotations needs --annotations-dataset (the dataset the cases come from)`);
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

/** `methods`, then the peer view's reference and peers not among them (the curves' methods, in order). */
export function withPeers(methods: readonly string[], view: { reference: string; peers: readonly string[] }): string[] {
  return [...methods, ...[view.reference, ...view.peers].filter((m) => !methods.includes(m))];
}
