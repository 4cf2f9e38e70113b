/**
 * `merit report` (METHOD.md §8, §9): parses its flags into the options of the library's
 * `buildReport` (lib/report/build-report.ts), which reads the trajectories of finished runs and
 * writes Tables 1–5 in the paper's layout, runs.csv, manifest.json, the figures and, with
 * --paper-numbers, COMPARISON.md; prints each table in Markdown and a JSON summary line.
 * @module
 */
import { MAX_RESAMPLES } from "../analysis/bootstrap.ts";
import { MAX_CURVE_RESAMPLES } from "../analysis/learning-curves.ts";
import { RUN_CONDITIONS, type RunCondition } from "../analysis/run-alignment.ts";
import { expandRunArgs } from "../analysis/run-paths.ts";
import { parseComparisonPairs } from "../analysis/study-layout.ts";
import { UsageError } from "../errors.ts";
import { assertWritableDir } from "../experiment/output-paths.ts";
import { buildReport, reportLines } from "../report/build-report.ts";
import { listFlag, numberFlag, parseFlags, required, seeHelp, type Command } from "./command.ts";
import { pluginFlagFiles, PLUGIN_FLAG, PLUGIN_USAGE } from "./plugin-flag.ts";
import { cliReporter } from "./progress.ts";

const USAGE = `usage: merit report [RUN_DIR...] [--runs DIRS_OR_GLOBS]... --out DIR [--reference METHOD] [--full METHOD --ablations A,B,...]
                    [--resamples N] [--seed S] [--interval percentile|bca] [--level L]
                    [--labels name=Label,...] [--annotations FILE.jsonl --annotations-dataset NAME] [--no-figures] [--html]
                    [--no-curves] [--curve-resamples N] [--diagnostics] [--peers A,B,...] [--long-iterative METHOD] [--costs] [--setting]
                    [--gold-labels cases.csv [--annotations-dataset NAME] [--min-gold-labels N]]
                    [--all-methods] [--all-comparisons] [--methods a,b,...] [--comparisons a:b,...] [--conditions LIST] [--paper-numbers] [--example [DATASET:]QUERY_ID]
                    [--plugin FILE.ts ...]

Each RUN_DIR is a run directory (with trajectories.jsonl) or a folder searched for them; --runs takes
the same, comma-separated and/or repeated, with globs ('runs/spider-*'). Runs must share K and, per
dataset, the initial cache and data hashes (manifest.json, config.json), else the report is refused.
--gold-labels reads the CSV of \`merit annotate\` with gold_type and annotator_id filled in (Table 5);
--min-gold-labels N accepts N or more cases instead of METHOD.md §8's 150 (to try the flow on a demo;
recorded in manifest.json and the table note).
Tables follow the paper's layout: Tables 1 and 3 show every method of the runs, Iterative,
Reflexion-style, Dyn. RAG and MERIT first and the others below a rule (--methods leaves methods out;
--all-methods is that default), Table 2 compares MERIT with the paper's
comparisons (--all-comparisons: with every method), Table 4 names the full method MERIT Full; --labels
overrides the display names. Table 1 has one block of rows per dataset; Tables 1, 3 and 4 mark the
best value per dataset in bold and the second underlined; a difference that rounds to zero prints
0.00; Table 5's Acc. is population-weighted by predicted type, with the plain accuracy beside it.
--example QUERY_ID also writes DIR/figures/example-episode.{svg,png} (the paper's Figure 2: the failed
attempt, the retrieved precedents and the repair) from the --reference method's run with the lowest
seed; DATASET:QUERY_ID when several datasets hold the id. The query must have failed initially.
A study's layout (merit study run passes it): --methods a,b,... shows exactly these methods, in this
order, in Tables 1 and 3, the cost table and the figures (a call kind none of them made gets no column); --comparisons a:b,... makes Table 2 these pairs
(Δ = EX(a) − EX(b)) instead of --reference against the paper's comparisons (with the Holm p over
the pairs); --conditions feedback_regime,feedback_noise,max_repair_steps lets runs differ in those
config fields (a study's arms) and still be paired; any other difference is refused. Runs under a
feedback regime other than the oracle's add the feedback-confusion table; runs of a method that
judges its own episodes (ReasoningBank) add tables/judge-agreement.*, the judge against the oracle. Runs with call kinds beyond
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
--setting names the runs' stream order and database sets in every table's notes and in the
manifest (as \`merit study run\` does; a structured order, and the runs of verified real models,
are named always).
--diagnostics also writes the memory diagnostics of the memory methods (MERIT's entries and memory
hooks' notes; METHOD.md §9): DIR/tables/memory-utility.{csv,md,tex} (per polarity and kind of the
retrieved items, the share of repair steps after them whose attempt was correct, against the base
rate) and DIR/figures/memory-size.{svg,png,csv} (memory size over the stream).
When the runs hold peer memory methods (METHOD.md §13: methods that declare a citation), or with
--peers A,B,... (the peer family, any methods of the runs), also DIR/tables/peers.*: per dataset ×
peer, EX mean ± std, Δ = --reference − peer (Table 2's sign) with the paired query-cluster bootstrap
interval, p, MDE, Holm p over the peers, Δ = method − Iterative and − iterative_budget when present, LLM
and embedding tokens per query (two columns) and the peer's source; and DIR/figures/peers-pareto.{svg,png}:
EX against LLM tokens and against embedding tokens per query per method, the Pareto front filled.
With one long run of a memoryless method (the arm iterative_long, which \`make reproduce PEERS=1\` and
\`merit demo --peers\` run, or --long-iterative METHOD; its K differs, so pass --conditions max_repair_steps),
the report reads it at every K′ ≤ K (the shorter runs it holds as prefixes; METHOD.md §13.8): the peers
table gains Iterative's token-matched K′ (where its LLM tokens per query equal the row's, interpolated)
with Δ = method − Iterative@K′ and its paired interval, and DIR/figures/token-matched.{svg,png} draws
Iterative's EX-vs-LLM-tokens curve over K′ with every method as a point.
--html also writes DIR/index.html (offline query browser and episode explorer) with DIR/assets and DIR/report-data.
Table 2 compares --reference (default: merit, when present) with the paper's comparisons present
(every other method when none is, or with --all-comparisons); Table 4 needs --full and --ablations.
Bootstrap defaults: B = 10000 (at most 100000; --curve-resamples at most 10000), seed 0, percentile, level 0.95.
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
        curves: { type: "boolean" }, "no-curves": { type: "boolean" }, "curve-resamples": { type: "string" }, diagnostics: { type: "boolean" }, peers: { type: "string" }, "long-iterative": { type: "string" }, costs: { type: "boolean" }, setting: { type: "boolean" },
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
      resamples: numberFlag(values.resamples, "resamples", 10_000, { integer: true, min: 1, max: MAX_RESAMPLES, maxReason: "ten times the default" }),
      seed: numberFlag(values.seed, "seed", 0, { integer: true, min: 0 }),
      level: numberFlag(values.level, "level", 0.95, { min: 0, max: 1, exclusiveMin: true, exclusiveMax: true }),
      interval: interval as "percentile" | "bca",
    };
    if (values["no-curves"] && values.curves) throw new UsageError(`--curves and --no-curves contradict each other; pass one\n${USAGE}`);
    if (values["curve-resamples"] !== undefined && values["no-curves"]) throw new UsageError(`--curve-resamples sets the learning curves' band, which --no-curves leaves out; drop one\n${USAGE}`);
    const curveOpts = !values["no-curves"] ? { resamples: numberFlag(values["curve-resamples"], "curve-resamples", 1000, { integer: true, min: 1, max: MAX_CURVE_RESAMPLES, maxReason: "ten times the default" }), seed: boot.seed, level: boot.level } : undefined;
    const minGold = values["min-gold-labels"] === undefined ? undefined : numberFlag(values["min-gold-labels"], "min-gold-labels", 150, { integer: true, min: 1 });
    if (minGold !== undefined && values["gold-labels"] === undefined) throw new UsageError(`--min-gold-labels needs --gold-labels FILE\n${USAGE}`);
    const labels = parseLabels(values.labels);
    const conditions = parseConditions(values.conditions);
    const ablation = values.full === undefined && values.ablations === undefined ? {} : { full: required(values.full, "full", USAGE), ablations: listFlag(required(values.ablations, "ablations", USAGE), "ablations") };
    const layout = studyLayout(values);
    const result = await buildReport(inputs, {
      out, reference: values.reference, ...ablation, bootstrap: boot, labels,
      annotations: values.annotations, annotationsDataset: values["annotations-dataset"], goldLabels: values["gold-labels"], minGoldLabels: minGold,
      figures: !values["no-figures"], html: values.html === true, curves: curveOpts === undefined ? false : { resamples: curveOpts.resamples },
      diagnostics: values.diagnostics === true, peers: values.peers === undefined ? undefined : listFlag(values.peers, "peers"), longIterative: values["long-iterative"], costs: values.costs === true, setting: values.setting === true,
      allMethods: values["all-methods"] === true, allComparisons: values["all-comparisons"] === true, ...layout, conditions,
      paperNumbers: values["paper-numbers"] === true, example: values.example, plugins: pluginFlagFiles(values.plugin), reporter: cliReporter(io),
    });
    for (const line of reportLines(result)) io.out(line);
    return 0;
  },
};

/** `--conditions a,b`: config fields runs may differ in (RUN_CONDITIONS); one line naming a bad one. */
function parseConditions(text: string | undefined): RunCondition[] {
  if (text === undefined) return [];
  return text.split(",").map((c) => {
    const name = c.trim();
    if (!(RUN_CONDITIONS as readonly string[]).includes(name)) throw new UsageError(`--conditions: "${name}" is not a condition runs may differ in; use ${RUN_CONDITIONS.join(", ")}${seeHelp(USAGE)}`);
    return name as RunCondition;
  });
}

/** `--methods` and `--comparisons`, not mixed with the paper-layout flags they replace (each method is checked against the runs by buildReport). */
function studyLayout(values: { methods?: string; comparisons?: string; "all-methods"?: boolean; "all-comparisons"?: boolean; reference?: string }): { methods?: string[]; comparisons?: [string, string][] } {
  if (values.methods !== undefined && values["all-methods"]) throw new UsageError(`pass --methods or --all-methods, not both`);
  if (values.comparisons !== undefined && (values["all-comparisons"] || values.reference !== undefined)) throw new UsageError(`--comparisons names Table 2's pairs itself; drop --reference and --all-comparisons`);
  const methods = values.methods === undefined ? undefined : listFlag(values.methods, "methods");
  try {
    return { methods, comparisons: values.comparisons === undefined ? undefined : parseComparisonPairs(values.comparisons) };
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
}

/** `spider=Spider,bird=BIRD` → {spider: "Spider", bird: "BIRD"}. */
function parseLabels(text: string | undefined): Record<string, string> | undefined {
  if (text === undefined) return undefined;
  const pairs = text.split(",").map((p) => p.split("="));
  const bad = pairs.find((p) => p.length !== 2 || p[0].trim() === "" || p[1].trim() === "");
  if (bad) throw new UsageError(`--labels expects name=Label pairs separated by commas, got "${bad.join("=")}"`);
  return Object.fromEntries(pairs.map(([k, v]) => [k.trim(), v.trim()]));
}
