/**
 * Analysis stage, Table 5 (METHOD.md §9): composition of initial failures by coarse error type per
 * dataset, with the classifier's accuracy and macro-F1 against human gold types when given, and
 * the confusion matrix of a validation as its own table.
 * @module
 */
import { MeritError } from "../errors.ts";
import { ERROR_TYPES } from "../repair/trajectory.ts";
import type { ClassifierValidation } from "./classifier-validation.ts";
import { fixed, MISSING } from "./number-format.ts";
import type { RunSummary } from "./run-summary.ts";
import type { Cell, DataValue, Table } from "./table.ts";
import { displayName, tableDatasets, type TableSelection } from "./table-selection.ts";

/** Options of Table 5. */
export interface FailureTableOptions extends Omit<TableSelection, "methods"> {
  /** Classifier validation per dataset (from classifierValidation), when gold labels exist. */
  validation?: Record<string, ClassifierValidation>;
  /** The --min-gold-labels threshold the validation used (a note says so when below METHOD.md §8's 150). */
  minGoldLabels?: number;
}

/** One row of Table 5: the initial-failure counts of a dataset under one classifier's labels, and the runs that gave them. */
interface Composition {
  dataset: string;
  counts: Record<string, number>;
  /** Methods of the runs with these counts (with seeds where a method's runs split). */
  methods: string[];
  /** True when some label is not METHOD.md §3's (a method's classify hook). */
  hook: boolean;
}

/** A run's counts with sorted keys, so two equal compositions compare equal whatever their order. */
const countsKey = (c: Record<string, number>) => JSON.stringify(Object.entries(c).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));

/**
 * The initial-failure compositions of a dataset. Every run shares the initial cache, so all runs must
 * have the same initial failures (the same queries with the same initial SQL); a disagreement throws
 * MeritError naming the two runs. Their labels may differ — a method's classify hook labels the same
 * failures its own way (issue 39 §8) — so the runs are grouped by their counts: one composition per
 * classifier, the §3 classifier's first.
 */
function sharedCompositions(runs: readonly RunSummary[], dataset: string): Composition[] {
  const selected = runs
    .filter((r) => r.dataset === dataset)
    .sort((x, y) => (x.method < y.method ? -1 : x.method > y.method ? 1 : x.stream_seed - y.stream_seed));
  const first = selected[0];
  const failures = (r: RunSummary) => r.queries.filter((q) => !q.initial_correct).map((q) => `${q.query_id}\u0000${q.initial_sql}`);
  const firstFailures = failures(first);
  const groups = new Map<string, RunSummary[]>();
  for (const r of selected) {
    const f = failures(r);
    if (f.length !== firstFailures.length || f.some((x, i) => x !== firstFailures[i])) {
      const diff = f.find((x) => !firstFailures.includes(x)) ?? firstFailures.find((x) => !f.includes(x));
      const at = diff === undefined ? "" : ` (first difference: query ${diff.split("\u0000")[0]})`;
      throw new MeritError(
        `Table 5: on ${dataset}, (${r.method}, seed ${r.stream_seed}) has ${f.length} initial failure${f.length === 1 ? "" : "s"} but (${first.method}, seed ${first.stream_seed}) has ${firstFailures.length}${at}; the runs do not share one initial cache`,
      );
    }
    const key = countsKey(r.metrics.initial_failure_breakdown as Record<string, number>);
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const compositions = [...groups.values()].map((group): Composition => {
    const counts = group[0].metrics.initial_failure_breakdown as Record<string, number>;
    const methods = [...new Set(group.map((r) => r.method))].map((m) => {
      const split = selected.some((r) => r.method === m && !group.includes(r));
      return split ? `${m} (seed ${group.filter((r) => r.method === m).map((r) => r.stream_seed).join(", ")})` : m;
    });
    return { dataset, counts, methods, hook: Object.keys(counts).some((t) => !(ERROR_TYPES as readonly string[]).includes(t)) };
  });
  // the §3 classifier's composition first, then the hooks' in method order
  return compositions.sort((x, y) => Number(x.hook) - Number(y.hook));
}

/**
 * Table 5 in the paper's layout: one row per dataset with the share (%) of initial failures that are
 * Result Mismatch, Schema Linking and Other, then the classifier's accuracy (%) and macro-F1 against
 * gold labels ("—" without them). The CSV adds the counts per coarse type. In the paper's layout
 * (`opts.paperLayout`) Acc. is population-weighted by predicted type and, with gold labels, the plain
 * accuracy follows Macro-F1 as "Acc., plain (%)".
 */
export function failureTable(runs: readonly RunSummary[], opts: FailureTableOptions = {}): Table {
  const datasets = tableDatasets(runs, opts);
  // the paper's layout adds the plain accuracy beside the weighted one when there are gold labels
  const showPlain = opts.paperLayout === true && datasets.some((d) => opts.validation?.[d] !== undefined);
  const perDataset = datasets.map((d) => sharedCompositions(runs, d));
  const compositions = perDataset.flat();
  const present = new Set(compositions.flatMap((c) => Object.keys(c.counts)));
  const types = [...(ERROR_TYPES as readonly string[]).filter((t) => present.has(t)), ...[...present].filter((t) => !(ERROR_TYPES as readonly string[]).includes(t)).sort()];
  // a classify hook's labels get columns of their own, after Schema Linking (issue 39 §8: they used to fall under Other)
  const hookLabels = types.filter((t) => !(ERROR_TYPES as readonly string[]).includes(t));
  const ownColumn = new Set(["Result Mismatch", "Schema Linking", ...hookLabels]);
  const data: Record<string, DataValue>[] = [];
  const pct = (count: number, total: number) => (total === 0 ? MISSING : fixed((100 * count) / total, 2));
  const rows: Cell[][] = compositions.map((comp) => {
    const c = comp.counts;
    const dataset = comp.dataset;
    // several compositions of one dataset: each row names its classifier's methods
    const several = perDataset[datasets.indexOf(dataset)].length > 1;
    const label = several && (comp.hook || perDataset[datasets.indexOf(dataset)].filter((x) => !x.hook).length > 1) ? `${displayName(dataset, opts)}: ${comp.methods.map((m) => displayName(m, opts)).join(", ")}` : displayName(dataset, opts);
    const tag: Record<string, DataValue> = several ? { methods: comp.methods.join(", ") } : {};
    const total = Object.values(c).reduce((s, x) => s + x, 0);
    const count = (t: string) => c[t] ?? 0;
    // in a classify hook's row, a label it never returned is "—", not a measured 0 (and a hook's label in the §3 classifier's row)
    const share = (t: string) => ((comp.hook || hookLabels.includes(t)) && count(t) === 0 ? MISSING : pct(count(t), total));
    const other = Object.entries(c).filter(([t]) => !ownColumn.has(t)).reduce((s, [, x]) => s + x, 0);
    for (const type of types) data.push({ dataset, ...tag, error_type: type, count: count(type), share: total === 0 ? 0 : count(type) / total });
    data.push({ dataset, ...tag, error_type: "Other", count: other, share: total === 0 ? 0 : other / total });
    // gold labels validate the §3 classifier: its row (the dataset's first) carries them
    const v = comp === perDataset[datasets.indexOf(dataset)][0] ? opts.validation?.[dataset] : undefined;
    const w = opts.paperLayout ? v?.weighting : undefined;
    if (v) {
      const weighted: Record<string, DataValue> = w ? { weighted_accuracy: w.accuracy, weighted_covered_share: w.covered_share } : {};
      data.push({ dataset, ...tag, error_type: null, validation_cases: v.cases, accuracy: v.accuracy, macro_f1: v.macro_f1, coverage: v.coverage, ...weighted });
    }
    const accuracy = (x: number | null | undefined) => (x === null || x === undefined ? MISSING : fixed(100 * x, 2));
    return [
      { text: label },
      { text: share("Result Mismatch") },
      { text: share("Schema Linking") },
      ...hookLabels.map((t) => ({ text: share(t) })),
      { text: pct(other, total) },
      { text: accuracy(w ? w.accuracy : v?.accuracy) },
      { text: v ? fixed(v.macro_f1, 3) : MISSING },
      ...(showPlain ? [{ text: accuracy(v?.accuracy) }] : []),
      { text: String(total) },
      { text: v ? String(v.cases) : MISSING },
      ...types.map((t) => ({ text: String(count(t)) })),
    ];
  });
  const notes = [
    hookLabels.length === 0
      ? "Shares (%) of the initial failures of the shared initial cache by the classifier's coarse type (unclassified → Result Mismatch); Other = Aggregation + Execution + Syntax + Unknown (+ Filter/Value, which the paper does not list)."
      : "Shares (%) of the initial failures of the shared initial cache by the classifier's coarse type (unclassified → Result Mismatch); Other = the rest of METHOD.md §3's types (Aggregation, Execution, Syntax, Unknown, Filter/Value).",
  ];
  if (hookLabels.length > 0) {
    notes.push(
      `Labels of a method's classify hook (${hookLabels.join(", ")}) are not METHOD.md §3's types and have columns of their own; ` +
        `where the runs label the same initial failures differently, each classifier has its row, named by its methods; — where a row's classifier returned no such label.`,
    );
  }
  const validated = datasets.filter((d) => opts.validation?.[d] !== undefined);
  if (validated.length > 0 && opts.paperLayout) {
    notes.push(...weightingNotes(validated, opts));
  } else if (validated.length > 0) {
    notes.push("Acc.: classifier accuracy over all annotated initially failed cases; Macro-F1: over the union of gold and predicted labels (the CSV gives the number of cases).");
  }
  if (validated.length > 0) {
    if (opts.minGoldLabels !== undefined && opts.minGoldLabels < 150) {
      notes.push(`Validated with --min-gold-labels ${opts.minGoldLabels}, below the 150 cases METHOD.md §8 requires: a trial of the flow, not a validation.`);
    }
  }
  const missing = datasets.filter((d) => opts.validation?.[d] === undefined).map((d) => displayName(d, opts));
  if (missing.length > 0) {
    notes.push(`No gold labels for ${missing.join(", ")}, so Acc. and Macro-F1 are "—": label cases with \`merit annotate\` and pass --gold-labels (make reproduce passes results/annotations/cases.csv when that file exists).`);
  }
  const plain = showPlain ? ["Acc., plain (%)"] : [];
  const first = 6 + hookLabels.length + plain.length; // the first CSV-only column
  return {
    id: "table5",
    title: "Composition of initial failures (%) and classifier validation",
    columns: ["Dataset", "Result Mismatch", "Schema Linking", ...hookLabels, "Other", "Acc. (%)", "Macro-F1", ...plain, "Initial failures", "Annotated cases", ...types.map((t) => `${t} n`)],
    align: ["l", "r", "r", ...hookLabels.map(() => "r" as const), "r", "r", "r", ...plain.map(() => "r" as const), "r", "r", ...types.map(() => "r" as const)],
    rows,
    notes,
    data,
    csvOnly: [first, first + 1, ...types.map((_, i) => first + 2 + i)],
  };
}

/** Table 5's notes on the two accuracies in the paper's layout (which one Acc. is, and any stratum left unsampled). */
function weightingNotes(validated: readonly string[], opts: FailureTableOptions): string[] {
  const notes = [
    "Acc.: population-weighted, as in the paper: the classifier's accuracy within each predicted-type stratum of the annotated cases, weighted by that type's share of all initial failures " +
      "(post-stratification, since `merit annotate` draws a simple random sample of the initial failures rather than one stratified by type; for a sample drawn per type this is the stratified estimator). " +
      "Acc., plain: the share right over all annotated cases, unweighted. Macro-F1: over the union of gold and predicted labels (the CSV gives the number of cases).",
  ];
  for (const d of validated) {
    const w = opts.validation![d].weighting;
    const name = displayName(d, opts);
    if (w === undefined) {
      notes.push(`${name}: the runs' trajectories carry no error types, so Acc. is the plain accuracy.`);
      continue;
    }
    const missing = w.strata.filter((h) => h.population > 0 && h.cases === 0);
    if (w.accuracy === null) notes.push(`${name}: no annotated case falls in a predicted type the initial failures have, so the weighted Acc. is "—".`);
    else if (missing.length > 0) {
      const list = missing.map((h) => `${h.type} (${fixed((100 * h.population) / w.population, 2)}%)`).join(", ");
      notes.push(`${name}: no annotated case of ${list} of the initial failures; the weighted Acc. is over the other types (${fixed(100 * w.covered_share, 2)}% of the initial failures).`);
    }
    if (w.type_mismatches > 0) notes.push(`${name}: ${w.type_mismatches} annotated case(s) record a predicted_type other than the runs' type of the initial attempt; strata follow the runs' type.`);
  }
  return notes;
}

/** The confusion matrix of one validation: rows gold types, columns predicted types, plus totals. */
export function confusionTable(validation: ClassifierValidation, datasetLabel: string): Table {
  const { labels, confusion } = validation;
  const rows: Cell[][] = labels.map((gold, g) => [
    { text: gold },
    ...confusion[g].map((x, p) => ({ text: String(x), bold: g === p && x > 0 })),
    { text: String(confusion[g].reduce((s, x) => s + x, 0)) },
  ]);
  rows.push([{ text: "Total" }, ...labels.map((_, p) => ({ text: String(confusion.reduce((s, row) => s + row[p], 0)) })), { text: String(validation.cases) }]);
  const data = labels.flatMap((gold, g) => labels.map((predicted, p) => ({ dataset: datasetLabel, gold, predicted, count: confusion[g][p] })));
  return {
    id: `table5-confusion-${datasetLabel.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`,
    title: `Classifier confusion matrix on ${datasetLabel} (rows: gold type, columns: predicted type)`,
    columns: ["Gold \\ Predicted", ...labels, "Total"],
    align: ["l", ...labels.map(() => "r" as const), "r"],
    rows,
    notes: [`${validation.cases} cases; accuracy ${fixed(100 * validation.accuracy, 1)}%, macro-F1 ${fixed(validation.macro_f1, 3)}, coverage ${fixed(100 * validation.coverage, 1)}%.`],
    data,
  };
}
