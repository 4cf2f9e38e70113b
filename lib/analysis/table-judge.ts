/**
 * Analysis stage, a judging method's verdicts against the oracle (issue 37 §1): for every method whose
 * memory write judges its own episodes (ReasoningBank: a `judge` call before distillation; any hook
 * method whose write returns a `verdict`, recorded as the trajectory's `judged_success`), how often
 * its judge agrees with the oracle's verdict of the same final attempt — the judge's true and false
 * accepts and rejects, sensitivity and specificity — per (dataset, method), the rates averaged over
 * stream orders. The feedback-confusion table (table-feedback.ts) is its relative for what a judging
 * feedback regime told the agent at each attempt; this one is what a memory believed of each episode.
 * @module
 */
import { fixed, MISSING } from "./number-format.ts";
import type { FeedbackCounts, RunSummary } from "./run-summary.ts";
import type { Cell, DataValue, Table } from "./table.ts";
import { displayName, tableDatasets, type TableSelection } from "./table-selection.ts";

/** Agreement, sensitivity (judged success among oracle-correct) and specificity (judged failure among oracle-wrong); null without such episodes. */
export function judgeRates(c: FeedbackCounts): { agreement: number | null; sensitivity: number | null; specificity: number | null } {
  const n = c.tp + c.fp + c.fn + c.tn;
  return {
    agreement: n === 0 ? null : (c.tp + c.tn) / n,
    sensitivity: c.tp + c.fn === 0 ? null : c.tp / (c.tp + c.fn),
    specificity: c.fp + c.tn === 0 ? null : c.tn / (c.fp + c.tn),
  };
}

/** Mean of the defined values; null when none is. */
function meanOf(xs: readonly (number | null)[]): number | null {
  const defined = xs.filter((x): x is number => x !== null);
  return defined.length === 0 ? null : defined.reduce((s, x) => s + x, 0) / defined.length;
}

/**
 * The judge-agreement table, one row per (dataset, method that judges): counts summed over its stream
 * orders, rates the mean over orders of each order's rate; null when no run judges (so a report of
 * the paper's methods writes no such table).
 */
export function judgeAgreementTable(runs: readonly RunSummary[], sel: TableSelection = {}): Table | null {
  const judged = runs.filter((r) => r.judge !== undefined);
  if (judged.length === 0) return null;
  // The selection's order first, then every other judging method (a judge is reported even when the
  // selection's method list, the paper's, leaves its method out).
  const present = [...new Set(judged.map((r) => r.method))].sort();
  const methods = [...(sel.methods ?? []).filter((m) => present.includes(m)), ...present.filter((m) => !(sel.methods ?? []).includes(m))];
  const pct = (x: number | null) => (x === null ? MISSING : fixed(100 * x, 1));
  const rows: Cell[][] = [];
  const data: Record<string, DataValue>[] = [];
  for (const dataset of tableDatasets(judged, { ...sel, datasets: sel.datasets?.filter((d) => judged.some((r) => r.dataset === d)) })) {
    for (const method of methods) {
      const of = judged.filter((r) => r.dataset === dataset && r.method === method).sort((a, b) => a.stream_seed - b.stream_seed);
      if (of.length === 0) continue;
      const total = of.reduce<FeedbackCounts>((c, r) => ({ tp: c.tp + r.judge!.tp, fp: c.fp + r.judge!.fp, fn: c.fn + r.judge!.fn, tn: c.tn + r.judge!.tn }), { tp: 0, fp: 0, fn: 0, tn: 0 });
      const perOrder = of.map((r) => judgeRates(r.judge!));
      const agreement = meanOf(perOrder.map((x) => x.agreement));
      const sensitivity = meanOf(perOrder.map((x) => x.sensitivity));
      const specificity = meanOf(perOrder.map((x) => x.specificity));
      const n = total.tp + total.fp + total.fn + total.tn;
      rows.push([
        { text: displayName(dataset, sel) },
        { text: displayName(method, sel) },
        { text: String(of.length) },
        { text: String(n) },
        { text: pct(agreement) },
        { text: pct(sensitivity) },
        { text: pct(specificity) },
        ...(["tp", "fp", "fn", "tn"] as const).map((k) => ({ text: String(total[k]) })),
      ]);
      data.push({ dataset, method, orders: of.length, seeds: of.map((r) => r.stream_seed).join(" "), episodes: n, ...total, agreement, sensitivity, specificity });
    }
  }
  return {
    id: "judge-agreement",
    title: "Judging methods against the oracle: the judge's verdict of each episode and the oracle's verdict of its final attempt",
    columns: ["Dataset", "Method", "Orders", "Episodes judged", "Agreement (%)", "Sensitivity (%)", "Specificity (%)", "True accepts", "False accepts", "False rejects", "True rejects"],
    align: ["l", "l", "r", "r", "r", "r", "r", "r", "r", "r", "r"],
    rows,
    notes: [
      "For each method whose memory judges its own episodes (its write's verdict, trajectory judged_success; ReasoningBank's judge call, which sees the question, schema, final SQL and its rows, never a status), the judge's verdict of each episode against the oracle's verdict of the same final attempt (final_correct), over all episodes the judge saw. True accept = judged success and correct; false accept = judged success but wrong; false reject = judged failure but correct; true reject = both failure. Sensitivity = true accepts among the oracle-correct episodes, specificity = true rejects among the oracle-wrong ones. Agreement, sensitivity and specificity are the mean over stream orders of each order's rate (— when no order has such episodes); episodes and the four counts are summed over orders. A false accept stores a failure as a success in the memory; a false reject, the reverse.",
    ],
    data,
  };
}
