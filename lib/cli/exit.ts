/**
 * The end of a command line invocation (lib/bin.mjs): the kit closes what it opened — every executor
 * made through createExecutor that is still open (a plugin may make one and never close it) — and
 * the process then ends by itself. Should anything else still hold the event loop (a plugin's timer,
 * socket or child process), it is named in one warning line after a grace period and the process
 * exits with the command's code instead of hanging.
 * @module
 */
import { loadedPluginPaths } from "../plugin-import.ts";

/** How long the event loop may stay busy after the command before the warning (ms). */
export const LINGER_MS = 3000;

/** Handle types Node lists that never keep a finished command alive by themselves. */
const QUIET = new Set(["TTYWrap", "PipeWrap", "SignalWrap", "FSReqCallback", "FSReqPromise", "CloseReq", "ShutdownWrap", "WriteWrap", "Immediate"]);

/** "2 × Timeout, 1 × TCPSocketWrap": the busy resources, by type. */
export function lingeringText(resources: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const r of resources) if (!QUIET.has(r)) counts.set(r, (counts.get(r) ?? 0) + 1);
  return [...counts].map(([r, n]) => `${n} × ${r}`).join(", ");
}

/**
 * After `main` resolved to `code`: closes the executors still open, then arms an unref'd timer that
 * fires only while something else keeps the process alive: it warns on `warn` (naming the resources
 * and the plugins loaded) and exits with `code`.
 */
export async function settle(code: number, warn: (line: string) => void = (l) => process.stderr.write(l + "\n"), plugins: () => string[] = loadedPluginPaths): Promise<void> {
  try {
    const { closeOpenExecutors } = await import("../oracle/executors.ts");
    await closeOpenExecutors();
  } catch {
    // nothing to close (the registries may not load when the command failed early)
  }
  setTimeout(() => {
    const busy = lingeringText(process.getActiveResourcesInfo()) || "handles Node does not name";
    const from = plugins();
    warn(`merit: warning: the command is done but ${busy} still hold${/^1 × [^,]*$/.test(busy) ? "s" : ""} the event loop${from.length > 0 ? ` (opened by the plugin${from.length === 1 ? "" : "s"} ${from.join(", ")}? close what a plugin opens, e.g. clearInterval or an executor's close())` : ""}; exiting with code ${code}`);
    process.exit(code);
  }, LINGER_MS).unref();
}
