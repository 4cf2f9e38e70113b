/**
 * Progress on stderr for long CLI work (STYLE.md §2.18): one line per interval with done/total, rate
 * and ETA, redrawn in place on a terminal and printed at most every 5 s otherwise; a grid's
 * per-stream bars.
 * @module
 */
import type { GridOptions } from "../experiment/grid.ts";
import type { RunProgress } from "../experiment/run.ts";
import type { Reporter } from "../experiment/reporter.ts";
import type { CallCacheStats } from "../llm/call-cache.ts";
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

/**
 * Progress of a grid (STYLE.md §2.18) for `runGrid`'s callbacks. On a terminal: one bar per stream
 * (done/total, repaired, tokens, ETA), redrawn in place. Otherwise: one aggregate line every 5 s on
 * `io.err`, plus a line as each stream completes; the runs' own lines are printed only then.
 */
export function gridProgressReporter(io: CommandIO, streamCount: number): Pick<GridOptions, "onProgress" | "runLog" | "onFinished"> {
  const progress = new Map<string, RunProgress & { started: number }>();
  const started = Date.now();
  const tty = Boolean(process.stderr.isTTY);
  let drawn = 0;
  let last = 0;
  const eta = (done: number, total: number, since: number) => {
    const rate = done / Math.max(1e-9, (Date.now() - since) / 1000);
    return rate > 0 && total > 0 ? `${Math.round((total - done) / rate)}s` : "?";
  };
  const flush = (calls: CallCacheStats, force = false) => {
    if (!force && Date.now() - last < (tty ? 250 : 5000)) return;
    last = Date.now();
    const all = [...progress.entries()];
    if (tty) {
      const width = 24;
      const lines = all.map(([key, p]) => {
        const filled = Math.round((width * p.done) / Math.max(1, p.total));
        return `${key.padEnd(28)} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${p.done}/${p.total} repaired ${p.repaired} tokens ${p.tokens} ETA ${eta(p.done, p.total, p.started)}`;
      });
      lines.push(`LLM calls ${calls.computed} computed, ${calls.hits} cached`);
      process.stderr.write((drawn > 0 ? `\x1b[${drawn}F` : "") + lines.map((l) => `\x1b[2K${l}`).join("\n") + "\n");
      drawn = lines.length;
      return;
    }
    const done = all.reduce((n, [, p]) => n + p.done, 0);
    const total = all.reduce((n, [, p]) => n + p.total, 0);
    const finished = all.filter(([, p]) => p.done === p.total).length;
    const repaired = all.reduce((n, [, p]) => n + p.repaired, 0);
    const tokens = all.reduce((n, [, p]) => n + p.tokens, 0);
    io.err(`episodes ${done}/${total || "?"} | streams done ${finished}/${streamCount} | repaired ${repaired} | tokens ${tokens} | LLM calls ${calls.computed} computed, ${calls.hits} cached | ETA ${eta(done, total, started)}`);
  };
  return {
    onProgress: ({ key, progress: p, calls }) => {
      progress.set(key, { ...p, started: progress.get(key)?.started ?? Date.now() });
      flush(calls, p.done === p.total);
    },
    runLog: (line) => {
      if (!tty) io.err(line);
    },
    onFinished: (calls) => flush(calls, true),
  };
}

/** A library entry point's Reporter (lib/experiment/reporter.ts) that prints on `io.err`, as every command does. */
export function cliReporter(io: CommandIO): Required<Reporter> {
  return { log: (line) => io.err(line), counter: (label) => progressReporter(io, label), grid: (streams) => gridProgressReporter(io, streams) };
}
