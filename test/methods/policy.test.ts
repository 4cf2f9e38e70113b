// Tests lib/methods/policy.ts: the policy table of METHOD.md §5.6 (pools, filters, channels, limits, writes, scope, causality) and unknown-name errors.
import { describe, expect, it } from "vitest";
import { MeritError } from "../../lib/errors.ts";
import { getPolicy, isPolicyName, POLICY_NAMES, UnknownPolicyError } from "../../lib/methods/policy.ts";

describe("policy table", () => {
  it("merit and merit_full are identical apart from the name", () => {
    const { name: a, ...merit } = getPolicy("merit");
    const { name: b, ...full } = getPolicy("merit_full");
    expect([a, b]).toEqual(["merit", "merit_full"]);
    expect(full).toEqual(merit);
    expect(merit).toMatchObject({
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
    });
  });
  it("type-reliability-aware variant (alias confidence_aware_type_filter)", () => {
    expect(getPolicy("confidence_aware_type_filter")).toMatchObject({ canonicalName: "merit_typerel", typeFilter: "high_reliability", typeBonus: 0.1 });
  });
  it("every ablation differs from merit exactly where METHOD.md §5.6 says", () => {
    expect(getPolicy("dynamic_rag")).toMatchObject({ pools: "combined", typeFilter: "never", writes: { writesNegative: false, writesPositive: true } });
    expect(getPolicy("positive_only")).toMatchObject({ pools: "positive_only", typeFilter: "always", writes: { writesNegative: false } });
    expect(getPolicy("no_type_filter")).toMatchObject({ typeFilter: "never", typeBonus: 0 });
    expect(getPolicy("no_dense_rerank").channels).toEqual({ dense: false, bm25: true });
    expect(getPolicy("no_bm25").channels).toEqual({ dense: true, bm25: false });
    expect(getPolicy("random_same_type")).toMatchObject({ scorer: "random", typeFilter: "always" });
    expect(getPolicy("cross_database_only")).toMatchObject({ excludeSameDatabase: true, writes: { scope: "cross_database" } });
    expect(getPolicy("transductive_batch")).toMatchObject({ causal: false, transductivePrepass: true });
    for (const name of POLICY_NAMES) if (name !== "transductive_batch") expect(getPolicy(name).causal).toBe(true);
  });
  it("returned policies are copies (mutating one does not change the table)", () => {
    getPolicy("merit").limits.positive = 99;
    expect(getPolicy("merit").limits.positive).toBe(3);
  });
});

describe("unknown names", () => {
  it("throw a MeritError with the nearest match and the known list", () => {
    expect(isPolicyName("merit_ful")).toBe(false);
    let error: unknown;
    try {
      getPolicy("merit_ful");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UnknownPolicyError);
    expect(error).toBeInstanceOf(MeritError);
    expect((error as Error).message).toMatch(/Did you mean "merit_full"\?/);
    expect((error as Error).message).toContain("dynamic_rag");
    expect((error as Error).message).toContain("transductive_batch");
  });
  it("memoryless methods are not retrieval policies", () => {
    expect(() => getPolicy("iterative")).toThrow(/Known memory methods: merit, /);
  });
});
