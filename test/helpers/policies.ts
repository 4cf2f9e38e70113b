// The retrieval policies of the registered memory methods, for the retrieval tests: a memory method is
// one whose `getMethod(name).memory` is not null (MERIT's entry memory, lib/methods/merit-memory.ts);
// its policy is that field, and a config's retrieval settings reach it through `underSettings`.
import { getMethod, methodNames, underSettings, type RetrievalSettings } from "../../lib/methods/index.ts";
import type { RetrievalPolicy } from "../../lib/retrieval/retrieval-policy.ts";

/** The retrieval policy of a registered memory method (a fresh copy); throws for any other method. */
export function policyOf(name: string): RetrievalPolicy {
  const memory = getMethod(name).memory;
  if (memory === null) throw new Error(`method ${name} has no MERIT memory, so no retrieval policy`);
  return memory;
}

/** The policy of `name` under a config's retrieval settings. */
export function configuredPolicy(name: string, settings: RetrievalSettings): RetrievalPolicy {
  const memory = underSettings(getMethod(name), settings).memory;
  if (memory === null) throw new Error(`method ${name} has no MERIT memory, so no retrieval policy`);
  return memory;
}

/** Every registered method (aliases included) with MERIT's memory, in registration order. */
export function memoryMethodNames(): string[] {
  return methodNames().filter((name) => getMethod(name).memory !== null);
}
