/**
 * Repair stage, the method registry (METHOD.md §6.2, §5.6; STYLE.md §2.5): every method is ONE entry
 * of this table — whether it repairs, whether it reflects, and which retrieval policy (if any) gives
 * it memory. The episode loop reads these flags and never branches on a method's name; a follow-up
 * study adds a method with `registerMethod` (or a row here) and a policy in lib/retrieval/policies.ts.
 * @module
 */
import { MeritError, nearestName } from "../errors.ts";
import { getPolicy, type RetrievalPolicy } from "../retrieval/policies.ts";

export interface MethodSpec {
  /** Name as used on the command line and in run directories. */
  name: string;
  /** One line for manifests and reports. */
  description: string;
  /** false = no repairs at all (`zeroshot`: final = initial). */
  repairs: boolean;
  /** Reflexion-style reflections after the initial failure and after every failed repair (§6.2). */
  reflects: boolean;
  /** Retrieval and memory-writing policy; null for memoryless methods. */
  memory: RetrievalPolicy | null;
}

const MEMORYLESS = { memory: null } as const;

function withMemory(name: string): MethodSpec {
  const memory = getPolicy(name);
  return { name, description: memory.description, repairs: true, reflects: false, memory };
}

const registry = new Map<string, MethodSpec>();

/** Adds a method (a follow-up study's own method, for example); a name can be registered once. */
export function registerMethod(spec: MethodSpec): MethodSpec {
  if (registry.has(spec.name)) throw new MeritError(`method "${spec.name}" is already registered; choose another name`);
  registry.set(spec.name, spec);
  return spec;
}

registerMethod({ name: "zeroshot", description: "no repair: the initial SQL is final", repairs: false, reflects: false, ...MEMORYLESS });
registerMethod({ name: "iterative", description: "stateless iterative repair from local attempt history and feedback", repairs: true, reflects: false, ...MEMORYLESS });
registerMethod({ name: "reflexion", description: "iterative repair with episode-local verbal reflections", repairs: true, reflects: true, ...MEMORYLESS });
for (const name of [
  "dynamic_rag",
  "merit",
  "merit_full",
  "merit_typerel",
  "positive_only",
  "no_type_filter",
  "no_dense_rerank",
  "no_bm25",
  "random_same_type",
  "cross_database_only",
  "transductive_batch",
]) {
  registerMethod(withMemory(name));
}
// `vanilla` (static few-shot, METHOD.md §6.2) needs four fixed Spider/BIRD *training* examples; the
// training splits are not bundled, so the method is not offered rather than faked.

/** The method of a name; an unknown name suggests the nearest known one. */
export function getMethod(name: string): MethodSpec {
  const spec = registry.get(name);
  if (spec) return spec;
  const known = [...registry.keys()];
  const near = nearestName(name, known);
  throw new MeritError(`unknown method "${name}"${near ? ` (did you mean "${near}"?)` : ""}; known methods: ${known.join(", ")}`);
}

/** Every registered method name, in registration order. */
export function methodNames(): string[] {
  return [...registry.keys()];
}
