/**
 * Analysis stage, order sensitivity (METHOD.md §9, `merit report --curves`): per (dataset, method),
 * how far the stream order moves EX — the spread max_s EX_s − min_s EX_s over the runs' S ≥ 2 orders
 * of one query set (pp), with a percentile interval from the paired query-cluster bootstrap: resample
 * r draws n query rows with replacement (`PyRandom(seed)`, n consecutive `randbelow(n)`, one fresh
 * generator per (dataset, method), as Table 2 and the learning curves), each order's EX is
 * recomputed over the drawn rows, and the resample's spread is their range. A range's bootstrap sits
 * above zero whenever orders differ on any drawn query, so the interval describes the size of the
 * spread, not a test of "no sensitivity"; memoryless methods, identical in every order, show 0 [0, 0].
 * @module
 */
import { MeritError } from "../errors.ts";
import { PyRandom } from "../random.ts";
import { MAX_CURVE_RESAMPLES } from "./learning-curves.ts";
import { fixed } from "./number-format.ts";
import { runsOf, type RunSummary } from "./run-summary.ts";
import type { Cell, DataValue, Table } from "./table.ts";
import { displayName, tableDatasets, tableMethods, type TableSelection } from "./table-selection.ts";

/** The spread of one (dataset, method) and its interval, in pp. */
export interface OrderSpread {
  orders: number;
  queries: number;
  /** EX of each order (ascending seed), in %. */
  ex: number[];
  spread: number;
  lo: number;
  hi: number;
}

/** The spread of EX across the runs' orders; the runs must cover one query set. */
export function orderSpread(runs: readonly RunSummary[], opts: { resamples?: number; seed?: number; level?: number } = {}): OrderSpread {
  const B = opts.resamples ?? 1000;
  const level = opts.level ?? 0.95;
  if (!Number.isInteger(B) || B < 1 || B > MAX_CURVE_RESAMPLES) throw new MeritError(`order sensitivity: resamples must be an integer in 1..${MAX_CURVE_RESAMPLES}, got ${B}; the kit's default is 1000`);
  if (runs.length < 2) throw new MeritError(`order sensitivity: needs at least 2 stream orders, got ${runs.length}`);
  const ids = runs[0].queries.map((q) => q.query_id);
  const n = ids.length;
  const cells = runs.map((r) => {
    if (r.queries.length !== n || r.queries.some((q, i) => q.query_id !== ids[i])) throw new MeritError(`order sensitivity: ${r.dataset}/${r.method} seed ${r.stream_seed} covers other queries than seed ${runs[0].stream_seed}`);
    return Uint8Array.from(r.queries, (q) => (q.final_correct ? 1 : 0));
  });
  const range = (values: number[]) => Math.max(...values) - Math.min(...values);
  const ex = cells.map((c) => (c.reduce((a, b) => a + b, 0) * 100) / n);
  const spreads = new Float64Array(B);
  const rng = new PyRandom(opts.seed ?? 0);
  const draws = new Int32Array(n);
  for (let r = 0; r < B; r++) {
    rng.fillRandbelow(n, draws);
    spreads[r] = range(cells.map((c) => (draws.reduce((a, q) => a + c[q], 0) * 100) / n));
  }
  spreads.sort();
  const q = (p: number) => {
    const h = (B - 1) * p;
    const below = Math.floor(h);
    const above = Math.min(below + 1, B - 1);
    return spreads[below] + (h - below) * (spreads[above] - spreads[below]);
  };
  return { orders: runs.length, queries: n, ex, spread: range(ex), lo: q((1 - level) / 2), hi: q(1 - (1 - level) / 2) };
}

/** The order-sensitivity table: one row per (dataset, method) with ≥ 2 orders; null when none has. */
export function orderSensitivityTable(runs: readonly RunSummary[], sel: TableSelection = {}, opts: { resamples?: number; seed?: number; level?: number } = {}): Table | null {
  const rows: Cell[][] = [];
  const data: Record<string, DataValue>[] = [];
  for (const dataset of tableDatasets(runs, sel)) {
    for (const method of tableMethods(runs, sel)) {
      const selected = runsOf(runs, dataset, method);
      if (selected.length < 2) continue;
      const s = orderSpread(selected, opts);
      rows.push([{ text: displayName(dataset, sel) }, { text: displayName(method, sel) }, { text: String(s.orders) }, { text: s.ex.map((v) => fixed(v, 2)).join(" / ") }, { text: fixed(s.spread, 2) }, { text: `[${fixed(s.lo, 2)}, ${fixed(s.hi, 2)}]` }]);
      data.push({ dataset, method, orders: s.orders, queries: s.queries, spread: s.spread, lo: s.lo, hi: s.hi, ...Object.fromEntries(selected.map((r, i) => [`ex_seed_${r.stream_seed}`, s.ex[i]])) });
    }
  }
  if (rows.length === 0) return null;
  const level = Math.round((opts.level ?? 0.95) * 1000) / 10;
  return {
    id: "order-sensitivity",
    title: "Order sensitivity: spread of EX across stream orders",
    columns: ["Dataset", "Method", "Orders", "EX per order (%)", "Spread (pp)", `${level}% interval`],
    align: ["l", "l", "r", "l", "r", "l"],
    rows,
    notes: [
      `Spread = max − min of EX over the method's stream orders (ascending seed in the EX column); interval: percentile, paired query-cluster bootstrap, B = ${opts.resamples ?? 1000}, seed ${opts.seed ?? 0} (METHOD.md §9). A range's resamples lie above 0 whenever orders differ on a drawn query: read the interval as the size of the spread, not as a test.`,
    ],
    data,
  };
}
