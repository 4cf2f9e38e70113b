/**
 * Analysis stage, table selection (METHOD.md §9): which datasets and methods a table shows, in which
 * order and under which display names, shared by every table builder.
 * @module
 */
import { datasetNames } from "../data/datasets/index.ts";
import type { BootstrapOptions } from "./bootstrap.ts";
import { difference, differenceInterval, interval, signed } from "./number-format.ts";
import type { RunSummary } from "./run-summary.ts";

/** Which runs a table shows, in which order, under which names. */
export interface TableSelection {
  /** Dataset order; default: `spider`, `bird`, then the others alphabetically. */
  datasets?: string[];
  /** Method order; default: alphabetical. */
  methods?: string[];
  /** Display names, e.g. {spider: "Spider", bird: "BIRD", merit: "MERIT"}; default: the raw names. */
  labels?: Record<string, string>;
  /** A method in `methods` drawn below a rule (the first of the methods beyond the paper's, paper-layout.ts). */
  ruleBefore?: string;
  /**
   * The paper's table style (`merit report`, paper-layout.ts paperTableSelection): Table 1 with the
   * datasets as row blocks, best bold and second underlined in Tables 3 and 4, differences shown as
   * zero printed without a sign ("0.00", not "+0.00"), Table 5's accuracy population-weighted.
   * Default off: the library's tables keep the kit's wide layout.
   */
  paperLayout?: boolean;
  /** The report's method → colour map (raw names; figures.ts methodColors): a method keeps its colour in every figure. Tables ignore it. */
  colors?: Record<string, string>;
}

/** The bootstrap settings of a table with intervals (Tables 2 and 4). */
export interface TableBootstrapOptions {
  /** Resamples B. @default 10000 */
  resamples?: number;
  /** Resampling seed. @default 0 */
  seed?: number;
  /** Confidence level. @default 0.95 */
  level?: number;
  /** Interval type. @default "percentile" */
  interval?: "percentile" | "bca";
}

/** The table's bootstrap settings with the kit's defaults filled in (as `BootstrapOptions`). */
export function tableBootstrap(opts: TableBootstrapOptions): Required<BootstrapOptions> {
  return { resamples: opts.resamples ?? 10_000, seed: opts.seed ?? 0, level: opts.level ?? 0.95, method: opts.interval ?? "percentile" };
}


/** The datasets of `runs` in table order (explicit list wins). */
export function tableDatasets(runs: readonly RunSummary[], sel: TableSelection): string[] {
  if (sel.datasets) return sel.datasets;
  const names = [...new Set(runs.map((r) => r.dataset))];
  const order = datasetNames(); // registration order: spider, bird, then the other registered datasets
  const rank = (d: string) => (order.includes(d) ? order.indexOf(d) : order.length);
  return names.sort((x, y) => rank(x) - rank(y) || (x < y ? -1 : x > y ? 1 : 0));
}

/** The methods of `runs` in table order (explicit list wins). */
export function tableMethods(runs: readonly RunSummary[], sel: TableSelection): string[] {
  return sel.methods ?? [...new Set(runs.map((r) => r.method))].sort();
}

/** The formatter of a difference and of its interval under `sel` (paper layout: zero without sign). */
export function differenceFormat(sel: TableSelection): { delta: (x: number, d: number) => string; interval: (lo: number, hi: number, d: number) => string } {
  return sel.paperLayout ? { delta: difference, interval: differenceInterval } : { delta: signed, interval };
}

/** Display name of a dataset or method. */
export function displayName(name: string, sel: TableSelection): string {
  return sel.labels?.[name] ?? name;
}

/** "seeds 0, 1, 2" when every shown (dataset, method) used the same seeds, else a per-cell remark. */
export function seedNote(runs: readonly RunSummary[]): string {
  const sets = new Set<string>();
  const byCell = new Map<string, number[]>();
  for (const r of runs) byCell.set(`${r.dataset}\u0000${r.method}`, [...(byCell.get(`${r.dataset}\u0000${r.method}`) ?? []), r.stream_seed]);
  for (const seeds of byCell.values()) sets.add(seeds.sort((x, y) => x - y).join(", "));
  return sets.size === 1 ? `stream seeds ${[...sets][0]}` : "stream seeds differ between methods (see the data records)";
}
