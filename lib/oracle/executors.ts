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
  return EXECUTORS.get(engine)(opts);
}
