/**
 * How the episode loop calls a method's hooks (METHOD.md §12.4; issue 39 items 12, 19–21): every
 * call goes through {@link callHook} (or {@link callHookSync} for the synchronous classifier), which
 *
 * - turns whatever the hook throws into one line naming the method, the hook and what was wrong — a
 *   write to the read-only view it was given is said to be one; an error the kit raised inside the
 *   hook's model calls (a transport failure, an undeclared call kind) passes through unchanged;
 * - holds the hook to a deadline (config `hook_deadline_s`, default {@link DEFAULT_HOOK_DEADLINE_S}):
 *   the time the hook spends outside the kit's model calls (its own computing and waiting), so a
 *   slow model never counts against it and a hook that never returns stops the run with one line
 *   instead of a hang.
 *
 * It also holds the checks of what a hook hands back that JSON must carry exactly (note data: no
 * BigInt, Date, Map, Set, class instance, function, cycle, undefined or non-finite number), the
 * deep freeze of what hooks are given, and the JSON-safe form of SQL result rows.
 * @module
 */
import { MeritError } from "../errors.ts";
import type { JsonValue } from "../hash.ts";
import type { HookModel } from "./hooks.ts";

/** Seconds a hook may spend outside the kit's model calls per call, unless the config says otherwise. */
export const DEFAULT_HOOK_DEADLINE_S = 120;
/** The longest deadline one Node timer holds (2^31 − 1 ms). */
export const MAX_HOOK_DEADLINE_S = 2_147_483;

/** Where a hook is called: for its one-line refusals. */
export interface HookSite {
  method: string;
  /** `memory.retrieve`, `memory.write`, `step.afterFailure`, `classify.classify`, … */
  hook: string;
  /** The hook's declared name. */
  name: string;
  queryId: string;
}

/** Errors the kit raised inside a hook's model calls: they pass through callHook unchanged. */
const kitErrors = new WeakSet<object>();

/** Whether `error` is a write to a frozen object (strict mode's TypeError). */
function isReadOnlyWrite(error: unknown): boolean {
  return error instanceof TypeError && /read[ -]only|not extensible|Cannot (assign|add property|delete|define|redefine)|Cannot freeze|object is frozen/i.test(error.message);
}

/** The one line of a hook's failure. */
export function hookFailure(site: HookSite, error: unknown): MeritError {
  const at = `method "${site.method}": ${site.hook} ("${site.name}") in the episode of query ${site.queryId}`;
  const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
  if (isReadOnlyWrite(error)) {
    return new MeritError(`${at} wrote to the read-only view it was given (${message}); a hook reads its arguments and returns new values — revise earlier notes by returning notes with supersedes, or { notes, retire } (METHOD.md §12.4)`);
  }
  if (error instanceof RangeError && /call stack/i.test(message)) return new MeritError(`${at} recursed without end (${message}); fix the hook`);
  const name = error instanceof Error ? error.name : typeof error;
  return new MeritError(`${at} threw ${name}: ${message}; fix the hook (the run stops here and resumes with --resume once it is fixed)`);
}

/** `model` with every error it raises marked as the kit's, and `onCall` told when a call starts and ends. */
function guardedModel(model: HookModel, onCall: (delta: 1 | -1) => void): HookModel {
  const mark = (error: unknown) => {
    if (typeof error === "object" && error !== null) kitErrors.add(error);
  };
  // A call's time is the model's (paused on the hook's clock) until it settles; a synchronous one returns as it is.
  const wrap =
    (fn: (...args: unknown[]) => unknown) =>
    (...args: unknown[]): unknown => {
      onCall(1);
      let result: unknown;
      try {
        result = fn(...args);
      } catch (error) {
        mark(error);
        onCall(-1);
        throw error;
      }
      if (typeof (result as PromiseLike<unknown> | null)?.then !== "function") {
        onCall(-1);
        return result;
      }
      return Promise.resolve(result).then(
        (value) => {
          onCall(-1);
          return value;
        },
        (error: unknown) => {
          mark(error);
          onCall(-1);
          throw error;
        },
      );
    };
  // Every method of the model, its own or its class's (whatever shape HookModel takes).
  const out: Record<string, unknown> = {};
  for (let o: object | null = model; o !== null && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const key of Object.getOwnPropertyNames(o)) {
      if (key === "constructor" || key in out) continue;
      const value = (model as unknown as Record<string, unknown>)[key];
      out[key] = typeof value === "function" ? wrap((value as (...a: unknown[]) => unknown).bind(model)) : value;
    }
  }
  return Object.freeze(out) as unknown as HookModel;
}

/**
 * Calls an asynchronous hook: its failures as one line (hookFailure), its own time held to
 * `deadlineS` seconds (the time spent inside the kit's model calls not counted).
 */
export async function callHook<T>(site: HookSite, model: HookModel, deadlineS: number, call: (model: HookModel) => T | Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let remaining = deadlineS * 1000;
  let since = 0;
  let inFlight = 0;
  let settled = false;
  let expire!: (error: MeritError) => void;
  const deadline = new Promise<never>((_, reject) => (expire = reject));
  const start = () => {
    since = performance.now();
    timer = setTimeout(() => expire(new MeritError(`method "${site.method}": ${site.hook} ("${site.name}") did not return within ${deadlineS} s in the episode of query ${site.queryId} (time in its model calls not counted); fix the hook, or raise hook_deadline_s in the config (default ${DEFAULT_HOOK_DEADLINE_S})`)), Math.max(0, remaining));
  };
  const pause = () => {
    clearTimeout(timer);
    remaining -= performance.now() - since;
  };
  const guarded = guardedModel(model, (delta) => {
    if (settled) return;
    if (delta === 1 && inFlight++ === 0) pause();
    if (delta === -1 && --inFlight === 0) start();
  });
  start();
  try {
    return await Promise.race([Promise.resolve().then(() => call(guarded)), deadline]);
  } catch (error) {
    if (typeof error === "object" && error !== null && kitErrors.has(error)) throw error;
    if (error instanceof MeritError && /^method "/.test(error.message)) throw error;
    throw hookFailure(site, error);
  } finally {
    settled = true;
    clearTimeout(timer);
    deadline.catch(() => {}); // expired after the hook settled: nobody awaits it
  }
}

/** Calls a synchronous hook (the classifier): its failures as one line. */
export function callHookSync<T>(site: HookSite, call: () => T): T {
  try {
    return call();
  } catch (error) {
    if (error instanceof MeritError && /^method "/.test(error.message)) throw error;
    throw hookFailure(site, error);
  }
}

/**
 * What JSON cannot hold exactly in `value`, as "<path> is …; <fix>", or null when JSON holds it
 * exactly: plain objects, arrays, strings, finite numbers, booleans and null, without cycles.
 */
export function jsonInexact(value: unknown, path = "data"): string | null {
  const ancestors = new Set<object>();
  const visit = (v: unknown, at: string): string | null => {
    switch (typeof v) {
      case "string":
      case "boolean":
        return null;
      case "number":
        return Number.isFinite(v) ? null : `${at} is ${v}, which JSON cannot hold; store null or a string`;
      case "bigint":
        return `${at} is a BigInt (${v}n), which JSON cannot hold exactly; store it as a string (String(value)) or a number`;
      case "undefined":
        return `${at} is undefined, which JSON drops; leave the field out or store null`;
      case "function":
        return `${at} is a function, which JSON cannot hold; store data only`;
      case "symbol":
        return `${at} is a symbol, which JSON cannot hold; store a string`;
    }
    if (v === null) return null;
    const o = v as object;
    if (ancestors.has(o)) return `${at} refers back to an enclosing object (a cycle), which JSON cannot hold; store a tree`;
    if (!Array.isArray(o)) {
      const proto = Object.getPrototypeOf(o);
      if (proto !== Object.prototype && proto !== null) {
        const kind = (proto?.constructor?.name as string | undefined) || "object with a prototype";
        const fix = o instanceof Date ? "store date.toISOString()" : o instanceof Map ? "store Object.fromEntries(map)" : o instanceof Set ? "store [...set]" : ArrayBuffer.isView(o) ? "store Array.from(array)" : "store a plain object";
        return `${at} is a ${kind}, which JSON does not hold as it is; ${fix}`;
      }
    }
    ancestors.add(o);
    try {
      if (Array.isArray(o)) {
        for (let i = 0; i < o.length; i++) {
          const bad = visit(o[i], `${at}[${i}]`);
          if (bad) return bad;
        }
        return null;
      }
      for (const key of Reflect.ownKeys(o)) {
        if (typeof key === "symbol") return `${at} has a symbol key, which JSON drops; use string keys`;
        const bad = visit((o as Record<string, unknown>)[key], `${at}.${key}`);
        if (bad) return bad;
      }
      return null;
    } finally {
      ancestors.delete(o);
    }
  };
  return visit(value, path);
}

/** `value` frozen all the way down (plain objects and arrays; other objects frozen as they are). */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== "object" || value === null || Object.isFrozen(value) || ArrayBuffer.isView(value)) return value;
  Object.freeze(value);
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  return value;
}

/**
 * SQL result rows as hooks are given them (issue 39 item 12): JSON-safe, so `JSON.stringify` holds
 * them exactly — integers beyond 2^53 (SQLite's 64-bit integers come as BigInt) as decimal strings,
 * smaller ones as numbers; blobs as `x'…'` hex strings; non-finite reals as strings.
 */
export function jsonRows(rows: readonly (readonly unknown[])[]): JsonValue[][] {
  const cell = (v: unknown): JsonValue => {
    if (typeof v === "bigint") return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
    if (v instanceof Uint8Array) return `x'${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("hex")}'`;
    if (typeof v === "number") return Number.isFinite(v) ? v : String(v);
    if (v === null || typeof v === "string" || typeof v === "boolean") return v;
    return String(v);
  };
  return rows.map((r) => r.map(cell));
}
