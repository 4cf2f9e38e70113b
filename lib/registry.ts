/**
 * Foundation: one generic name → value registry (DESIGN.md §1), used for methods and their parts,
 * datasets and executors. A name is registered once; lookups of an unknown name fail with one line
 * that suggests the nearest known name and lists them all. Iteration follows registration order, so
 * anything printed from a registry (help texts, the docs' tables) is deterministic. Each entry also
 * records its origin: the plugin file being imported when it was registered (lib/plugin-import.ts),
 * or null for the kit's own entries, so a run's identity can name only the plugins it uses.
 * @module
 */
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
