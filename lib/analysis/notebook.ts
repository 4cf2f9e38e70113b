/**
 * Analysis stage, the notebooks' helpers (METHOD.md §8, §9; DESIGN.md §3): the run loader and the
 * plain Markdown table that notebooks 01–07 call, so their cells keep only narration and calls.
 * Run files are read through lib/experiment/run-dir.ts like everywhere else.
 * @module
 */
import { listRuns, readTrajectories } from "../experiment/run-dir.ts";
import { summarizeRun, type RunSummary } from "./run-summary.ts";

/** The run directories below `root` (listRuns) and each run's summary, in the same order. */
export function readRuns(root: string): { dirs: string[]; runs: RunSummary[] } {
  const dirs = listRuns(root);
  return { dirs, runs: dirs.map((dir) => summarizeRun(readTrajectories(dir))) };
}

/**
 * A GitHub-flavoured Markdown table from a header and rows, cells written as given (no escaping).
 * @example markdownTable(["a", "b"], [[1, "x"]]) === "| a | b |\n| --- | --- |\n| 1 | x |"
 */
export function markdownTable(header: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  return [header, header.map(() => "---"), ...rows].map((r) => `| ${r.join(" | ")} |`).join("\n");
}
