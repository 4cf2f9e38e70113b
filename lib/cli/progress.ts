/**
 * Progress on stderr for long CLI work (STYLE.md §2.18): one line per interval with done/total, rate
 * and ETA, redrawn in place on a terminal and printed at most every 5 s otherwise.
 * @module
 */
import type { CommandIO } from "./command.ts";

/** Returns an `(done, total)` callback that reports progress on `io.err`. */
export function progressReporter(io: CommandIO, label: string, now: () => number = Date.now): (done: number, total: number) => void {
  const start = now();
  const tty = Boolean(process.stderr.isTTY);
  const interval = tty ? 200 : 5000;
  let last = 0;
  return (done, total) => {
    const t = now();
    if (done < total && t - last < interval) return;
    last = t;
    const elapsed = (t - start) / 1000;
    const rate = elapsed > 0 ? done / elapsed : 0;
    const eta = rate > 0 ? (total - done) / rate : 0;
    const line = `${label} ${done}/${total} (${((100 * done) / Math.max(1, total)).toFixed(0)}%) ${rate.toFixed(1)}/s ETA ${eta.toFixed(0)}s`;
    if (tty) {
      process.stderr.write(`\r${line}${done === total ? "\n" : ""}`);
    } else if (done === total || elapsed > 5) {
      io.err(line);
    }
  };
}
