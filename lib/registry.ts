/**
 * Foundation: one generic name → value registry (DESIGN.md §1), used for methods and their parts,
 * datasets and executors. A name is registered once; lookups of an unknown name fail with one line
 * that suggests the nearest known name and lists them all. Iteration follows registration order, so
 * anything printed from a registry (help texts, the docs' tables) is deterministic. Each entry also
 * records its origin: the plugin file being imported when it was registered (lib/plugin-import.ts),
 * or null for the kit's own entries, so a run's identity can name only the plugins it uses.
 * @module
 */
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { MeritError, nearestName } from "./errors.ts";

/** A name that no entry of a registry has. */
export class UnknownNameError extends MeritError {
  readonly requested: string;
  constructor(kind: string, requested: string, known: readonly string[]) {
    const near = nearestName(requested, known);
    super(`unknown ${kind} ${JSON.stringify(requested)}.${near ? ` Did you mean ${JSON.stringify(near)}?` : ""} Known ${kind}s: ${known.join(", ")}`);
    this.name = "UnknownNameError";
    this.requested = requested;
  }
}

/** The plugin file (its recorded path) whose import is running now; null outside plugin loading. */
let loadingOrigin: string | null = null;
/** kind → name → origin of every entry a plugin registered (entries of the kit itself are absent). */
const ORIGINS = new Map<string, Map<string, string>>();

/**
 * kind → name → the file outside the kit whose code registered an entry while no plugin import was
 * running (a plugin file imported first by a study file or a test, before the kit imports it as a
 * plugin): `adoptRegistrations` gives such entries to that plugin when the kit imports it.
 */
const CALLERS = new Map<string, Map<string, string>>();
/** The kit's lib/ folder, with a trailing separator (frames under it are the kit's own). */
const LIB_DIR = fileURLToPath(new URL(".", import.meta.url));

/**
 * The user file whose code made this registration (absolute), or null when the kit's own code did:
 * the first stack frame past the kit's (lib/) frames, when it is a file outside lib/ and node_modules.
 * A frame of Node's or a test runner's module loader there means the kit registered while being
 * imported (its importer's frames further down do not count); built-ins (`Array.map`) are passed over.
 */
function callerOutsideKit(): string | null {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 40;
  const stack = new Error().stack ?? "";
  Error.stackTraceLimit = limit;
  for (const line of stack.split("\n").slice(1)) {
    if (/\(<anonymous>\)|\(native\)|^\s*at (?:new )?[\w.$<>]+ \(index \d+\)\s*$/.test(line)) continue; // a built-in between
    const at = /(?:\(|\bat )((?:file:\/\/)?(?:\/|[A-Za-z]:[\\/])[^()]*?):\d+:\d+\)?\s*$/.exec(line);
    if (at === null) return null; // node:internal (the module loader) or an eval
    let file = at[1].split("?")[0];
    if (file.startsWith("file://")) {
      try {
        file = fileURLToPath(file);
      } catch {
        return null;
      }
    }
    if (file.startsWith(LIB_DIR)) continue;
    return /[\\/]node_modules[\\/]/.test(file) ? null : file;
  }
  return null;
}

/**
 * Attributes to the plugin `origin` every entry that code in `file` (absolute) registered outside a
 * plugin import, and that no plugin owns yet: the plugin's module ran before the kit imported it (a
 * study file or a test imported it first), so the import registered nothing itself. Returns how many.
 */
export function adoptRegistrations(file: string, origin: string): number {
  let adopted = 0;
  for (const [kind, names] of CALLERS) {
    for (const [name, caller] of names) {
      if (caller !== file || ORIGINS.get(kind)?.has(name)) continue;
      if (!ORIGINS.has(kind)) ORIGINS.set(kind, new Map());
      ORIGINS.get(kind)!.set(name, origin);
      adopted++;
    }
  }
  return adopted;
}

/** The file outside the kit whose code registered `name` while no plugin import ran (absolute), or null: a name no plugin owns but a user file made. */
export function registrationCaller(kind: string, name: string): string | null {
  return ORIGINS.get(kind)?.has(name) ? null : (CALLERS.get(kind)?.get(name) ?? null);
}

/** Sets (or, with null, clears) the plugin file that new registrations are attributed to. */
export function setRegistrationOrigin(origin: string | null): void {
  loadingOrigin = origin;
}

/** The plugin file that registered `name` in the registry of `kind` ("method", "ranker", "dataset", …); null for the kit's own. */
export function registrationOrigin(kind: string, name: string): string | null {
  return ORIGINS.get(kind)?.get(name) ?? null;
}

/** Every `kind "name"` a plugin file registered, in registration order. */
export function registrationsOf(origin: string): string[] {
  return [...ORIGINS.entries()].flatMap(([kind, names]) => [...names].filter(([, o]) => o === origin).map(([name]) => `${kind} "${name}"`));
}

/** Named values of one kind (`method`, `dataset`, `ranker`, …). */
export class Registry<T> {
  readonly #entries = new Map<string, T>();

  /** `kind` names the values in error messages ("unknown dataset …"). */
  readonly kind: string;
  constructor(kind: string) {
    this.kind = kind;
  }

  /** Adds `value` under `name`; a name can be registered once. Returns the value. */
  register(name: string, value: T): T {
    if (!/^[a-z][a-z0-9_.-]*$/.test(name)) throw new MeritError(`${this.kind} name ${JSON.stringify(name)} is not allowed: use lowercase letters, digits, "_", "." and "-", starting with a letter`);
    if (this.#entries.has(name)) throw new MeritError(`${this.kind} "${name}" is already registered; choose another name`);
    this.#entries.set(name, value);
    if (loadingOrigin !== null) {
      if (!ORIGINS.has(this.kind)) ORIGINS.set(this.kind, new Map());
      ORIGINS.get(this.kind)!.set(name, loadingOrigin);
    } else {
      const caller = callerOutsideKit();
      if (caller !== null) {
        if (!CALLERS.has(this.kind)) CALLERS.set(this.kind, new Map());
        CALLERS.get(this.kind)!.set(name, caller);
      }
    }
    return value;
  }

  /** true iff `name` is registered. */
  has(name: string): boolean {
    return this.#entries.has(name);
  }

  /** The value of `name`; throws UnknownNameError with a suggestion. */
  get(name: string): T {
    const value = this.#entries.get(name);
    if (value === undefined) throw new UnknownNameError(this.kind, name, this.names());
    return value;
  }

  /** Every registered name, in registration order. */
  names(): string[] {
    return [...this.#entries.keys()];
  }

  /** Every [name, value], in registration order. */
  entries(): [string, T][] {
    return [...this.#entries.entries()];
  }
}

/**
 * A zod string naming an entry of `registry`, checked at parse time (so names a plugin registered
 * count); a wrong one fails with UnknownNameError's line.
 */
export function registeredName<T>(registry: Registry<T>) {
  return z.string().superRefine((name, ctx) => {
    if (!registry.has(name)) ctx.addIssue({ code: z.ZodIssueCode.custom, message: new UnknownNameError(registry.kind, name, registry.names()).message });
  });
}
