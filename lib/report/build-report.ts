/**
 * Report assembly (METHOD.md §8, §9), the library's `buildReport` (`merit report` parses its flags
 * into these options): reads the trajectories of finished runs and writes Tables 1–5 in the paper's
 * layout (CSV, Markdown, LaTeX; lib/analysis/paper-layout.ts), one row per run (runs.csv), a
 * deterministic manifest.json, the figures (SVG, PNG), the learning curves and, on request,
 * COMPARISON.md, the memory diagnostics, the peers table and the HTML explorer to an output
 * directory, after refusing runs that do not share K, initial cache and data. Every table note and
 * figure subtitle names the runs' model, with a banner for test models (model-identity.ts). Errors
 * name the `merit report` flag of the option at fault.
 * @module
 */
import { existsSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { goldLabelRows } from "../analysis/annotation-cases.ts";
import { classifierValidation, AnnotationRowSchema, type ClassifierValidation } from "../analysis/classifier-validation.ts";
import { renderPng, renderSvg, svgToPng } from "../analysis/figure-render.ts";
import { failureCompositionFigure } from "../analysis/figure-failures.ts";
import { cumulativeRepairFigure, exFigure, forestFigure, methodColors, paretoFigure, tokensVsExFigure } from "../analysis/figures.ts";
import { MAX_RESAMPLES } from "../analysis/bootstrap.ts";
import { learningCurvePanelFigure, learningCurves, learningCurvesCsv, MAX_CURVE_RESAMPLES } from "../analysis/learning-curves.ts";
import { orderSensitivityTable } from "../analysis/order-sensitivity.ts";
import { memoryGrowthFigure } from "../analysis/memory-growth.ts";
import { memorySizeCsv, memorySizeFigure, memoryUtilityTable, readRunDiagnostics, type RunDiagnostics } from "../analysis/memory-diagnostics.ts";
import { mdeFigure } from "../analysis/figure-power.ts";
import { assertNotMixed, modelIdentity, modelNotes, verifiedHashes, withModelSubtitle } from "../analysis/model-identity.ts";
import { readRunIdentity, type RunIdentity } from "../analysis/run-directory.ts";
import { paperComparison, readPaperNumbers } from "../analysis/paper-comparison.ts";
import { datasetTitles, paperAblationSelection, paperSelection, paperTableSelection, PAPER_TABLE_LABELS, reportComparisons } from "../analysis/paper-layout.ts";
import { withVerdicts } from "../analysis/comparison-verdict.ts";
import { methodsSelection, pairsComparisonTable } from "../analysis/study-layout.ts";
import { difficultyTable } from "../analysis/table-difficulty.ts";
import { readReportInputs } from "../analysis/report-inputs.ts";
import type { RunCondition } from "../analysis/run-alignment.ts";
import { reportManifest, type ReportExtras } from "../analysis/report-manifest.ts";
import type { RunSummary } from "../analysis/run-summary.ts";
import { renderCsv, renderLatex, renderMarkdown, type Table } from "../analysis/table.ts";
import { costTable, timingKey } from "../analysis/table-cost.ts";
import { feedbackTable } from "../analysis/table-feedback.ts";
import { judgeAgreementTable } from "../analysis/table-judge.ts";
import { peerMethodsOf, peersTable } from "../analysis/table-peers.ts";
import { LONG_ITERATIVE_ARM, readPrefixCurves, type PrefixCurve } from "../analysis/prefix-runs.ts";
import { tokenMatchedFigure } from "../analysis/figure-token-matched.ts";
import { runSetting } from "../analysis/run-setting.ts";
import { ablationTable, comparisonTable, confusionTable, exTable, failureTable, repairTable, type TableSelection } from "../analysis/tables.ts";
import { writeFileAtomic } from "../atomic-file.ts";
import { parseJsonLines } from "../data/json-file.ts";
import { InputFileError, MeritError, UsageError, nearestName } from "../errors.ts";
import { assertWritableDir } from "../experiment/output-paths.ts";
import { loadPluginSources } from "../experiment/plugin-sources.ts";
import type { Reporter } from "../experiment/reporter.ts";
import { listRuns, readRunDataDir, readRunManifest, RUN_FILES } from "../experiment/run-dir.ts";
import { sha256Hex, type JsonValue } from "../hash.ts";
import type { Trajectory } from "../repair/trajectory.ts";
import { exampleEpisodeSvg } from "./example-episode.ts";
import { readExampleEpisode } from "./example-run.ts";
import { writeHtmlReport } from "./html-report.ts";
import { loadDatasetContext } from "./query-context.ts";

/** What `buildReport` writes beside Tables 1–3 and 5; every field has its `merit report` flag. */
export interface ReportOptions {
  /** Output directory (`--out`). */
  out: string;
  /** Table 2's reference method (`--reference`; default merit, when the runs hold it). */
  reference?: string;
  /** Table 4: the full method and its ablations (`--full`, `--ablations`; both or neither). */
  full?: string;
  ablations?: readonly string[];
  /** Table 2's bootstrap (`--resamples`, `--seed`, `--interval`, `--level`; default 10000, 0, percentile, 0.95). */
  bootstrap?: { resamples?: number; seed?: number; interval?: "percentile" | "bca"; level?: number };
  /** Display names, `{ spider: "Spider" }` (`--labels`). */
  labels?: Record<string, string>;
  /** Table 5 from annotations (`--annotations FILE.jsonl --annotations-dataset NAME`). */
  annotations?: string;
  annotationsDataset?: string;
  /** Table 5 from a labelled `merit annotate` CSV (`--gold-labels`, `--min-gold-labels`). */
  goldLabels?: string;
  minGoldLabels?: number;
  /** false: no figures (`--no-figures`). */
  figures?: boolean;
  /** The HTML query browser and episode explorer (`--html`). */
  html?: boolean;
  /** false: no learning curves and order-sensitivity table (`--no-curves`); else their band's resamples (`--curve-resamples`, default 1000). */
  curves?: false | { resamples?: number };
  /** The memory diagnostics (`--diagnostics`). */
  diagnostics?: boolean;
  /** The peer family (`--peers`; default: the runs' peer memory methods). */
  peers?: readonly string[];
  /**
   * The long run of a memoryless method read at every K′ ≤ K for the token-matched comparison
   * (`--long-iterative METHOD`; default: the arm `iterative_long` when the runs hold it; false: none).
   */
  longIterative?: string | false;
  /** The cost-by-kind table even for the paper's call kinds (`--costs`). */
  costs?: boolean;
  /** `--all-methods`, `--all-comparisons`. */
  allMethods?: boolean;
  allComparisons?: boolean;
  /** A study's layout: exactly these methods, these Table 2 pairs, these conditions (`--methods`, `--comparisons`, `--conditions`). */
  methods?: readonly string[];
  comparisons?: readonly (readonly [string, string])[];
  conditions?: readonly RunCondition[];
  /** COMPARISON.md against data/paper-numbers.json (`--paper-numbers`). */
  paperNumbers?: boolean;
  /** The Figure 2 example episode, `[DATASET:]QUERY_ID` (`--example`). */
  example?: string;
  /** Plugin files to load besides those the runs' manifests record (`--plugin`). */
  plugins?: readonly string[];
  /** Every table's notes and the manifest name the runs' stream order and database sets (`--setting`; a study's report); a structured order is named always. */
  setting?: boolean;
  /** Status lines (`report: ...`) and warnings. */
  reporter?: Reporter;
}

/** What `buildReport` wrote. */
export interface ReportResult {
  /** The tables, in the order written (their Markdown is what `merit report` prints). */
  tables: Table[];
  /** Every file written, relative to `out`. */
  files: string[];
  /** The summary line `merit report` prints last, as JSON. */
  summary: { runs: number; tables: string[]; files: number; resamples: number; seed: number; interval: "percentile" | "bca" };
}

/** `merit report`'s standard output: each table in Markdown, then the summary as one JSON line. */
export function reportLines(result: ReportResult): string[] {
  return [...result.tables.map(renderMarkdown), JSON.stringify(result.summary)];
}

/**
 * Writes the report of the runs under `inputs` (run directories, or folders searched for them) to
 * `options.out`; returns its tables and files.
 */
export async function buildReport(inputs: readonly string[], options: ReportOptions): Promise<ReportResult> {
  const o = options;
  const out = o.out;
  const log = o.reporter?.log ?? (() => undefined);
  assertWritableDir(out, "--out");
  const boot = { resamples: o.bootstrap?.resamples ?? 10_000, seed: o.bootstrap?.seed ?? 0, level: o.bootstrap?.level ?? 0.95, interval: o.bootstrap?.interval ?? ("percentile" as const) };
  const curveOpts = o.curves === false ? undefined : { resamples: o.curves?.resamples ?? 1000, seed: boot.seed, level: boot.level };
  // bounds checked before any run is read (a mistyped B would otherwise compute for hours or fail to allocate)
  const bounded = (b: number, max: number) => Number.isSafeInteger(b) && b >= 1 && b <= max;
  if (!bounded(boot.resamples, MAX_RESAMPLES)) throw new UsageError(`--resamples must be an integer in 1..${MAX_RESAMPLES} (ten times the default), got ${boot.resamples}`);
  if (curveOpts !== undefined && !bounded(curveOpts.resamples, MAX_CURVE_RESAMPLES)) throw new UsageError(`--curve-resamples must be an integer in 1..${MAX_CURVE_RESAMPLES} (ten times the default), got ${curveOpts.resamples}`);
  const minGold = o.minGoldLabels;
  const given = o.labels;
  const runDirs = [...new Map(inputs.flatMap(listRuns).map((d) => [resolve(d), d])).values()];
  if (runDirs.length === 0) throw new InputFileError(inputs.join(", "), `holds no ${RUN_FILES.trajectories}`, "pass directories written by `merit run`");
  await loadPluginSources(o.plugins ?? [], { runDirs }, log);
  const conditions = o.conditions ?? [];
  // first, so the reason is this and not a generic input mismatch: simulated and real runs never share a report
  assertNotMixed(runDirs.map((d) => readRunIdentity(d).model ?? null), runDirs);
  const { runs, identities, memories, firstTrajectories, maxRepairSteps } = readReportInputs(runDirs, { conditions });
  // a dataset the paper does not name (a plugin's) under its adapter's title, unless --labels names it
  const labels = { ...datasetTitles(runs.map((r) => r.dataset)), ...given };
  const known = [...new Set(runs.map((r) => r.method))].sort();
  if (o.reference !== undefined) assertRunMethod(o.reference, "reference", known);
  const ablation = o.full === undefined && o.ablations === undefined ? undefined : ablationMethods(o.full, o.ablations, known);
  log(`report: ${runs.length} runs from ${runDirs.length} files; bootstrap B = ${boot.resamples}, seed ${boot.seed}, ${boot.interval}`);
  const study = studyLayout(o, known);
  const sel: TableSelection = study.methods ? methodsSelection(study.methods, labels) : paperSelection(runs, { allMethods: o.allMethods === true, labels });
  // one colour per method in every figure of the report (issue 37 §3)
  sel.colors = methodColors([...(sel.methods ?? known), ...known]);
  const model = modelIdentity(identities.map((id) => id.model ?? null), identities.map((id) => id.embedder ?? null), verifiedHashes());
  if (model.banner !== null) log(`report: ${model.banner}`);
  // read before anything is written, so a broken data/paper-numbers.json leaves the output untouched
  const paper = o.paperNumbers ? readPaperNumbers() : undefined;
  // Tables 1–5 in the paper's names and style; figures, COMPARISON.md and the extra tables keep `sel`
  const tableSel: TableSelection = study.methods ? { ...methodsSelection(study.methods, { ...PAPER_TABLE_LABELS, ...labels }), paperLayout: true } : paperTableSelection(runs, { allMethods: o.allMethods === true, labels });

  const tables: Table[] = [exTable(runs, tableSel)];
  const reference = o.reference ?? (runs.some((r) => r.method === "merit") ? "merit" : undefined);
  if (o.example !== undefined && reference === undefined) throw new UsageError(`--example needs --reference METHOD (the runs hold no merit run): the method whose episode to draw`);
  const example = o.example === undefined ? undefined : readExampleEpisode(identities, o.example, reference!, process.cwd());
  if (study.pairs) tables.push(withVerdicts(pairsComparisonTable(runs, study.pairs, { ...tableSel, ...boot }), tableSel));
  else if (reference !== undefined && runs.some((r) => r.method !== reference)) {
    const others = reportComparisons(runs, reference, o.allComparisons === true);
    tables.push(withVerdicts(comparisonTable(runs, { ...tableSel, reference, others, ...boot }), tableSel));
  }
  tables.push(repairTable(runs, tableSel, conditions.includes("max_repair_steps") ? null : maxRepairSteps));
  const timings = new Map(identities.filter((id) => id.timing !== undefined).map((id) => [timingKey(id.dataset, id.method, id.stream_seed), id.timing!]));
  const cost = costTable(runs, sel, o.costs === true ? timings : null, o.costs === true);
  if (cost !== null) tables.push(cost);
  // the peers table and its EX-vs-cost figure: only when the runs hold peers (or --peers names them)
  const peers = o.peers !== undefined ? o.peers.map((m) => assertRunMethod(m, "peers", known)) : peerMethodsOf(runs).filter((m) => m !== reference);
  if (o.peers !== undefined && reference === undefined) throw new UsageError(`--peers needs --reference METHOD (the runs hold no merit run): the method the peers are compared with`);
  if (reference !== undefined && peers.includes(reference)) throw new UsageError(`--peers names the --reference method ${reference}; list only the peers`);
  const peerView = peers.length > 0 && reference !== undefined ? { reference, peers } : undefined;
  // the token-matched comparison: one long Iterative run read at every K′ ≤ K (prefix-runs.ts)
  const longName = o.longIterative === false ? undefined : o.longIterative !== undefined ? assertRunMethod(o.longIterative, "long-iterative", known) : known.includes(LONG_ITERATIVE_ARM) ? LONG_ITERATIVE_ARM : undefined;
  const prefixCurves: PrefixCurve[] = longName === undefined ? [] : readPrefixCurves(identities, longName, "--long-iterative");
  if (peerView) tables.push(peersTable(runs, { ...tableSel, ...peerView, ...boot, familyNote: o.setting === true, ...(prefixCurves.length > 0 ? { tokenMatched: prefixCurves } : {}) }));
  const confusion = feedbackTable(runs, sel);
  if (confusion !== null) tables.push(confusion);
  // only when some run's method judges its own episodes (trajectory judged_success), so a report of the paper's methods keeps its files
  const judgeAgreement = judgeAgreementTable(runs, sel);
  if (judgeAgreement !== null) tables.push(judgeAgreement);
  if (ablation) tables.push(ablationTable(runs, { ...paperAblationSelection(tableSel, ablation.full, labels), ...ablation, ...boot }));
  if (o.annotations !== undefined && o.goldLabels !== undefined) throw new UsageError(`pass --annotations or --gold-labels, not both`);
  const validation =
    o.goldLabels !== undefined
      ? loadGoldLabels(o.goldLabels, o.annotationsDataset, firstTrajectories, minGold)
      : loadValidation(o.annotations, o.annotationsDataset, firstTrajectories);
  // Table 5 over the shown methods' runs: a classify hook's columns only when its method is shown
  const shownRuns = tableSel.methods === undefined ? runs : runs.filter((r) => tableSel.methods!.includes(r.method));
  tables.push(failureTable(shownRuns, { ...tableSel, validation, minGoldLabels: minGold }));
  for (const [dataset, v] of Object.entries(validation ?? {})) tables.push(confusionTable(v, sel.labels?.[dataset] ?? dataset));
  const byDifficulty = difficultyTable(runs, readDifficulties(identities.map((id) => id.dir), log), sel);
  if (byDifficulty !== null) tables.splice(1, 0, byDifficulty);
  // the learning curves and the order-sensitivity table cover every method the report shows: with
  // the peers view on, the reference and the peers too (after the paper's methods)
  const curveSel: TableSelection = peerView ? { ...sel, methods: withPeers(sel.methods ?? known, peerView) } : sel;
  const sensitivity = curveOpts === undefined ? null : orderSensitivityTable(runs, curveSel, curveOpts);
  if (sensitivity !== null) tables.push(sensitivity);
  const diagnostics: RunDiagnostics[] | undefined = o.diagnostics ? identities.flatMap((id) => readRunDiagnostics(id.dir) ?? []) : undefined;
  if (diagnostics !== undefined) {
    const utility = memoryUtilityTable(diagnostics, sel);
    if (utility !== null) tables.push(utility);
    else log(`report: --diagnostics: no run is a memory method's (no memory/, memory_writes or retrieval_log.jsonl records); no memory diagnostics written`);
  }
  for (const t of tables) t.notes.push(...modelNotes(model));
  // the stream order and database set: a study's report, any structured order, and every report of verified (real) models
  const setting = runSetting(identities, o.setting === true || model.banner === null);
  if (setting !== null) for (const t of tables) t.notes.push(...setting.notes);
  const executors = [...new Set(identities.map((id) => id.executor ?? "sqlite"))].sort();
  if (executors.some((e) => e !== "sqlite")) for (const t of tables) t.notes.push(`SQL executor: ${executors.join(", ")} (config oracle.executor; the paper's oracle is sqlite).`);
  const transport = transportTotals(identities);
  if (transport !== null) {
    const note = `Server transport: ${transport.transient_retries} transient failure(s) (connection errors, timeouts, 408/429/503, a first 5xx) were retried for ${transport.retried_calls} call(s) in ${transport.runs} of ${identities.length} runs (manifest.json transport); each call was answered once, and no output depends on the retries.`;
    for (const t of tables) t.notes.push(note);
    log(`report: ${note}`);
  }

  const written: string[] = [];
  // each file whole or not at all (a full disk leaves no truncated figure; the error names the file in one line)
  const write = (path: string, content: string | Buffer) => {
    writeFileAtomic(path, content);
    written.push(relative(out, path));
  };
  for (const t of tables) {
    write(join(out, "tables", `${t.id}.csv`), renderCsv(t));
    write(join(out, "tables", `${t.id}.md`), renderMarkdown(t));
    write(join(out, "tables", `${t.id}.tex`), renderLatex(t));
  }
  write(join(out, "runs.csv"), runsCsv(runs));
  const extras: ReportExtras = {};
  if (o.goldLabels !== undefined) extras.gold_labels_sha256 = sha256Hex(readFileSync(o.goldLabels));
  if (o.annotations !== undefined) extras.annotations_sha256 = sha256Hex(readFileSync(o.annotations));
  if (minGold !== undefined) extras.min_gold_labels = minGold;
  extras.model_identity = { line: model.line, banner: model.banner, chat: model.chat as unknown as JsonValue, embedders: model.embedders as unknown as JsonValue };
  if (example !== undefined) extras.example_episode = { dataset: example.dataset, query_id: example.queryId, method: example.method, stream_seed: example.seed };
  extras.executors = executors;
  if (transport !== null) extras.transport = transport;
  if (curveOpts !== undefined) extras.learning_curves = curveOpts;
  if (diagnostics !== undefined) extras.memory_diagnostics = { runs: diagnostics.length };
  if (peerView) extras.peers = peerView;
  if (prefixCurves.length > 0) extras.token_matched = { method: prefixCurves[0].method, k: Object.fromEntries(prefixCurves.map((c) => [c.dataset, c.k])) };
  if (setting !== null) extras.setting = setting.record;
  extras.table_selection = { all_methods: o.allMethods === true, all_comparisons: o.allComparisons === true, ...(study.methods ? { methods: study.methods } : {}), ...(study.pairs ? { comparisons: study.pairs.map((p) => p.join(":")) } : {}), ...(conditions.length > 0 ? { conditions } : {}) };
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
  if (o.figures !== false) {
    const comparison = tables.find((t) => t.id === "table2");
    const figures = { "ex-per-method": exFigure(runs, sel), "cumulative-repairs": cumulativeRepairFigure(runs, sel, maxRepairSteps), "tokens-vs-ex": tokensVsExFigure(runs, sel), ...(comparison ? { "forest-delta": forestFigure(comparison, sel) } : {}) };
    Object.assign(figures, { "failure-composition": failureCompositionFigure(runs, sel), ...(memories.length > 0 ? { "memory-growth": memoryGrowthFigure(memories, sel) } : {}) });
    if (comparison && comparison.data.length > 0) Object.assign(figures, { "mde-vs-stream-orders": mdeFigure(comparison, sel) });
    if (curves !== undefined) Object.assign(figures, { "learning-curves": learningCurvePanelFigure(runs, curveSel, { ...curveOpts, reference }) });
    if (diagnostics !== undefined && diagnostics.length > 0) Object.assign(figures, { "memory-size": memorySizeFigure(diagnostics, sel) });
    if (peerView) Object.assign(figures, { "peers-pareto": paretoFigure(runs, { ...sel, methods: [peerView.reference, ...peerView.peers, ...known.filter((m) => m !== peerView.reference && !peerView.peers.includes(m))] }) });
    if (prefixCurves.length > 0) Object.assign(figures, { "token-matched": tokenMatchedFigure(runs, prefixCurves, { ...sel, methods: peerView ? withPeers(sel.methods ?? known, peerView) : sel.methods }) });
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
  if (o.html) {
    const html = writeHtmlReport({ outDir: out, runDirs, tables, figures: written.filter((f) => f.startsWith("figures/") && f.endsWith(".svg")), model });
    written.push(...html.files);
    for (const w of html.warnings) log(`report: html: ${w}`);
    log(`report: html: ${html.episodes} episodes in ${html.chunks} chunks, ${html.files.length} files, ${html.bytes} bytes -> ${join(out, "index.html")}`);
  }
  log(`report: wrote ${written.length} files under ${out}`);
  return { tables, files: written, summary: { runs: runs.length, tables: tables.map((t) => t.id), files: written.length, resamples: boot.resamples, seed: boot.seed, interval: boot.interval } };
}

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

/** `methods` and `comparisons` (a study's layout): methods of the runs. */
function studyLayout(o: ReportOptions, known: readonly string[]): { methods?: string[]; pairs?: [string, string][] } {
  const methods = o.methods?.map((m) => assertRunMethod(m, "methods", known));
  const pairs = o.comparisons?.map(([a, b]): [string, string] => [a, b]);
  for (const m of pairs?.flat() ?? []) assertRunMethod(m, "comparisons", known);
  return { methods, pairs };
}

/** Table 4's `full` and `ablations`: both given, each a method of the runs, every ablation once. */
function ablationMethods(fullName: string | undefined, ablationNames: readonly string[] | undefined, known: readonly string[]): { full: string; ablations: string[] } {
  if (fullName === undefined || ablationNames === undefined) throw new UsageError(`missing required flag --${fullName === undefined ? "full" : "ablations"}; see \`merit report --help\``);
  const full = assertRunMethod(fullName, "full", known);
  const ablations = ablationNames.map((name) => assertRunMethod(name, "ablations", known));
  if (ablations.includes(full)) throw new UsageError(`--ablations names the --full method ${full}; list only its ablations`);
  return { full, ablations };
}

/** A method name given to a report flag must be one of the runs' methods ("did you mean" otherwise). */
function assertRunMethod(name: string, flag: string, known: readonly string[]): string {
  if (known.includes(name)) return name;
  const near = nearestName(name, known);
  throw new UsageError(`--${flag}: no run of method "${name}"${near ? ` (did you mean "${near}"?)` : ""}; the runs hold ${known.join(", ")}`);
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
function readDifficulties(dirs: readonly string[], log: (line: string) => void): Map<string, Map<string, string>> {
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
      log(`report: no per-difficulty breakdown for ${dataset}: ${ctx}`);
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
  const rows = parseJsonLines(readFileSync(file, "utf8"), file, { json: "write one annotation object per line", schema: "fix the annotation row" }, AnnotationRowSchema);
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
