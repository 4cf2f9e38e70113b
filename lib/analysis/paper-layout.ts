/**
 * Analysis stage, the paper's table layout (METHOD.md §9; arXiv 2608.05906 Tables 1–5): which
 * methods and comparisons the report shows by default, in the paper's order and under its display
 * names, with every other method of the runs after them (below a rule); Table 2's comparisons
 * beyond the paper's with `merit report --all-comparisons`.
 * @module
 */
import { datasetAdapter, datasetNames } from "../data/datasets/index.ts";
import type { RunSummary } from "./run-summary.ts";
import type { TableSelection } from "./table-selection.ts";

/** Table 1 and Table 3: the paper's four main methods in its column order (the Makefile's PAPER_METHODS is the 11 methods `make reproduce` runs for Tables 1–5). */
export const PAPER_MAIN_METHODS = ["iterative", "reflexion", "dynamic_rag", "merit"] as const;

/** Table 2: the paper compares MERIT with these, in this order (merit_typerel is its fourth row). */
export const PAPER_COMPARISONS = ["iterative", "reflexion", "dynamic_rag", "merit_typerel"] as const;

/** The paper's display names of datasets and methods (`--labels` overrides any of them). */
export const PAPER_LABELS: Readonly<Record<string, string>> = {
  spider: "Spider",
  bird: "BIRD",
  zeroshot: "Zero-shot",
  iterative: "Iterative",
  reflexion: "Reflexion-style",
  dynamic_rag: "Dynamic RAG",
  merit: "MERIT",
  merit_full: "MERIT",
  merit_typerel: "MERIT (type-rel.)",
  positive_only: "Positive only",
  no_type_filter: "No type filter",
  no_dense_rerank: "No dense rerank",
  no_bm25: "No BM25",
  random_same_type: "Random same type",
  cross_database_only: "Cross-database only",
  transductive_batch: "Transductive batch",
};

/**
 * Display names of the `datasets` the paper does not name: each registered one's adapter `title`
 * (`Spider-Syn dev`, a plugin dataset's title), so no table shows a registry name; `--labels` still
 * wins, and an unregistered name stays as it is.
 */
export function datasetTitles(datasets: readonly string[]): Record<string, string> {
  const known = datasetNames();
  return Object.fromEntries([...new Set(datasets)].filter((d) => PAPER_LABELS[d] === undefined && known.includes(d)).map((d) => [d, datasetAdapter(d).title]));
}

/** Where the paper's tables abbreviate a name (Tables 1–3); figures and COMPARISON.md keep PAPER_LABELS. */
export const PAPER_TABLE_LABELS: Readonly<Record<string, string>> = { dynamic_rag: "Dyn. RAG" };

/** Table 4 names the full method's row "MERIT Full" (for the paper's full method, `merit` / `merit_full`). */
export const PAPER_FULL_LABELS: Readonly<Record<string, string>> = { merit: "MERIT Full", merit_full: "MERIT Full" };

/** Methods of a table in paper layout, and the first method drawn below a rule (the extras). */
export interface MethodLayout {
  methods: string[];
  /** The first non-paper method, drawn below a rule; undefined when none is shown. */
  firstExtra?: string;
}

/**
 * Every method of `runs`: the paper's present among them in paper order, then every other method
 * (alphabetically) below a rule. A report shows each method its runs hold unless the user leaves it
 * out (`merit report --methods`); runs with none of the paper's methods show all of theirs, no rule.
 * (`all`, from `--all-methods`, is the default now and changes nothing; kept so callers still compile.)
 */
export function paperMethodLayout(runs: readonly RunSummary[], _all = true): MethodLayout {
  const present = [...new Set(runs.map((r) => r.method))];
  const paper = PAPER_MAIN_METHODS.filter((m) => present.includes(m));
  const extra = present.filter((m) => !(PAPER_MAIN_METHODS as readonly string[]).includes(m)).sort();
  if (paper.length === 0) return { methods: extra };
  if (extra.length === 0) return { methods: paper };
  return { methods: [...paper, ...extra], firstExtra: extra[0] };
}

/** Table 2's comparison methods: the paper's present among `runs`, or every other method with `all` (or when none is present). */
export function paperComparisons(runs: readonly RunSummary[], reference: string, all: boolean): string[] | undefined {
  if (all) return undefined;
  const present = new Set(runs.map((r) => r.method));
  const paper = PAPER_COMPARISONS.filter((m) => m !== reference && present.has(m));
  return paper.length > 0 ? paper : undefined;
}

/**
 * The selection `merit report` gives Tables 1, 3, 4, 5, the difficulty table and the figures: the
 * paper's labels (overridden by `labels`), the paper's methods first and every other method of the
 * runs below a rule (`allMethods` is that default).
 */
export function paperSelection(runs: readonly RunSummary[], opts: { allMethods?: boolean; labels?: Record<string, string> } = {}): TableSelection {
  const layout = paperMethodLayout(runs, opts.allMethods === true);
  return { labels: { ...PAPER_LABELS, ...opts.labels }, methods: layout.methods, ruleBefore: layout.firstExtra };
}

/** Table 2's methods compared with `reference` as `merit report` shows them (`all`: every other method). */
export function reportComparisons(runs: readonly RunSummary[], reference: string, all = false): string[] {
  return paperComparisons(runs, reference, all) ?? [...new Set(runs.map((r) => r.method))].sort();
}


/**
 * The selection `merit report` gives its Tables 1–5: paperSelection with the paper's table names
 * (PAPER_TABLE_LABELS; `labels` still win) and the paper's table style (`paperLayout`).
 */
export function paperTableSelection(runs: readonly RunSummary[], opts: { allMethods?: boolean; labels?: Record<string, string> } = {}): TableSelection {
  const sel = paperSelection(runs, { ...opts, labels: { ...PAPER_TABLE_LABELS, ...opts.labels } });
  return { ...sel, paperLayout: true };
}

/** Table 4's selection: the full method's row under its paper name ("MERIT Full") unless `labels` name it. */
export function paperAblationSelection(sel: TableSelection, full: string, labels: Record<string, string> = {}): TableSelection {
  const name = PAPER_FULL_LABELS[full];
  return name === undefined || labels[full] !== undefined ? sel : { ...sel, labels: { ...sel.labels, [full]: name } };
}
