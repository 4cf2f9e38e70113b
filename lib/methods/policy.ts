/**
 * Methods, the retrieval policies of the memory methods (METHOD.md §5.5–5.6), read from the one
 * method registry: a memory method is a pool planner, a ranker and a memory
 * writer, and its policy (build-policy.ts) is what the retriever and the episode loop read — they never
 * branch on a method's name. Memoryless methods (zeroshot, iterative, reflexion) have no policy.
 * @module
 */
import { MeritError, nearestName } from "../errors.ts";
import type { RetrievalPolicy } from "../retrieval/retrieval-policy.ts";
import { aliasTarget, getMethod, isMethodName, memoryMethodNames } from "./index.ts";

export type { PoolLayout, RetrievalPolicy, TypeFilterRule } from "../retrieval/retrieval-policy.ts";
export { configurePolicy, DEFAULT_RETRIEVAL_SETTINGS, type RetrievalSettings } from "./build-policy.ts";

/** Every memory method name now registered: methods first, then aliases (registration order). */
export function policyNames(): string[] {
  const names = memoryMethodNames();
  return [...names.filter((n) => aliasTarget(n) === null), ...names.filter((n) => aliasTarget(n) !== null)];
}

/** The paper's memory methods and their aliases (registered at load; `policyNames()` adds plugins'). */
export const POLICY_NAMES: readonly string[] = policyNames();

/** An unknown policy name; suggests the nearest known name and lists them all. */
export class UnknownPolicyError extends MeritError {
  readonly requested: string;
  constructor(requested: string) {
    const known = policyNames();
    const near = nearestName(requested, known);
    super(`unknown memory method ${JSON.stringify(requested)}.${near ? ` Did you mean ${JSON.stringify(near)}?` : ""} Known memory methods: ${known.join(", ")}`);
    this.name = "UnknownPolicyError";
    this.requested = requested;
  }
}

/** true iff `name` is a memory method (canonical or alias). */
export function isPolicyName(name: string): boolean {
  return isMethodName(name) && getMethod(name).memory !== null;
}

/** The policy for a method name (aliases keep their own `name`); throws UnknownPolicyError. */
export function getPolicy(name: string): RetrievalPolicy {
  const memory = isMethodName(name) ? getMethod(name).memory : null;
  if (memory === null) throw new UnknownPolicyError(name);
  return memory;
}
