/**
 * Analysis stage, when a Table 2 comparison is uninformative (METHOD.md §9, beyond the paper): an
 * interval and a p-value print whatever the data, so the report says in words when they carry no
 * evidence — identical outcomes on every paired query (Δ = 0, interval [0, 0], p = 1: no evidence
 * either way, not evidence of equality), a degenerate interval (every query differs by the same
 * amount, so the bootstrap has no spread), or a design whose MDE exceeds |Δ| (too few queries or
 * orders to detect a difference of the observed size; the queries that would are estimated at the
 * design's own variance, SE ∝ 1/√n). Each data record gains `informative` and `verdict`; each
 * uninformative row adds one note. Cells and columns are unchanged.
 * @module
 */
import { differenceInterval, fixed } from "./number-format.ts";
import type { Table } from "./table.ts";
import { displayName, type TableSelection } from "./table-selection.ts";

/** Below this many queries the note adds that the bootstrap interval itself is rough. */
const FEW_QUERIES = 20;

/** The words for one comparison record of Table 2, or null when it is informative. */
export function comparisonVerdict(r: { delta: number; lo: number; hi: number; se: number; mde: number; queries: number; seeds: string }): string | null {
  const orders = r.seeds.split(" ").filter(Boolean).length;
  const design = `${r.queries} paired ${r.queries === 1 ? "query" : "queries"} × ${orders} stream ${orders === 1 ? "order" : "orders"}`;
  const few = r.queries < FEW_QUERIES ? `; with ${r.queries} ${r.queries === 1 ? "query" : "queries"} the bootstrap interval is itself rough` : "";
  if (r.se === 0 && r.lo === r.hi) {
    if (r.delta === 0) return `identical outcomes on all ${design}: Δ = 0 with the degenerate interval [0.00, 0.00] and p = 1 is no evidence either way, not evidence of equality (the MDE 0.00 only reflects the missing spread)${few}`;
    return `degenerate interval ${differenceInterval(r.lo, r.hi, 2)}: every one of the ${design} differs by the same amount, so the bootstrap has no spread and the interval says nothing about uncertainty${few}`;
  }
  if (r.mde > Math.abs(r.delta)) {
    const needed = r.delta === 0 ? "" : `; about ${Math.ceil(r.queries * (r.mde / Math.abs(r.delta)) ** 2)} queries at this variance would detect a Δ of this size`;
    return `underpowered: with ${design} the MDE ${fixed(r.mde, 2)} pp exceeds |Δ| = ${fixed(Math.abs(r.delta), 2)} pp, so the design cannot tell whether the methods differ by that much${needed}${few}`;
  }
  return null;
}

/** Table 2 with `informative` and `verdict` on every record and one note per uninformative row. */
export function withVerdicts(table: Table, sel: TableSelection = {}): Table {
  const notes: string[] = [];
  const data = table.data.map((r) => {
    const verdict = comparisonVerdict({ delta: r.delta as number, lo: r.lo as number, hi: r.hi as number, se: r.se as number, mde: r.mde as number, queries: r.queries as number, seeds: String(r.seeds) });
    if (verdict !== null) notes.push(`Uninformative — ${displayName(String(r.reference), sel)} vs ${displayName(String(r.other), sel)} on ${displayName(String(r.dataset), sel)}: ${verdict}.`);
    return { ...r, informative: verdict === null, verdict: verdict ?? "" };
  });
  return { ...table, data, notes: [...table.notes, ...notes] };
}
