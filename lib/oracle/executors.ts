/**
 * Oracle execution, the bundled engines (DESIGN.md §1 "Executors"): one line per executor file. Create
 * executors from here (not from executor.ts), so every bundled engine is registered first.
 * @module
 */
import "./sqlite-executor.ts";

import { EXECUTORS, type ExecutorOptions, type SqlExecutor } from "./executor.ts";

export { EXECUTORS, registerExecutor } from "./executor.ts";

/** The default engine of an oracle. */
export const DEFAULT_ENGINE = "sqlite";

/** A new executor of `engine`; throws "unknown executor … Did you mean …?" for an unregistered name. */
export function createExecutor(engine: string, opts: ExecutorOptions = {}): SqlExecutor {
  const executor = EXECUTORS.get(engine)(opts);
  const close = executor.close.bind(executor);
  try {
    executor.close = () => (OPEN.delete(executor), close());
    OPEN.add(executor);
  } catch {
    // a frozen executor (a plugin's) cannot be tracked; it closes itself or the CLI names what it holds
  }
  return executor;
}

/** Executors made by createExecutor and not closed yet (the kit's own close theirs; a plugin's may not). */
const OPEN = new Set<SqlExecutor>();

/** Closes every executor createExecutor made that is still open (the CLI, once a command is done); returns their engines. */
export async function closeOpenExecutors(): Promise<string[]> {
  const open = [...OPEN];
  await Promise.all(open.map((e) => e.close()));
  return open.map((e) => e.engine);
}
