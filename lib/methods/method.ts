/**
 * Methods, one method concept (METHOD.md §6.2, §12; issue 36 §1): a method is a set of hooks —
 * `feedback` is the run's regime object (lib/methods/feedback.ts); `classify` (default: the
 * deterministic classifier of METHOD.md §3), `memory` (MERIT's entry memory, `meritMemory(args)`, or
 * a plugin's note memory), `step` (Reflexion's reflection is `reflect()`), `calls` (the extra model
 * call kinds, each with its count and output limit) — and what its hooks may read (`sight`). The
 * paper's 13 methods and the peers are all definitions of this one shape; a hook built by a factory
 * records its name and args, so manifests (`method_parts`), `merit methods` and the run identity say
 * exactly what ran.
 *
 * A variant — an ablation, a study arm, an experiment config's retrieval settings — is one thing: a
 * method with some of its factory's args overridden (`withArgs`), refused in one line when an
 * override names an arg the factory lacks. An alias (`merit_full`) is another name for a method.
 * @module
 */
import { MeritError } from "../errors.ts";
import { canonicalJson, type JsonValue } from "../hash.ts";
import type { RetrievalPolicy } from "../retrieval/retrieval-policy.ts";
import { checkHooks, extraCallBound, hooksRecord, type CallDeclaration, type HooksRecord, type MemoryHook, type MethodHooks } from "./hooks.ts";
import { changedSettingsText, isEntryMemory, meritMemory, retrievalOverrides, type RetrievalSettings } from "./merit-memory.ts";
import type { SettingSpecs, SettingValues } from "./settings.ts";
import { checkSight, type Sight } from "./sight.ts";

/** A method as registered. */
export interface MethodDefinition {
  name: string;
  /** One line for manifests, the report and `merit methods`. */
  description: string;
  /** false = no repairs at all (`zeroshot`: final = initial). Default true. */
  repairs?: boolean;
  /** Its behaviour over one episode (lib/methods/hooks.ts); none = stateless iterative repair. */
  hooks?: MethodHooks;
  /** The method this one is an arm of (a study's `arms`): its plugin is recorded with the arm's runs. */
  armOf?: string;
  /** The method's source (paper, venue, arXiv id) when it ports another work. */
  citation?: string;
  /**
   * What its hooks may read (lib/methods/sight.ts): `agent` (default) — what the agent observed under
   * the run's feedback regime — or `oracle`, the oracle's verdict of every attempt as well (ground
   * truth). The hooks' views are built from it, so it is a boundary, not a label.
   */
  sight?: Sight;
  /**
   * A method built from a factory of integer settings (lib/methods/settings.ts `fromFactory`; the
   * peers' top-k, caps, windows): the settings in force, recorded in the manifest.
   */
  settings?: SettingValues;
  /** The factory's settings: each with its range, its default (the original's value) and what it means. */
  settingSpecs?: SettingSpecs;
  /**
   * The definition built again with some of its factory's args changed (an ablation, a study arm's
   * `args`, a config's retrieval settings); an unknown or ill-typed one fails with one line. Absent
   * for a method with no args (zeroshot, iterative, reflexion).
   */
  withArgs?: (overrides: Readonly<Record<string, unknown>>) => MethodDefinition;
}

/** A method's record, as the manifest holds it (`method_parts`, the on-disk name kept from earlier kits). */
export interface MethodRecord {
  repairs: boolean;
  /** The method's hooks (names, factory args, vocabularies, declared calls); absent for a method without hooks. */
  hooks?: HooksRecord;
  /** `oracle` when the method declares the oracle's verdict as its sight; absent for the default (`agent`). */
  sight?: "oracle";
  /** The settings of a method built from a factory of settings (every one, defaults included). */
  settings?: Record<string, number>;
}

/** A resolved method, as the episode loop and the run read it. */
export interface MethodSpec {
  /** Name as used on the command line and in run directories. */
  name: string;
  /** The registered method the name resolved to (itself, or an alias's target). */
  canonicalName: string;
  description: string;
  repairs: boolean;
  /** Its hooks, the step's calls merged into `calls`. */
  hooks: MethodHooks;
  /** MERIT's entry memory's retrieval policy, stamped with the method's name (what the retriever reads); null for any other memory or none. */
  memory: RetrievalPolicy | null;
  /** What its hooks may read (the views are built from it). */
  sight: Sight;
  record: MethodRecord;
  /** The definition it was built from (for `withArgs`). */
  definition: MethodDefinition;
}

/**
 * Resolves a definition under `name` (an alias passes its own name and the target's definition).
 * Throws one line when a hook is malformed, or for a definition in the retired `parts` form.
 */
export function buildMethod(def: MethodDefinition, name: string = def.name): MethodSpec {
  if (Object.hasOwn(def, "parts")) {
    throw new MeritError(`method "${def.name}": methods are hooks now, not parts (planner, ranker, writer, steps); give hooks: { memory: meritMemory({ …args }) } for MERIT's memory and hooks: { step: reflect() } for Reflexion (docs/guides/add-a-method.md)`);
  }
  const repairs = def.repairs ?? true;
  const hooks = withStepCalls(def.name, def.hooks ?? {});
  checkHooks(def.name, hooks);
  if (!repairs && (hooks.memory || hooks.classify || hooks.step || hooks.propose)) throw new MeritError(`method "${def.name}": a method that does not repair (repairs: false) has no episode for hooks to act on; drop the hooks or repairs: false`);
  const record = hooksRecord(hooks);
  const sight = checkSight(def.name, def.sight);
  const memory = isEntryMemory(hooks.memory) ? { ...hooks.memory.policy, limits: { ...hooks.memory.policy.limits }, channels: { ...hooks.memory.policy.channels }, writes: { ...hooks.memory.policy.writes }, name, canonicalName: def.name, description: def.description } : null;
  return {
    name,
    canonicalName: def.name,
    description: def.description,
    repairs,
    hooks,
    memory,
    sight,
    record: { repairs, ...(record ? { hooks: record } : {}), ...(sight === "oracle" ? { sight } : {}), ...(def.settings ? { settings: { ...def.settings } } : {}) },
    definition: def,
  };
}

/** `hooks` with its step's declared calls merged into `calls` (a kind declared by both is refused). */
function withStepCalls(method: string, hooks: MethodHooks): MethodHooks {
  const stepCalls = hooks.step?.calls;
  if (stepCalls === undefined) return hooks;
  const calls: Record<string, CallDeclaration> = { ...(hooks.calls ?? {}) };
  for (const [kind, decl] of Object.entries(stepCalls)) {
    if (Object.hasOwn(calls, kind)) throw new MeritError(`method "${method}": call kind "${kind}" is declared by its step "${hooks.step!.name}" and by its calls; declare it once`);
    calls[kind] = decl;
  }
  return { ...hooks, calls };
}

/** The note memory of a method (a plugin's memory hook), or undefined for MERIT's entry memory or none. */
export function noteMemoryOf(method: Pick<MethodSpec, "hooks">): MemoryHook | undefined {
  const m = method.hooks.memory;
  return m === undefined || isEntryMemory(m) ? undefined : m;
}

/** Whether a method retrieves before each repair (any memory): its runs write retrieval_log.jsonl. */
export function retrievesMemory(method: Pick<MethodSpec, "hooks">): boolean {
  return method.hooks.memory !== undefined;
}

/** Whether a method's runs are given the embedder: MERIT's entry memory (loaded only if its ranker reads vectors), or a note memory that embeds its notes. */
export function needsEmbedder(method: Pick<MethodSpec, "hooks">): boolean {
  return isEntryMemory(method.hooks.memory) || noteMemoryOf(method)?.embedsNotes === true;
}

/**
 * `method` with some of its factory's args overridden, under the same name: the definition's own
 * `withArgs` (a method built from a factory: `meritMethod`, a peer), else — for a method whose memory
 * is MERIT's (a plugin's `hooks: { memory: meritMemory(…) }`) — the memory rebuilt with the overrides.
 * One line when the method has no args or an override names one its factory lacks. `description`
 * replaces the method's.
 */
export function withArgs(method: MethodSpec, overrides: Readonly<Record<string, unknown>>, description?: string): MethodSpec {
  const def = method.definition;
  const described = (d: MethodDefinition) => buildMethod({ ...d, name: def.name, description: description ?? d.description }, method.name);
  if (Object.keys(overrides).length === 0) return description === undefined ? method : described(def);
  if (def.withArgs !== undefined) return described(def.withArgs(overrides));
  const memory = def.hooks?.memory;
  if (isEntryMemory(memory)) return described({ ...def, hooks: { ...def.hooks, memory: meritMemory({ ...memory.args, ...overrides }) } });
  throw new MeritError(`method "${method.canonicalName}" has no args to change (${Object.keys(overrides).join(", ")}); it is built from no factory`);
}

/** Each configured method: the method it was configured from and the settings (canonical JSON). */
const CONFIGURED = new WeakMap<MethodSpec, { from: MethodSpec; settings: string }>();

/**
 * The method under an experiment config's retrieval settings: for MERIT's entry memory, the settings
 * as overrides of its args (merit-memory.ts `retrievalOverrides`: a setting applies where the method
 * leaves the arg at METHOD.md's value; a conflict with the method's own arg is refused in one line),
 * and a setting that differs from METHOD.md named in the description. Any other method is returned
 * as it is. Applying settings to a method they were applied to starts from the method it was made
 * from, so a run configured twice — by the grid and by the run — records the same method.
 */
export function underSettings(method: MethodSpec, settings: RetrievalSettings): MethodSpec {
  const key = canonicalJson(settings as unknown as JsonValue);
  const prior = CONFIGURED.get(method);
  if (prior) return prior.settings === key ? method : underSettings(prior.from, settings);
  const memory = method.hooks.memory;
  if (!isEntryMemory(memory)) return method;
  const changed = changedSettingsText(settings);
  const overrides = retrievalOverrides(method.name, memory, settings);
  const configured = withArgs(method, overrides, changed === "" ? method.description : `${method.description} (configured: ${changed})`);
  CONFIGURED.set(configured, { from: method, settings: key });
  return configured;
}

/**
 * The most LLM calls of one episode whose initial attempt is not terminal (lib/repair/episode.ts)
 * besides the hooks' declared kinds: K repairs; none for a method that does not repair or when
 * K = 0. Reflexion's reflections are its step's declared kind, counted by {@link hookCallBound}
 * (K + 1: 2K + 1 calls in all). `merit grid --plan` and `merit study plan` count with both.
 */
export function episodeCallBound(method: Pick<MethodSpec, "repairs">, k: number): number {
  if (!method.repairs || k === 0) return 0;
  return k;
}

/**
 * The most calls of the hooks' declared kinds in one episode of a run with K = `k` (a write hook runs
 * after every one; a `most` of `{ per_repair }` follows K): in any episode, or (given) in one that did
 * (not) start and end accepted — each kind's `per` scope.
 */
export function hookCallBound(method: Pick<MethodSpec, "hooks">, k: number, episode?: { initiallyAccepted: boolean; finallyAccepted: boolean }): number {
  return extraCallBound(method.hooks, k, episode);
}
