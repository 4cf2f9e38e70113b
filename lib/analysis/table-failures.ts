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
}

/**
 * The initial-failure counts of a dataset. Every run shares the initial cache, so all runs must
 * agree; a disagreement throws MeritError naming the two runs.
 */
function sharedComposition(runs: readonly RunSummary[], dataset: string): Record<string, number> {
  const selected = runs
    .filter((r) => r.dataset === dataset)
    .sort((x, y) => (x.method < y.method ? -1 : x.method > y.method ? 1 : x.stream_seed - y.stream_seed));
  const first = selected[0];
  const text = (r: RunSummary) => JSON.stringify(r.metrics.initial_failure_breakdown);
  for (const r of selected) {
    if (text(r) !== text(first)) {
      throw new MeritError(
        `Table 5: on ${dataset}, initial failures of (${r.method}, seed ${r.stream_seed}) are ${text(r)} but (${first.method}, seed ${first.stream_seed}) has ${text(first)}; the runs do not share one initial cache`,
      );
    }
  }
  return first.metrics.initial_failure_breakdown as Record<string, number>;
}

/** Table 5: initial failures by type (count, % of initial failures) per dataset, plus classifier scores. */
export function failureTable(runs: readonly RunSummary[], opts: FailureTableOptions = {}): Table {
  const datasets = tableDatasets(runs, opts);
  const compositions = datasets.map((d) => sharedComposition(runs, d));
  const present = new Set(compositions.flatMap((c) => Object.keys(c)));
  const types = [...(ERROR_TYPES as readonly string[]).filter((t) => present.has(t)), ...[...present].filter((t) => !(ERROR_TYPES as readonly string[]).includes(t)).sort()];
  const data: Record<string, DataValue>[] = [];
  const rows: Cell[][] = types.map((type) => [
    { text: type },
    ...compositions.flatMap((c, j) => {
      const total = Object.values(c).reduce((s, x) => s + x, 0);
      const count = c[type] ?? 0;
      data.push({ dataset: datasets[j], error_type: type, count, share: total === 0 ? 0 : count / total });
      return [{ text: String(count) }, { text: total === 0 ? MISSING : fixed((100 * count) / total, 1) }];
    }),
  ]);
  rows.push([
    { text: "Total initial failures" },
    ...compositions.flatMap((c) => [{ text: String(Object.values(c).reduce((s, x) => s + x, 0)) }, { text: "100.0" }]),
  ]);
  const notes = ["Initial failures of the shared initial cache by the classifier's coarse type (unclassified → Result Mismatch)."];
  if (opts.validation && Object.keys(opts.validation).length > 0) {
    const v = datasets.map((d) => opts.validation?.[d]);
    rows.push(
      [{ text: "Classifier accuracy (%)" }, ...v.flatMap((x) => [{ text: x ? String(x.cases) : MISSING }, { text: x ? fixed(100 * x.accuracy, 1) : MISSING }])],
      [{ text: "Classifier macro-F1" }, ...v.flatMap((x) => [{ text: x ? String(x.cases) : MISSING }, { text: x ? fixed(x.macro_f1, 3) : MISSING }])],
    );
    v.forEach((x, j) => {
      if (x) data.push({ dataset: datasets[j], error_type: null, validation_cases: x.cases, accuracy: x.accuracy, macro_f1: x.macro_f1, coverage: x.coverage });
    });
    notes.push("Classifier rows: n = annotated initially failed cases; accuracy over all cases, macro-F1 over the union of gold and predicted labels.");
  }
  return {
    id: "table5",
    title: "Composition of initial failures and classifier validation",
    columns: ["Error type", ...datasets.flatMap((d) => [`${displayName(d, opts)} n`, `${displayName(d, opts)} %`])],
    align: ["l", ...datasets.flatMap(() => ["r", "r"] as const)],
    rows,
    notes,
    data,
  };
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
