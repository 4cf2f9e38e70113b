// Tests the retrieval policies of the memory methods (METHOD.md §5.6: pools, filters, channels,
// limits, writes, scope, causality), as `getMethod(name).memory` gives them (lib/methods/paper.ts,
// merit-memory.ts), which methods are memory methods, and unknown-name errors.
import { describe, expect, it } from "vitest";
import { MeritError } from "../../lib/errors.ts";
import { getMethod, isMethodName, methodNames } from "../../lib/methods/index.ts";
import type { RetrievalPolicy } from "../../lib/retrieval/retrieval-policy.ts";

const MEMORY_METHODS = ["merit", "merit_full", "merit_typerel", "confidence_aware_type_filter", "dynamic_rag", "positive_only", "no_type_filter", "no_dense_rerank", "no_bm25", "random_same_type", "cross_database_only", "transductive_batch"];

function policy(name: string): RetrievalPolicy {
  const memory = getMethod(name).memory;
  if (memory === null) throw new Error(`${name} is not a memory method`);
  return memory;
}

describe("policy table", () => {
  it("merit and merit_full are identical apart from the name", () => {
    const { name: a, ...merit } = policy("merit");
    const { name: b, ...full } = policy("merit_full");
    expect([a, b]).toEqual(["merit", "merit_full"]);
    expect(full).toEqual(merit);
    expect(merit).toMatchObject({
      canonicalName: "merit",
      pools: "by_polarity",
      typeFilter: "always",
      minTypedPool: 3,
      scorer: "hybrid",
      channels: { dense: true, bm25: true },
      typeBonus: 0,
      limits: { positive: 3, negative: 1, combined: 4 },
      writes: { updatesGlobalMemory: true, writesPositive: true, writesNegative: true, scope: "global" },
      excludeSameDatabase: false,
      causal: true,
      transductivePrepass: false,
    });
  });
  it("type-reliability-aware variant (alias confidence_aware_type_filter)", () => {
    expect(policy("confidence_aware_type_filter")).toMatchObject({ name: "confidence_aware_type_filter", canonicalName: "merit_typerel", typeFilter: "high_reliability", typeBonus: 0.1 });
  });
  it("every ablation differs from merit exactly where METHOD.md §5.6 says", () => {
    expect(policy("dynamic_rag")).toMatchObject({ pools: "combined", typeFilter: "never", writes: { writesNegative: false, writesPositive: true } });
    expect(policy("positive_only")).toMatchObject({ pools: "positive_only", typeFilter: "always", writes: { writesNegative: false } });
    expect(policy("no_type_filter")).toMatchObject({ typeFilter: "never", typeBonus: 0 });
    expect(policy("no_dense_rerank").channels).toEqual({ dense: false, bm25: true });
    expect(policy("no_bm25").channels).toEqual({ dense: true, bm25: false });
    expect(policy("random_same_type")).toMatchObject({ scorer: "random", typeFilter: "always" });
    expect(policy("cross_database_only")).toMatchObject({ excludeSameDatabase: true, writes: { scope: "cross_database" } });
    expect(policy("transductive_batch")).toMatchObject({ causal: false, transductivePrepass: true });
    for (const name of MEMORY_METHODS) if (name !== "transductive_batch") expect(policy(name).causal, name).toBe(true);
  });
  it("returned policies are copies (mutating one does not change the table)", () => {
    policy("merit").limits.positive = 99;
    policy("merit").writes.writesNegative = false;
    expect(policy("merit").limits.positive).toBe(3);
    expect(policy("merit").writes.writesNegative).toBe(true);
  });
});

describe("memory methods", () => {
  it("are the paper's methods with MERIT's entry memory; memoryless methods and the peers' note memories have no policy", () => {
    const paper = methodNames().filter((n) => MEMORY_METHODS.includes(n) || ["zeroshot", "iterative", "reflexion"].includes(n));
    expect(paper.filter((n) => getMethod(n).memory !== null)).toEqual(MEMORY_METHODS);
    for (const name of ["zeroshot", "iterative", "reflexion"]) expect(getMethod(name).memory, name).toBeNull();
    expect(getMethod("reasoning_bank").memory).toBeNull();
    expect(getMethod("reasoning_bank").hooks.memory).toBeDefined();
  });
});

describe("unknown names", () => {
  it("throw a MeritError with the nearest match and the known list", () => {
    expect(isMethodName("merit_ful")).toBe(false);
    let error: unknown;
    try {
      getMethod("merit_ful");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(MeritError);
    expect((error as Error).message).toMatch(/did you mean "merit_full"\?/);
    expect((error as Error).message).toContain("dynamic_rag");
    expect((error as Error).message).toContain("transductive_batch");
  });
});
