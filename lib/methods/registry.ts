/**
 * Methods, the ONE method registry (DESIGN.md §1, METHOD.md §6.2, §5.6): every method of the paper
 * (lib/methods/paper.ts) and every method a follow-up study registers (a `--plugin` file,
 * lib/methods/plugin-use.ts) is an entry here; `merit run|grid|methods`, the report, the notebooks and
 * the docs' method table read it. An alias (`merit_full` for `merit`) is its own name with its
 * target's hooks; every other method is its own identity (`canonicalName` = its name).
 * @module
 */
import { MeritError, nearestName } from "../errors.ts";
import { Registry } from "../registry.ts";
import { isKitHook } from "./hooks.ts";
import { buildMethod, hookCallBound, noteMemoryOf, type MethodDefinition, type MethodSpec } from "./method.ts";

type MethodEntry = { definition: MethodDefinition; aliasOf: null } | { definition: null; aliasOf: string };

const METHODS = new Registry<MethodEntry>("method");

/** Adds a method; its hooks are checked now, so a bad hook or arg fails at registration. A name can be registered once. */
export function registerMethod(definition: MethodDefinition): MethodSpec {
  const spec = buildMethod(definition);
  METHODS.register(definition.name, { definition, aliasOf: null });
  return spec;
}

/** Adds `alias` as another name of the registered method `target` (METHOD.md §5.6: merit_full = merit). */
export function registerAlias(alias: string, target: string): void {
  const entry = METHODS.get(target);
  if (entry.aliasOf !== null) throw new MeritError(`method "${target}" is itself an alias of "${entry.aliasOf}"; alias "${alias}" to "${entry.aliasOf}"`);
  METHODS.register(alias, { definition: null, aliasOf: target });
}

/** true iff `name` is a registered method (or alias). */
export function isMethodName(name: string): boolean {
  return METHODS.has(name);
}

/** The registered definition of a name (an alias's target definition). */
export function methodDefinition(name: string): MethodDefinition {
  const entry = lookup(name);
  return entry.aliasOf === null ? entry.definition : (lookup(entry.aliasOf).definition as MethodDefinition);
}

/** The target of an alias; null for a method. */
export function aliasTarget(name: string): string | null {
  return lookup(name).aliasOf;
}

/** The method of a name, built afresh (callers may change it); an unknown name suggests the nearest one. */
export function getMethod(name: string): MethodSpec {
  return buildMethod(methodDefinition(name), name);
}

/** Every registered method name (aliases after their targets' registration), in registration order. */
export function methodNames(): string[] {
  return METHODS.names();
}

function lookup(name: string): MethodEntry {
  if (METHODS.has(name)) return METHODS.get(name);
  const known = METHODS.names();
  const near = nearestName(name, known);
  throw new MeritError(`unknown method "${name}"${near ? ` (did you mean "${near}"?)` : ""}; known methods: ${known.join(", ")}`);
}

/**
 * The equal-budget control's K (METHOD.md §13, "Budget-matched control"): `k` repair steps plus the
 * most extra LLM calls `method` declares for one episode (`hookCallBound`: the sum of `most` over its
 * hooks' declared kinds, whatever the episode's outcome). Iterative repair run with this many steps
 * may spend, on every initially failed query, as many calls as the memory method may spend on it, so
 * "memory helps" is separated from "more calls help". A method with no hook calls gets `k`.
 * `method`: a registered name (its aliases too) or a method spec.
 */
export function budgetMatchedSteps(method: string | Pick<MethodSpec, "hooks">, k: number): number {
  if (!Number.isInteger(k) || k < 0) throw new MeritError(`budgetMatchedSteps: K must be a non-negative integer, got ${k}`);
  return k + hookCallBound(typeof method === "string" ? getMethod(method) : method, k);
}

/** The source a registered method declares (`citation`) and whether its hooks read the oracle's verdict (`groundTruth`, from its declared sight); null for either when not declared or without hooks, both for an unregistered name (a plugin's not loaded). */
export function methodSource(name: string): { citation: string | null; groundTruth: boolean | null } {
  if (!isMethodName(name)) return { citation: null, groundTruth: null };
  const method = getMethod(name);
  // Whether its hooks read the oracle's verdict: the declared sight that builds their views
  // (lib/methods/sight.ts); a method without hooks (zeroshot, iterative) has no hook views, nothing to declare.
  return { citation: methodDefinition(name).citation ?? null, groundTruth: hasPluginHooks(method) ? method.sight === "oracle" : null };
}

/** The equal-budget control's K for a family of methods: the largest budgetMatchedSteps among them (`merit grid --max-repair-steps budget:…`, the peers demo). */
export function familyBudgetSteps(methods: readonly string[], k: number): number {
  if (methods.length === 0) throw new MeritError("familyBudgetSteps: name at least one method");
  return Math.max(...methods.map((m) => budgetMatchedSteps(m, k)));
}

/** Whether a method has hooks of its own (a note memory, a classifier, a propose hook, a step that is not the kit's `reflect()`): the paper's methods have only the kit's. */
export function hasPluginHooks(method: Pick<MethodSpec, "hooks">): boolean {
  const { classify, step, propose } = method.hooks;
  return noteMemoryOf(method) !== undefined || classify !== undefined || propose !== undefined || (step !== undefined && !isKitHook(step));
}
