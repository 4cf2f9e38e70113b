/**
 * Methods, the paper's methods as hook sets (METHOD.md §5.6, §6.2; issue 36 §1): three memoryless
 * methods (zeroshot, iterative, and reflexion — iterative with the `reflect()` step), MERIT and its
 * type-reliability-aware variant, Dynamic RAG, the six ablations and the non-causal control. Every
 * memory method is MERIT's memory factory with the args that differ from MERIT's
 * (lib/methods/merit-memory.ts), built by `meritMethod`, so an ablation is MERIT with overrides, and a
 * study arm or a config's retrieval settings override the same args.
 * @module
 */
import { MeritError } from "../errors.ts";
import { TYPE_BONUS } from "../retrieval/rank.ts";
import type { MethodDefinition } from "./method.ts";
import { meritMemory } from "./merit-memory.ts";
import { reflect } from "./reflect.ts";
import { registerAlias, registerMethod } from "./registry.ts";

/**
 * A method whose memory is MERIT's with `args` laid over MERIT's values; `withArgs` builds it again
 * with more args changed (an unknown or ill-typed arg fails with one line).
 */
export function meritMethod(name: string, description: string, args: Readonly<Record<string, unknown>> = {}, rest: Partial<MethodDefinition> = {}): MethodDefinition {
  let memory: ReturnType<typeof meritMemory>;
  try {
    memory = meritMemory(args);
  } catch (error) {
    // one line naming the method: `method "NAME": memory "merit_memory" has no arg …`
    if (error instanceof MeritError) throw new MeritError(`method "${name}": ${error.message}`);
    throw error;
  }
  return {
    ...rest,
    name,
    description,
    hooks: { ...(rest.hooks ?? {}), memory },
    withArgs: (overrides) => meritMethod(name, description, { ...memory.args, ...overrides }, rest),
  };
}

registerMethod({ name: "zeroshot", description: "no repair: the initial SQL is final", repairs: false });
registerMethod({ name: "iterative", description: "stateless iterative repair from local attempt history and feedback" });
registerMethod({ name: "reflexion", description: "iterative repair with episode-local verbal reflections", hooks: { step: reflect() } });
registerMethod(meritMethod("merit", "dual-polarity memory, hard type filter with fallback at 3, 0.75 dense + 0.25 BM25"));
registerAlias("merit_full", "merit");
registerMethod(meritMethod("merit_typerel", "type-reliability-aware: hard filter only for Syntax/Schema Linking/Execution, else +0.10 same-type bonus", { type_filter: "high_reliability", ranker_args: { type_bonus: TYPE_BONUS } }));
registerAlias("confidence_aware_type_filter", "merit_typerel");
registerMethod(meritMethod("dynamic_rag", "one untyped pool of all legal entries, top 4, stores positives only", { layout: "combined", type_filter: "never", negative: false }));
registerMethod(meritMethod("positive_only", "MERIT without negatives (positive pool only, stores positives only)", { layout: "positive_only", negative: false }));
registerMethod(meritMethod("no_type_filter", "MERIT without the type filter (legal pools, no bonus)", { type_filter: "never" }));
registerMethod(meritMethod("no_dense_rerank", "MERIT with BM25 only (weight 1.0)", { ranker_args: { dense_weight: 0 } }));
registerMethod(meritMethod("no_bm25", "MERIT with dense only (weight 1.0)", { ranker_args: { bm25_weight: 0 } }));
registerMethod(meritMethod("random_same_type", "MERIT pools, seeded shuffle instead of scoring (seed from random_seed|query|iteration|polarity)", { ranker: "random" }));
registerMethod(meritMethod("cross_database_only", "MERIT excluding entries from the current database; entries stored with scope cross_database", { exclude_same_database: true, scope: "cross_database" }));
registerMethod(meritMethod("transductive_batch", "NON-CAUSAL control: MERIT without causality checks, negatives pre-seeded for every initial failure", { causal: false, transductive_prepass: true }));
// `vanilla` (static few-shot, METHOD.md §6.2) needs four fixed Spider/BIRD *training* examples; the
// training splits are not bundled, so the method is not offered rather than faked.
