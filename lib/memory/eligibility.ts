/**
 * Memory stage (METHOD.md §4.7): the causal eligibility (legality) rules applied to every candidate
 * before any scoring, as one table. Each rule is written once — its test over candidate columns and
 * its explanation — and yields both the per-candidate explanation (`ineligibilityReason`, read by the
 * retriever's re-check and the causal audit) and the fast pool scan over the memory's typed-array
 * columns (lib/retrieval/memory-columns.ts), which runs the same tests over every row. Pure.
 * @module
 */
import type { ApplicabilityScope, MemoryEntry, Polarity } from "./entry.ts";

/** The retrieving episode and the pool being filled. */
export interface EligibilityContext {
  /** Stream position of the current episode (0-based). */
  streamPosition: number;
  queryId: string;
  dbId: string;
  /** Polarity of the pool; null for a combined pool (dynamic_rag: no polarity check). */
  polarity: Polarity | null;
  /** false only for the non-causal control `transductive_batch` (rules 1–2 off). */
  causal: boolean;
  /** `cross_database_only`: reject entries from the current database (rule 5). */
  excludeSameDatabase: boolean;
  /** Optional allow list of source db ids (rule 4; unused by the runner). */
  allowDbIds?: ReadonlySet<string>;
  /** Optional deny list of source db ids (rule 4; unused by the runner). */
  denyDbIds?: ReadonlySet<string>;
}

/** Polarity as a column code; 0 = none (a combined pool, or a value outside the vocabulary). */
export const POLARITY_CODE: Readonly<Record<Polarity, number>> = { positive: 1, negative: 2 };
/** Applicability scope as a column code (an unknown value reads as global, 0). */
export const SCOPE_CODE: Readonly<Record<ApplicabilityScope, number>> = { global: 0, same_database: 1, cross_database: 2 };

const SAME_DATABASE = SCOPE_CODE.same_database;
const CROSS_DATABASE = SCOPE_CODE.cross_database;

/**
 * The candidate fields the rules read, one typed array per field, indexed by row. Query and database
 * ids are strings interned to integers (they are only compared for equality); the memory's column
 * copy is one, a single entry is a one-row copy. One array type per field keeps the scan loops
 * monomorphic.
 */
export interface CandidateColumns {
  position: Float64Array;
  query: Int32Array;
  db: Int32Array;
  /** POLARITY_CODE values. */
  polarity: Uint8Array;
  /** SCOPE_CODE values. */
  scope: Uint8Array;
}

/** An EligibilityContext in the candidates' form (ids interned the same way, polarity as a code). */
export interface EligibilityProbe {
  causal: boolean;
  position: number;
  query: number;
  db: number;
  /** POLARITY_CODE of the pool, 0 for a combined pool, −1 for a value outside the vocabulary. */
  polarity: number;
  excludeSameDatabase: boolean;
  allow: ReadonlySet<number> | undefined;
  deny: ReadonlySet<number> | undefined;
}

/** The probe of `ctx`, its ids interned by `id` (the columns' interning; −1 for a string no row holds). */
export function eligibilityProbe(ctx: EligibilityContext, id: (s: string) => number): EligibilityProbe {
  const set = (ids: ReadonlySet<string> | undefined) => (ids === undefined ? undefined : new Set([...ids].map(id)));
  return {
    causal: ctx.causal,
    position: ctx.streamPosition,
    query: id(ctx.queryId),
    db: id(ctx.dbId),
    polarity: ctx.polarity === null ? 0 : (POLARITY_CODE[ctx.polarity] ?? -1),
    excludeSameDatabase: ctx.excludeSameDatabase,
    allow: set(ctx.allowDbIds),
    deny: set(ctx.denyDbIds),
  };
}

/**
 * Rule 1 of METHOD.md §4.7, the causal boundary of every memory (MERIT's entries here, a note memory's
 * notes in lib/methods/hooks.ts `eligibleNotes`): what was written at `source`, a stream position, is
 * visible at `current` only when it was written strictly before it.
 */
export function writtenBefore(source: number, current: number): boolean {
  return source < current;
}

/** Rule 2 of METHOD.md §4.7, for every memory: nothing the current query wrote (ids, or ids interned alike). */
export function fromOtherQuery<T extends string | number>(source: T, current: T): boolean {
  return source !== current;
}

/** One rule of METHOD.md §4.7. */
export interface EligibilityRule {
  /** A short name, unique in the table. */
  readonly name: string;
  /** Rule number in METHOD.md §4.7. */
  readonly rule: number;
  /** false when the rule rejects nothing under `probe` (a scan skips it). */
  applies(probe: EligibilityProbe): boolean;
  /**
   * Compacts `rows[0..n)` in place to the rows the rule allows, keeping their order; returns how
   * many are kept. Only called when `applies(probe)`.
   */
  keep(columns: CandidateColumns, probe: EligibilityProbe, rows: Int32Array, n: number): number;
  /** Why the rule rejects `entry` (one line, with the values that decided it). */
  reason(entry: MemoryEntry, ctx: EligibilityContext): string;
}

/** The rules in METHOD.md §4.7's order, which is the order explanations are looked for in. */
export const ELIGIBILITY_RULES: readonly EligibilityRule[] = [
  {
    name: "before-current",
    rule: 1,
    applies: (p) => p.causal,
    keep(c, p, rows, n) {
      const { position } = c;
      const before = p.position;
      let m = 0;
      for (let k = 0; k < n; k++) {
        const row = rows[k];
        if (writtenBefore(position[row], before)) rows[m++] = row;
      }
      return m;
    },
    reason: (e, ctx) => `source_stream_position ${e.source_stream_position} is not before the current position ${ctx.streamPosition}`,
  },
  {
    name: "not-current-query",
    rule: 2,
    applies: (p) => p.causal,
    keep(c, p, rows, n) {
      const { query } = c;
      const current = p.query;
      let m = 0;
      for (let k = 0; k < n; k++) {
        const row = rows[k];
        if (fromOtherQuery(query[row], current)) rows[m++] = row;
      }
      return m;
    },
    reason: (_e, ctx) => `entry comes from the current query ${ctx.queryId}`,
  },
  {
    name: "polarity",
    rule: 3,
    applies: (p) => p.polarity !== 0,
    keep(c, p, rows, n) {
      const { polarity } = c;
      const pool = p.polarity;
      let m = 0;
      for (let k = 0; k < n; k++) {
        const row = rows[k];
        if (polarity[row] === pool) rows[m++] = row;
      }
      return m;
    },
    reason: (e, ctx) => `polarity ${e.polarity} is not the pool's ${ctx.polarity}`,
  },
  {
    name: "database-lists",
    rule: 4,
    applies: (p) => p.allow !== undefined || p.deny !== undefined,
    keep(c, p, rows, n) {
      const { db } = c;
      const { allow, deny } = p;
      let m = 0;
      for (let k = 0; k < n; k++) {
        const row = rows[k];
        if ((allow === undefined || allow.has(db[row])) && (deny === undefined || !deny.has(db[row]))) rows[m++] = row;
      }
      return m;
    },
    reason: (e, ctx) =>
      ctx.allowDbIds !== undefined && !ctx.allowDbIds.has(e.source_db_id) ? `database ${e.source_db_id} is not on the allow list` : `database ${e.source_db_id} is on the deny list`,
  },
  {
    name: "cross-database-only",
    rule: 5,
    applies: (p) => p.excludeSameDatabase,
    keep(c, p, rows, n) {
      const { db } = c;
      const current = p.db;
      let m = 0;
      for (let k = 0; k < n; k++) {
        const row = rows[k];
        if (db[row] !== current) rows[m++] = row;
      }
      return m;
    },
    reason: (_e, ctx) => `entry comes from the current database ${ctx.dbId} (cross_database_only)`,
  },
  {
    name: "scope",
    rule: 6,
    applies: () => true,
    keep(c, p, rows, n) {
      const { scope, db } = c;
      const current = p.db;
      let m = 0;
      for (let k = 0; k < n; k++) {
        const row = rows[k];
        const sameDb = db[row] === current;
        if (!((scope[row] === SAME_DATABASE && !sameDb) || (scope[row] === CROSS_DATABASE && sameDb))) rows[m++] = row;
      }
      return m;
    },
    reason: (e) => (e.applicability_scope === "same_database" ? "same_database scope but a different database" : "cross_database scope but the same database"),
  },
];

/** The rules of `rules` that can reject something under `probe`, in order. */
export function activeRules(probe: EligibilityProbe, rules: readonly EligibilityRule[] = ELIGIBILITY_RULES): EligibilityRule[] {
  return rules.filter((r) => r.applies(probe));
}

/** One entry as a one-row CandidateColumns and `ctx` as its probe, both interned by one local table. */
function entryAsColumns(entry: MemoryEntry, ctx: EligibilityContext): { columns: CandidateColumns; probe: EligibilityProbe } {
  const ids = new Map<string, number>();
  const id = (s: string) => {
    let n = ids.get(s);
    if (n === undefined) ids.set(s, (n = ids.size));
    return n;
  };
  const columns: CandidateColumns = {
    position: Float64Array.of(entry.source_stream_position),
    query: Int32Array.of(id(entry.source_query_id)),
    db: Int32Array.of(id(entry.source_db_id)),
    polarity: Uint8Array.of(POLARITY_CODE[entry.polarity] ?? 0),
    scope: Uint8Array.of(SCOPE_CODE[entry.applicability_scope] ?? 0),
  };
  return { columns, probe: eligibilityProbe(ctx, id) };
}

/** The first rule (in METHOD.md §4.7's order) that rejects `entry` under `ctx`, or null. */
function rejectingRule(entry: MemoryEntry, ctx: EligibilityContext): EligibilityRule | null {
  const { columns, probe } = entryAsColumns(entry, ctx);
  const row = new Int32Array(1);
  for (const rule of ELIGIBILITY_RULES) {
    if (rule.applies(probe) && rule.keep(columns, probe, row, 1) === 0) return rule;
  }
  return null;
}

/** Why an entry is not eligible, or null when it is (the first failing rule in METHOD.md §4.7's order). */
export function ineligibilityReason(entry: MemoryEntry, ctx: EligibilityContext): string | null {
  return rejectingRule(entry, ctx)?.reason(entry, ctx) ?? null;
}

/**
 * true iff `entry` may be retrieved by the episode described in `ctx` (METHOD.md §4.7 rules 1–6).
 * The retriever does not call it per row: its pool scan runs the same rules over memory columns.
 */
export function isEligible(entry: MemoryEntry, ctx: EligibilityContext): boolean {
  return rejectingRule(entry, ctx) === null;
}
