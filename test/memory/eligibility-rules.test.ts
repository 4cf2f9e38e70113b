// Tests the eligibility rule table of lib/memory/eligibility.ts (METHOD.md §4.7): one row per rule,
// in order; the explanations it yields equal the rules written out by hand (below, as the kit had
// them before the table), on seeded random entries and contexts, edge values included; and the
// column scan honours rule 4, which the retriever never uses.
import { describe, expect, it } from "vitest";
import type { MemoryEntry } from "../../lib/memory/entry.ts";
import { activeRules, ELIGIBILITY_RULES, eligibilityProbe, ineligibilityReason, isEligible, type EligibilityContext } from "../../lib/memory/eligibility.ts";
import { PyRandom } from "../../lib/random.ts";
import { MemoryColumns } from "../../lib/retrieval/memory-columns.ts";
import { makeEntry } from "./fixtures.ts";

/** METHOD.md §4.7 written out directly, one `if` per rule (the reference the table must match). */
function reasonWrittenOut(entry: MemoryEntry, ctx: EligibilityContext): string | null {
  if (ctx.causal && !(entry.source_stream_position < ctx.streamPosition))
    return `source_stream_position ${entry.source_stream_position} is not before the current position ${ctx.streamPosition}`;
  if (ctx.causal && entry.source_query_id === ctx.queryId) return `entry comes from the current query ${ctx.queryId}`;
  if (ctx.polarity !== null && entry.polarity !== ctx.polarity) return `polarity ${entry.polarity} is not the pool's ${ctx.polarity}`;
  if (ctx.allowDbIds !== undefined && !ctx.allowDbIds.has(entry.source_db_id)) return `database ${entry.source_db_id} is not on the allow list`;
  if (ctx.denyDbIds !== undefined && ctx.denyDbIds.has(entry.source_db_id)) return `database ${entry.source_db_id} is on the deny list`;
  if (ctx.excludeSameDatabase && entry.source_db_id === ctx.dbId) return `entry comes from the current database ${ctx.dbId} (cross_database_only)`;
  if (entry.applicability_scope === "same_database" && entry.source_db_id !== ctx.dbId) return "same_database scope but a different database";
  if (entry.applicability_scope === "cross_database" && entry.source_db_id === ctx.dbId) return "cross_database scope but the same database";
  return null;
}

const DBS = ["a", "b", "c"];
const SCOPES = ["global", "cross_database", "same_database"] as const;

function randomCase(rng: PyRandom): { entry: MemoryEntry; ctx: EligibilityContext } {
  const position = [0, 1, 5, 9, 10, 11, 19, Number.NaN, 1e15][rng.randbelow(9)];
  const entry = makeEntry({
    position,
    queryId: `q${rng.randbelow(5)}`,
    dbId: DBS[rng.randbelow(3)],
    polarity: rng.random() < 0.5 ? "positive" : "negative",
    scope: SCOPES[rng.randbelow(3)],
    episode: `ep${rng.randbelow(1_000_000)}`, // given, so a NaN position is not hashed
  });
  const ctx: EligibilityContext = {
    streamPosition: [0, 5, 10, 11, 20][rng.randbelow(5)],
    queryId: `q${rng.randbelow(6)}`,
    dbId: DBS[rng.randbelow(3)] + (rng.random() < 0.1 ? "-unseen" : ""),
    polarity: ([null, "positive", "negative"] as const)[rng.randbelow(3)],
    causal: rng.random() < 0.8,
    excludeSameDatabase: rng.random() < 0.3,
    allowDbIds: rng.random() < 0.2 ? new Set(DBS.filter(() => rng.random() < 0.5)) : undefined,
    denyDbIds: rng.random() < 0.2 ? new Set(DBS.filter(() => rng.random() < 0.5)) : undefined,
  };
  return { entry, ctx };
}

describe("ELIGIBILITY_RULES", () => {
  it("has one row per METHOD.md §4.7 rule, in order, with unique names", () => {
    expect(ELIGIBILITY_RULES.map((r) => r.rule)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(new Set(ELIGIBILITY_RULES.map((r) => r.name)).size).toBe(ELIGIBILITY_RULES.length);
  });

  it("yields the explanations of the rules written out, byte for byte (2,000 seeded cases)", () => {
    const rng = new PyRandom(47);
    let rejected = 0;
    for (let i = 0; i < 2000; i++) {
      const { entry, ctx } = randomCase(rng);
      const expected = reasonWrittenOut(entry, ctx);
      expect(ineligibilityReason(entry, ctx)).toBe(expected);
      expect(isEligible(entry, ctx)).toBe(expected === null);
      if (expected !== null) rejected++;
    }
    expect(rejected).toBeGreaterThan(500); // both outcomes are exercised
    expect(rejected).toBeLessThan(1900);
  });

  it("skips the rules that cannot reject under the context", () => {
    const probe = eligibilityProbe({ streamPosition: 3, queryId: "q", dbId: "d", polarity: null, causal: false, excludeSameDatabase: false }, () => 0);
    expect(activeRules(probe).map((r) => r.name)).toEqual(["scope"]);
    const all = eligibilityProbe({ streamPosition: 3, queryId: "q", dbId: "d", polarity: "negative", causal: true, excludeSameDatabase: true, allowDbIds: new Set(["d"]), denyDbIds: new Set() }, () => 0);
    expect(activeRules(all).map((r) => r.rule)).toEqual([1, 2, 3, 4, 5, 6]);
  });
});

describe("the column scan runs the same table", () => {
  it("equals isEligible with allow and deny lists too (rule 4)", () => {
    const rng = new PyRandom(48);
    const entries = Array.from({ length: 200 }, () => randomCase(rng).entry).filter((e) => !Number.isNaN(e.source_stream_position));
    const columns = new MemoryColumns();
    columns.sync(entries);
    for (let trial = 0; trial < 100; trial++) {
      const { ctx } = randomCase(rng);
      const legal = entries.flatMap((e, row) => (isEligible(e, ctx) ? [row] : []));
      expect(columns.rows(ctx, "Schema Linking", false)).toEqual(legal);
    }
  });
});
