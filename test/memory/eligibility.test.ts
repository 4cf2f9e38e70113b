// Tests lib/memory/eligibility.ts: the causal eligibility rules of METHOD.md §4.7, one case per rule.
import { describe, expect, it } from "vitest";
import { PyRandom } from "../../lib/random.ts";
import { ineligibilityReason, isEligible, type EligibilityContext } from "../../lib/memory/eligibility.ts";
import { makeEntry } from "./fixtures.ts";

const ctx: EligibilityContext = { streamPosition: 10, queryId: "q10", dbId: "db_cur", polarity: "positive", causal: true, excludeSameDatabase: false };

describe("isEligible", () => {
  it("rule 1: only strictly earlier stream positions", () => {
    expect(isEligible(makeEntry({ position: 9, queryId: "q9" }), ctx)).toBe(true);
    expect(isEligible(makeEntry({ position: 10, queryId: "q9" }), ctx)).toBe(false);
    expect(isEligible(makeEntry({ position: 11, queryId: "q9" }), ctx)).toBe(false);
  });
  it("rule 2: never the current query, even from an earlier position", () => {
    expect(ineligibilityReason(makeEntry({ position: 3, queryId: "q10" }), ctx)).toMatch(/current query/);
  });
  it("rule 3: polarity must match the pool; a combined pool (null) takes both", () => {
    const negative = makeEntry({ polarity: "negative", position: 1, queryId: "q1" });
    expect(isEligible(negative, ctx)).toBe(false);
    expect(isEligible(negative, { ...ctx, polarity: "negative" })).toBe(true);
    expect(isEligible(negative, { ...ctx, polarity: null })).toBe(true);
  });
  it("rule 4: allow and deny lists", () => {
    const e = makeEntry({ position: 1, queryId: "q1", dbId: "a" });
    expect(isEligible(e, { ...ctx, allowDbIds: new Set(["b"]) })).toBe(false);
    expect(isEligible(e, { ...ctx, allowDbIds: new Set(["a"]) })).toBe(true);
    expect(isEligible(e, { ...ctx, denyDbIds: new Set(["a"]) })).toBe(false);
  });
  it("rule 5: cross_database_only rejects the current database", () => {
    const same = makeEntry({ position: 1, queryId: "q1", dbId: "db_cur" });
    expect(isEligible(same, ctx)).toBe(true);
    expect(isEligible(same, { ...ctx, excludeSameDatabase: true })).toBe(false);
    expect(isEligible(makeEntry({ position: 1, queryId: "q1", dbId: "other" }), { ...ctx, excludeSameDatabase: true })).toBe(true);
  });
  it("rule 6: scopes", () => {
    expect(isEligible(makeEntry({ position: 1, queryId: "q1", dbId: "db_cur", scope: "cross_database" }), ctx)).toBe(false);
    expect(isEligible(makeEntry({ position: 1, queryId: "q1", dbId: "other", scope: "cross_database" }), ctx)).toBe(true);
    expect(isEligible(makeEntry({ position: 1, queryId: "q1", dbId: "other", scope: "same_database" }), ctx)).toBe(false);
    expect(isEligible(makeEntry({ position: 1, queryId: "q1", dbId: "db_cur", scope: "same_database" }), ctx)).toBe(true);
  });
  it("non-causal (transductive_batch) drops rules 1 and 2 only", () => {
    const nc = { ...ctx, causal: false };
    expect(isEligible(makeEntry({ position: 50, queryId: "q10" }), nc)).toBe(true);
    expect(isEligible(makeEntry({ position: 50, queryId: "q10", polarity: "negative" }), nc)).toBe(false);
  });
});

describe("isEligible agrees with ineligibilityReason", () => {
  it("on random entries and contexts (seeded)", () => {
    const rng = new PyRandom(0);
    const dbs = ["a", "b", "c"];
    for (let i = 0; i < 800; i++) {
      const entry = makeEntry({
        position: rng.randbelow(20),
        queryId: `q${rng.randbelow(5)}`,
        dbId: dbs[rng.randbelow(3)],
        polarity: rng.random() < 0.5 ? "positive" : "negative",
        scope: (["global", "cross_database", "same_database"] as const)[rng.randbelow(3)],
      });
      const c: EligibilityContext = {
        streamPosition: rng.randbelow(20),
        queryId: `q${rng.randbelow(5)}`,
        dbId: dbs[rng.randbelow(3)],
        polarity: ([null, "positive", "negative"] as const)[rng.randbelow(3)],
        causal: rng.random() < 0.8,
        excludeSameDatabase: rng.random() < 0.3,
        allowDbIds: rng.random() < 0.2 ? new Set([dbs[rng.randbelow(3)]]) : undefined,
        denyDbIds: rng.random() < 0.2 ? new Set([dbs[rng.randbelow(3)]]) : undefined,
      };
      expect(isEligible(entry, c)).toBe(ineligibilityReason(entry, c) === null);
    }
  });
});
