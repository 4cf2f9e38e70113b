/**
 * Analysis stage, the feedback's confusion against the oracle (issue 29 §3): under every feedback
 * regime but the oracle's (`dbms_only`, `llm_judge`, `noisy_oracle`, a plugin's), how often the agent
 * was told "correct" when the oracle says wrong (false accepts) and the reverse (false rejects), over
 * all attempts of a method's runs and along the stream (its four quarters) — the first thing a
 * reviewer asks of a judge. Under dbms_only an executed attempt counts as told "correct" (the loop
 * stops on it).
 * @module
 */
import { fixed, MISSING } from "./number-format.ts";
import type { FeedbackCounts, RunSummary } from "./run-summary.ts";
import type { Cell, DataValue, Table } from "./table.ts";
import { displayName, tableDatasets, tableMethods, type TableSelection } from "./table-selection.ts";

const add = (a: FeedbackCounts, b: FeedbackCounts): FeedbackCounts => ({ tp: a.tp + b.tp, fp: a.fp + b.fp, fn: a.fn + b.fn, tn: a.tn + b.tn });
const ZERO: FeedbackCounts = { tp: 0, fp: 0, fn: 0, tn: 0 };

/** False accepts among the oracle-wrong attempts, and false rejects among the oracle-correct ones; null without such attempts. */
export function feedbackRates(c: FeedbackCounts): { falseAccept: number | null; falseReject: number | null } {
  return { falseAccept: c.fp + c.tn === 0 ? null : c.fp / (c.fp + c.tn), falseReject: c.tp + c.fn === 0 ? null : c.fn / (c.tp + c.fn) };
}

/** The confusion table, one row per (dataset, method) with feedback records summed over its seeds; null when no run has one. */
export function feedbackTable(runs: readonly RunSummary[], sel: TableSelection = {}): Table | null {
  const judged = runs.filter((r) => r.feedback !== undefined);
  if (judged.length === 0) return null;
  const pct = (x: number | null) => (x === null ? MISSING : fixed(100 * x, 1));
  const rows: Cell[][] = [];
  const data: Record<string, DataValue>[] = [];
  for (const dataset of tableDatasets(judged, sel)) {
    for (const method of tableMethods(judged, sel)) {
      const of = judged.filter((r) => r.dataset === dataset && r.method === method);
      if (of.length === 0) continue;
      const regime = [...new Set(of.map((r) => r.feedback!.regime))].join(", ");
      const total = of.reduce((c, r) => add(c, r.feedback!.total), ZERO);
      const quarters = [0, 1, 2, 3].map((q) => of.reduce((c, r) => add(c, r.feedback!.quarters[q]), ZERO));
      const rates = feedbackRates(total);
      rows.push([
        { text: displayName(dataset, sel) },
        { text: displayName(method, sel) },
        { text: regime },
        { text: String(total.tp + total.fp + total.fn + total.tn) },
        { text: pct(rates.falseAccept) },
        { text: pct(rates.falseReject) },
        ...quarters.map((q) => ({ text: pct(feedbackRates(q).falseAccept) })),
        ...(["tp", "fp", "fn", "tn"] as const).map((k) => ({ text: String(total[k]) })),
      ]);
      data.push({ dataset, method, regime, seeds: of.length, ...total, false_accept: rates.falseAccept, false_reject: rates.falseReject, ...Object.fromEntries(quarters.map((q, i) => [`false_accept_q${i + 1}`, feedbackRates(q).falseAccept])) });
    }
  }
  return {
    id: "feedback-confusion",
    title: "Feedback against the oracle: attempts told correct when wrong (false accept) and wrong when correct (false reject)",
    columns: ["Dataset", "Method", "Feedback", "Attempts", "False accept (%)", "False reject (%)", "FA Q1 (%)", "FA Q2 (%)", "FA Q3 (%)", "FA Q4 (%)", "told correct, correct", "told correct, wrong", "told wrong, correct", "told wrong, wrong"],
    align: ["l", "l", "l", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r", "r"],
    rows,
    notes: [
      "Every scored attempt (the initial SQL included) of the runs named, over their seeds. False accept = told correct among the attempts the oracle scores wrong; false reject = told wrong among those it scores correct. FA Q1–Q4: false accepts in each quarter of the stream. Under dbms_only, an attempt that executed counts as told correct (it ends the episode). Under noisy_oracle the noise flips only the denotation verdict of SQL that executed: SQL that did not run is always told wrong, so its false accepts are 0 and the noise rate shows among executed attempts.",
    ],
    data,
    csvOnly: [10, 11, 12, 13],
  };
}
