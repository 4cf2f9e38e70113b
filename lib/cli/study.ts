/**
 * `merit study new|plan|run` (README "Write a follow-up study"): a follow-up study as one file,
 * studies/NAME/study.ts (lib/experiment/study.ts). `new` writes the folder from studies/template
 * (lib/experiment/study-template.ts `newStudy`); `plan` says, before any compute, what will run and
 * what each comparison can detect (lib/analysis/study-plan.ts `planStudy`); `run` builds the initial
 * caches, runs the grid, audits every run and writes the report (lib/report/study-run.ts `runStudy`).
 * This file parses the flags and prints.
 * @module
 */
import { planStudy } from "../analysis/study-plan.ts";
import { UsageError } from "../errors.ts";
import { REPLAY_CACHE } from "../experiment/replay-cache.ts";
import { parseShard } from "../experiment/shard.ts";
import { studyReportLayout } from "../experiment/study-grid.ts";
import { newStudy } from "../experiment/study-template.ts";
import type { Study } from "../experiment/study.ts";
import { reportLines } from "../report/build-report.ts";
import { runStudy } from "../report/study-run.ts";
import { numberFlag, parseFlags, type Command, type CommandIO } from "./command.ts";
import { cliReporter } from "./progress.ts";

const USAGE = `usage: merit study new NAME [--dir DIR]
       merit study plan FILE [--target PP] [--runs DIR]
       merit study run FILE [--shard i/n] [--runs DIR] [--out DIR] [--no-html] [--initial-only] [--diagnostics]
  A follow-up study is one file, studies/NAME/study.ts: datasets, methods (the paper's and the
  study's own, registered by its plugin files), stream seeds, the reference method, the comparisons,
  how many queries, and the models (the tiny test models by default; realModels() or server({...})).
  new   writes DIR/NAME/ (default studies/NAME/) from studies/template: study.ts, my-method.ts (the
        study's method, a plugin) and study.test.ts (the study's test, whatever it lists; found by
        \`make test\` under studies/, else \`npx vitest run --root DIR/NAME\`); refuses an existing folder
  plan  before any compute: runs, the most model calls and tokens, an estimated time (the rate this
        machine measured in the study's last run, else a stated assumption), and each comparison's
        MDE at α = 0.05 and 80% power for its queries and orders (variance from the study's finished
        runs when present, else from the paper's Table 2), with the queries and orders a target Δ
        needs (--target, percentage points, default 2)
  run   the initial caches (from the bundled predictions, or the model), the grid into
        RUNS/<dataset>/<method>-s<seed> (default RUNS = runs/studies/NAME; only runs not yet complete
        are computed; their configs in RUNS/configs/<dataset>.json serve \`merit grid --config\` too),
        the causal audit of every run (exit 1 on a violation, and no report), then the report in
        OUT (default results/studies/NAME) with the study's methods in Tables 1 and 3 and its
        comparisons in Table 2 (and, as every report, the learning curves; --diagnostics adds the
        memory diagnostics, as \`merit report --diagnostics\`). --shard i/n runs only streams i, i+n, ... and stops before the audit
        and the report (rerun without --shard once every shard is done). The tiny models' call
        cache starts as a copy of ${REPLAY_CACHE}. --initial-only builds the initial caches
        (RUNS/initial/<dataset>.json) and stops: the long first step on its own, e.g. on a GPU
        machine before the grid is sharded. With \`orders\` in the study, each structured order is
        run into RUNS/order-KIND/<dataset> and reported in OUT/order-KIND; every table note names
        the stream order and the database set it is over (docs/guides/studies.md).`;

const DEFAULT_TARGET = 2;

export const studyCommand: Command = {
  name: "study",
  summary: "a follow-up study in one file: new (from the template), plan (runs, calls, power), run (grid, audit, report)",
  usage: USAGE,
  async run(argv, io) {
    const [sub, ...rest] = argv;
    if (sub === "new") return studyNew(rest, io);
    if (sub === "plan") return studyPlan(rest, io);
    if (sub === "run") return studyRun(rest, io);
    throw new UsageError(`${sub === undefined ? "missing sub-command" : `unknown sub-command "${sub}"`}: use merit study new|plan|run; see \`merit study --help\``);
  },
};

/** `merit study new NAME`: the template copied, its name and its imports of lib/ rewritten (lib/experiment/study-template.ts). */
function studyNew(argv: string[], io: CommandIO): number {
  const { values, positionals } = parseFlags(argv, { dir: { type: "string" } }, USAGE, true);
  if (positionals.length !== 1) throw new UsageError(`merit study new takes one NAME (e.g. merit study new schema-local); see \`merit study --help\``);
  const written = newStudy(positionals[0], { dir: values.dir });
  io.out(`wrote ${written.files.join(", ")}`);
  io.out(`next: merit study plan ${written.studyFile}   then   merit study run ${written.studyFile}`);
  return 0;
}

function studyFile(positionals: string[], sub: string): string {
  if (positionals.length !== 1) throw new UsageError(`merit study ${sub} takes one study FILE (studies/NAME/study.ts); see \`merit study --help\``);
  return positionals[0];
}

/** `merit study plan FILE` (lib/analysis/study-plan.ts `planStudy`). */
async function studyPlan(argv: string[], io: CommandIO): Promise<number> {
  const { values, positionals } = parseFlags(argv, { target: { type: "string" }, runs: { type: "string" } }, USAGE, true);
  const file = studyFile(positionals, "plan");
  const target = numberFlag(values.target, "target", DEFAULT_TARGET, { min: 0, exclusiveMin: true, max: 100 });
  for (const line of (await planStudy(file, { target, runs: values.runs })).lines) io.out(line);
  return 0;
}

/** `merit study run FILE` (lib/report/study-run.ts `runStudy`): exit 1 when the causal audit finds a violation. */
async function studyRun(argv: string[], io: CommandIO): Promise<number> {
  const { values, positionals } = parseFlags(argv, { shard: { type: "string" }, runs: { type: "string" }, out: { type: "string" }, "no-html": { type: "boolean" }, "initial-only": { type: "boolean" }, diagnostics: { type: "boolean" } }, USAGE, true);
  const file = studyFile(positionals, "run");
  const shard = values.shard === undefined ? undefined : parseShard(values.shard);
  if (shard && values["initial-only"]) throw new UsageError(`--initial-only builds the initial caches, which every shard shares; run it once, without --shard`);
  if (shard && values.diagnostics) throw new UsageError(`--diagnostics adds to the report, which a --shard run does not write; pass it to the run without --shard`);
  const result = await runStudy(file, { shard, runs: values.runs, out: values.out, html: values["no-html"] !== true, diagnostics: values.diagnostics === true, reporter: cliReporter(io), initialOnly: values["initial-only"] === true });
  if (values["initial-only"]) return 0;
  if (shard) {
    io.out(`study ${result.study.name}: shard ${shard.index}/${shard.count} done; once every shard is, unite the call caches (merit cache merge) and rerun without --shard for the audit and the report`);
    return 0;
  }
  if (result.report === null) return 1;
  for (const line of reportLines(result.report)) io.out(line);
  for (const r of result.orderReports) io.out(`the report over the ${r.order} stream order: ${r.out}`);
  return 0;
}

/**
 * The `merit report` command line that rewrites a finished study's report as `merit study run` writes
 * it (runStudy passes the same layout, studyReportLayout, to buildReport): its methods and
 * comparisons, the conditions its arms change, the HTML report unless `noHtml`, and the memory
 * diagnostics with `diagnostics`.
 */
export function studyReportArgs(study: Study, roots: readonly string[], out: string, noHtml: boolean, diagnostics = false): string[] {
  const { methods, comparisons, conditions, peers } = studyReportLayout(study);
  return [
    ...roots,
    "--out", out,
    "--methods", methods.join(","),
    "--comparisons", comparisons.map((p) => p.join(":")).join(","),
    ...(conditions.length > 0 ? ["--conditions", conditions.join(",")] : []),
    ...(peers !== undefined ? ["--peers", peers.join(",")] : []),
    "--setting",
    ...(noHtml ? [] : ["--html"]),
    ...(diagnostics ? ["--diagnostics"] : []),
  ];
}
