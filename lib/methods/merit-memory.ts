/**
 * Methods, MERIT's memory as one hook factory (METHOD.md §4.3, §5.4–5.6; issue 36 §1–2):
 * `meritMemory(args)` builds the dual-polarity entry memory of the paper's memory methods — which
 * entries are legal and how they are pooled (`layout`, `type_filter`, `min_typed_pool`, the per-pool
 * limits, `exclude_same_database`, `causal`), how a pool is ranked (`ranker`, a registered ranker
 * factory, with `ranker_args`), and what a finished episode stores (`positive`, `negative`, `scope`,
 * `transductive_prepass`). Its defaults are MERIT's, so every paper method is `meritMemory` with the
 * args that differ; the ablations, a study arm, and an experiment config's `retrieval` settings are all
 * overrides of these args (lib/methods/method.ts `withArgs`). The built memory carries its full args
 * (with the ranker's, defaults filled in) for the manifest and the retrieval policy the retriever
 * reads (lib/retrieval/retrieval-policy.ts).
 * @module
 */
import { MeritError } from "../errors.ts";
import { canonicalJson, type JsonValue } from "../hash.ts";
import { APPLICABILITY_SCOPES } from "../memory/entry.ts";
import { BASE_WEIGHTS } from "../retrieval/rank.ts";
import { HybridRanker, RandomRanker, readsVectors, type Ranker } from "../retrieval/ranker.ts";
import type { PoolLayout, RetrievalPolicy, TypeFilterRule } from "../retrieval/retrieval-policy.ts";
import { Registry } from "../registry.ts";
import { count, nonNegative, oneOf, resolveArgs, type Factory, type FactoryArgs } from "./factory.ts";

/** Ranker factories by name (`hybrid`, `random`; a plugin registers its own, e.g. examples/mmr.ts). */
export const RANKERS = new Registry<Factory<Ranker>>("ranker");

RANKERS.register("hybrid", {
  summary: "min-max normalised dense and BM25 fused by weight (0 = channel off), optional same-type bonus (METHOD.md §5.4)",
  defaults: { dense_weight: BASE_WEIGHTS.dense, bm25_weight: BASE_WEIGHTS.bm25, type_bonus: 0 },
  build: (a) => new HybridRanker({ dense: nonNegative("hybrid", "dense_weight", a.dense_weight), bm25: nonNegative("hybrid", "bm25_weight", a.bm25_weight) }, nonNegative("hybrid", "type_bonus", a.type_bonus)),
});

RANKERS.register("random", {
  summary: "seeded shuffle of the pool, scores 0, no embedding (random_same_type, METHOD.md §5.6)",
  defaults: {},
  build: () => new RandomRanker(),
});

const LAYOUTS: readonly PoolLayout[] = ["by_polarity", "positive_only", "combined"];
const TYPE_FILTERS: readonly TypeFilterRule[] = ["always", "never", "high_reliability"];

/** MERIT's values of every arg of `meritMemory` (METHOD.md §4.3, §5.4–5.5). */
export const MERIT_MEMORY_DEFAULTS: Readonly<FactoryArgs> = Object.freeze({
  layout: "by_polarity",
  type_filter: "always",
  min_typed_pool: 3,
  max_positive: 3,
  max_negative: 1,
  exclude_same_database: false,
  causal: true,
  ranker: "hybrid",
  ranker_args: {},
  positive: true,
  negative: true,
  scope: "global",
  transductive_prepass: false,
});

/** The name a manifest records MERIT's memory under. */
export const MERIT_MEMORY = "merit_memory";

/** The retrieval policy of a memory, before a method stamps its name on it. */
export type EntryPolicy = Omit<RetrievalPolicy, "name" | "canonicalName" | "description">;

/**
 * MERIT's entry memory as a method's `memory` hook: the store of verified corrections and failed
 * directions, written by the kit from each finished episode (lib/memory/finalize.ts) and read through
 * the retriever (lib/retrieval/retriever.ts) under the causal eligibility rules (lib/memory/eligibility.ts).
 */
export interface EntryMemory {
  readonly kind: "entries";
  readonly name: typeof MERIT_MEMORY;
  /** Every arg, the ranker's included, as the manifest records them. */
  readonly args: Readonly<FactoryArgs>;
  readonly policy: EntryPolicy;
}

/** Whether a memory hook is MERIT's entry memory (and not a plugin's note memory). */
export function isEntryMemory(memory: unknown): memory is EntryMemory {
  return typeof memory === "object" && memory !== null && (memory as { kind?: unknown }).kind === "entries";
}

/** MERIT's memory with `args` laid over MERIT's values; an unknown arg, ranker or ranker arg fails with one line. */
export function meritMemory(args: Readonly<Record<string, unknown>> = {}): EntryMemory {
  const what = `memory "${MERIT_MEMORY}"`;
  const a = resolveArgs(what, MERIT_MEMORY_DEFAULTS as FactoryArgs, args);
  const rankerName = a.ranker as string;
  const rankerFactory = RANKERS.get(rankerName); // an unknown name: the registry's one line (nearest name, known rankers)
  if (typeof a.ranker_args !== "object" || a.ranker_args === null || Array.isArray(a.ranker_args)) throw new MeritError(`${what}: arg "ranker_args" must be an object of the ranker's args`);
  const rankerArgs = resolveArgs(`ranker "${rankerName}"`, rankerFactory.defaults, a.ranker_args as Record<string, unknown>);
  const ranker = rankerFactory.build(rankerArgs);
  const maxPositive = count(MERIT_MEMORY, "max_positive", a.max_positive);
  const maxNegative = count(MERIT_MEMORY, "max_negative", a.max_negative);
  const full = JSON.parse(canonicalJson({ ...a, ranker_args: rankerArgs } as JsonValue)) as FactoryArgs;
  const policy: EntryPolicy = {
    pools: oneOf(MERIT_MEMORY, "layout", a.layout, LAYOUTS),
    typeFilter: oneOf(MERIT_MEMORY, "type_filter", a.type_filter, TYPE_FILTERS),
    minTypedPool: count(MERIT_MEMORY, "min_typed_pool", a.min_typed_pool),
    limits: { positive: maxPositive, negative: maxNegative, combined: maxPositive + maxNegative },
    excludeSameDatabase: a.exclude_same_database as boolean,
    causal: a.causal as boolean,
    scorer: rankerName,
    ranker,
    channels: { ...ranker.channels },
    vectors: readsVectors(ranker, `ranker "${rankerName}"`),
    typeBonus: ranker.typeBonus,
    writes: { updatesGlobalMemory: true, writesPositive: a.positive as boolean, writesNegative: a.negative as boolean, scope: oneOf(MERIT_MEMORY, "scope", a.scope, APPLICABILITY_SCOPES) },
    transductivePrepass: a.transductive_prepass as boolean,
    args: full,
  };
  return Object.freeze({ kind: "entries" as const, name: MERIT_MEMORY, args: full, policy });
}

/**
 * The retrieval settings of an experiment config (lib/experiment/config.ts `retrieval`), in the
 * units METHOD.md §5.4–5.6 uses.
 */
export interface RetrievalSettings {
  /** Entries from the positive pool (§5.5: 3). */
  max_positive: number;
  /** Entries from the negative pool (§5.5: 1). */
  max_negative: number;
  /** Smallest typed pool the hard filter ranks instead of falling back (§5.5: 3). */
  min_typed_pool: number;
  /** The type-reliability-aware variant's same-type bonus (§5.4: 0.10). */
  type_bonus: number;
}

/** METHOD.md's values; with them a config changes no method. */
export const DEFAULT_RETRIEVAL_SETTINGS: Readonly<RetrievalSettings> = { max_positive: 3, max_negative: 1, min_typed_pool: 3, type_bonus: 0.1 };

/**
 * A config's retrieval settings as overrides of a memory's args (METHOD.md §5.5–5.6), or {} when they
 * change nothing. A setting never silently overrides the method (issue: identical sweep arms). Per arg:
 * the method leaves it at METHOD.md's value — the config's applies; the method sets its own and the
 * config is at METHOD.md's value (or equals the method's) — the method's stays; both set other values
 * — refused in one line naming the method, the arg, both values and the fix. `type_bonus` applies only
 * to a ranker that uses a bonus (a positive one: the type-reliability-aware variant).
 */
export function retrievalOverrides(method: string, memory: EntryMemory, settings: RetrievalSettings): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = {};
  const settle = (key: keyof RetrievalSettings, own: JsonValue, where: string): JsonValue => {
    const paper = DEFAULT_RETRIEVAL_SETTINGS[key];
    const setting = settings[key];
    if (own === paper) return setting;
    if (setting === paper || setting === own) return own;
    throw new MeritError(
      `method ${method} sets ${key} ${canonicalJson(own)} itself (its ${where}) but the config's retrieval.${key} is ${setting}; ` +
        `drop retrieval.${key} from the config (or set it to METHOD.md's ${paper}) to run the method as registered, or register a method whose memory sets ${key} ${setting}`,
    );
  };
  for (const key of ["max_positive", "max_negative", "min_typed_pool"] as const) {
    const value = settle(key, memory.args[key], `memory "${MERIT_MEMORY}"`);
    if (value !== memory.args[key]) out[key] = value;
  }
  const rankerArgs = memory.args.ranker_args as FactoryArgs;
  const bonus = rankerArgs.type_bonus;
  if (typeof bonus === "number" && bonus > 0) {
    const value = settle("type_bonus", bonus, `ranker "${memory.args.ranker as string}"`);
    if (value !== bonus) out.ranker_args = { ...rankerArgs, type_bonus: value };
  }
  return out;
}

/** The settings of `settings` that differ from METHOD.md, as the description names them (`max_positive 5, type_bonus 0.2`). */
export function changedSettingsText(settings: RetrievalSettings): string {
  return (Object.keys(DEFAULT_RETRIEVAL_SETTINGS) as (keyof RetrievalSettings)[])
    .filter((k) => settings[k] !== DEFAULT_RETRIEVAL_SETTINGS[k])
    .map((k) => `${k} ${settings[k]}`)
    .join(", ");
}
