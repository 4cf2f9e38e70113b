/**
 * Methods, one method built from its parts (METHOD.md §6.2, §5.6): a definition names its parts
 * (`{ name, args }`, args only where they differ from the part's defaults); `buildMethod` resolves
 * them into the `MethodSpec` the episode loop reads — whether it repairs, whether it reflects, and
 * the retrieval policy of a memory method (planner + ranker + writer, all three or none).
 * @module
 */
import { MeritError } from "../errors.ts";
import { canonicalJson } from "../hash.ts";
import type { RetrievalPolicy } from "../retrieval/retrieval-policy.ts";
import { buildPolicy, configurePolicy, DEFAULT_RETRIEVAL_SETTINGS, type RetrievalSettings } from "./build-policy.ts";
import { checkHooks, extraCallBound, hooksRecord, type HooksRecord, type MethodHooks } from "./hooks.ts";
import { resolvePart, type PartRef, type PartRequest } from "./parts.ts";
import type { SettingSpecs, SettingValues } from "./settings.ts";
import { checkSight, type Sight } from "./sight.ts";

/** A method's parts as requested. */
export interface MethodPartsRequest {
  planner?: PartRequest;
  ranker?: PartRequest;
  writer?: PartRequest;
  steps?: PartRequest[];
}

/** A method as registered. */
export interface MethodDefinition {
  name: string;
  /** One line for manifests, the report and `merit methods`. */
  description: string;
  /** false = no repairs at all (`zeroshot`: final = initial). Default true. */
  repairs?: boolean;
  parts: MethodPartsRequest;
  /** Behaviour over one episode (lib/methods/hooks.ts): a classifier, a memory, extra call kinds. */
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
   * A method built from a factory of settings (lib/methods/settings.ts `fromFactory`; the peers'
   * top-k, caps, windows): the settings in force, recorded in the manifest.
   */
  settings?: SettingValues;
  /** The factory's settings: each with its range, its default (the original's value) and what it means. */
  settingSpecs?: SettingSpecs;
  /** The definition built again with some settings changed (a study arm's `args.settings`); an unknown or out-of-range one fails with one line. */
  withSettings?: (overrides: Readonly<Record<string, unknown>>) => MethodDefinition;
}

/** A method's parts with every arg, as the manifest records them (`method_parts`). */
export interface MethodParts {
  repairs: boolean;
  planner?: PartRef;
  ranker?: PartRef;
  writer?: PartRef;
  steps: PartRef[];
  /** The method's hooks (names, vocabularies, declared calls); absent for a method without hooks. */
  hooks?: HooksRecord;
  /** `oracle` when the method declares the oracle's verdict as its sight; absent for the default (`agent`), so records keep their bytes. */
  sight?: "oracle";
  /** The settings of a method built from a factory (every one, defaults included); absent for other methods. */
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
  /** Reflexion-style reflections after the initial failure and after every failed repair (§6.2). */
  reflects: boolean;
  /** Retrieval and memory-writing policy; null for memoryless methods. */
  memory: RetrievalPolicy | null;
  /** Hooks over one episode ({} for the paper's methods). */
  hooks: MethodHooks;
  /** What its hooks may read (the views are built from it). */
  sight: Sight;
  parts: MethodParts;
}

/**
 * Resolves a definition under `name` (an alias passes its own name and the target's definition).
 * Throws one line when a part or an arg is unknown, or when a memory part is given without the other two.
 */
export function buildMethod(def: MethodDefinition, name: string = def.name): MethodSpec {
  const { planner, ranker, writer } = def.parts;
  const given = [planner, ranker, writer].filter((p) => p !== undefined).length;
  if (given !== 0 && given !== 3) throw new MeritError(`method "${def.name}": a memory method needs a planner, a ranker and a writer (it has ${given} of them); give all three or none`);
  const repairs = def.repairs ?? true;
  const hooks = def.hooks ?? {};
  checkHooks(def.name, hooks);
  if (hooks.memory && given === 3) throw new MeritError(`method "${def.name}": has both memory parts (planner, ranker, writer) and a memory hook; give one memory (the hook, or the parts)`);
  if (!repairs && (hooks.memory || hooks.classify || hooks.step)) throw new MeritError(`method "${def.name}": a method that does not repair (repairs: false) has no episode for hooks to act on; drop the hooks or repairs: false`);
  const steps = (def.parts.steps ?? []).map((s) => resolvePart("step", s));
  const memory = planner && ranker && writer ? buildPolicy(name, def.name, def.description, { planner, ranker, writer }) : null;
  const record = hooksRecord(hooks);
  const sight = checkSight(def.name, def.sight);
  return {
    name,
    canonicalName: def.name,
    description: def.description,
    repairs,
    reflects: steps.some((s) => s.part.reflects),
    memory,
    hooks,
    sight,
    parts: { repairs, ...(memory ? memory.parts : {}), steps: steps.map((s) => s.ref), ...(record ? { hooks: record } : {}), ...(sight === "oracle" ? { sight } : {}), ...(def.settings ? { settings: { ...def.settings } } : {}) },
  };
}

/** Whether a method retrieves before each repair (memory parts or a memory hook): its runs write retrieval_log.jsonl. */
export function retrievesMemory(method: Pick<MethodSpec, "memory" | "hooks">): boolean {
  return method.memory !== null || method.hooks.memory !== undefined;
}

/** Whether a method's runs are given the embedder: memory parts (loaded only if the ranker reads vectors), or a memory hook that embeds its notes. */
export function needsEmbedder(method: Pick<MethodSpec, "memory" | "hooks">): boolean {
  return method.memory !== null || method.hooks.memory?.embedsNotes === true;
}

/** Each configured method: the method it was configured from and the settings (canonical JSON). */
const CONFIGURED = new WeakMap<MethodSpec, { from: MethodSpec; settings: string }>();

/**
 * The method with a config's retrieval settings applied to its policy and its parts, by
 * configurePolicy's rule (a setting applies where the method leaves the arg at METHOD.md's value; a
 * conflict with the method's own arg is refused in one line). Configuring a configured method again
 * starts from the method it was configured from, so a run configured twice — by the grid, for its
 * resume checks, and by runExperiment — records, writes and compares the same method.
 */
export function configureMethod(method: MethodSpec, settings: RetrievalSettings): MethodSpec {
  const key = canonicalJson(Object.fromEntries(Object.keys(DEFAULT_RETRIEVAL_SETTINGS).map((k) => [k, settings[k as keyof RetrievalSettings]])));
  const prior = CONFIGURED.get(method);
  if (prior) return prior.settings === key ? method : configureMethod(prior.from, settings);
  if (!method.memory) return method;
  const memory = configurePolicy(method.memory, settings);
  const configured = { ...method, memory, description: memory.description, parts: { ...method.parts, ...memory.parts } };
  CONFIGURED.set(configured, { from: method, settings: key });
  return configured;
}

/**
 * The most LLM calls of one episode whose initial attempt is not terminal (lib/repair/episode.ts):
 * K repairs; a reflecting method also reflects before the first repair and after every failed one,
 * 2K + 1 calls; none for a method that does not repair or when K = 0. `merit grid --plan` and
 * `merit study plan` count with it.
 */
export function episodeCallBound(method: Pick<MethodSpec, "repairs" | "reflects">, k: number): number {
  if (!method.repairs || k === 0) return 0;
  return method.reflects ? 2 * k + 1 : k;
}

/**
 * The most calls of the hooks' declared kinds in one episode of a run with K = `k` (a write hook runs
 * after every one; a `most` of `{ per_repair }` follows K): in any episode, or (given) in one that did
 * (not) start and end accepted — each kind's `per` scope.
 */
export function hookCallBound(method: Pick<MethodSpec, "hooks">, k: number, episode?: { initiallyAccepted: boolean; finallyAccepted: boolean }): number {
  return extraCallBound(method.hooks, k, episode);
}
