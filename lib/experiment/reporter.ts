/**
 * Experiment, how a library entry point reports while it works (runStudy, runDemo, buildReport,
 * buildInitialCache): status lines, counters and a grid's per-stream progress go to callbacks, never
 * to the console; the CLI passes callbacks that print on stderr (lib/cli/progress.ts `cliReporter`),
 * a notebook or a script passes its own or none.
 * @module
 */
import type { GridOptions } from "./grid.ts";

/** A grid's progress callbacks (lib/experiment/grid.ts `runGrid`). */
export type GridCallbacks = Pick<GridOptions, "onProgress" | "runLog" | "onFinished">;

export interface Reporter {
  /** A status or warning line (the CLI's stderr). */
  log?: (line: string) => void;
  /** A counter for work called `label`: returns the `(done, total)` callback. */
  counter?: (label: string) => (done: number, total: number) => void;
  /** A grid's callbacks for `streams` streams. */
  grid?: (streams: number) => GridCallbacks;
}
