/**
 * Retrieval stage (METHOD.md §4.7, §5.2, §5.5): a column copy of the entry fields that the pool
 * scan reads on every repair step, plus the memory's BM25 documents. Strings are interned to small
 * integers, so eligibility over 100,000 rows is a loop over typed arrays instead of 200,000 calls
 * reading objects (bench/retrieval.ts prints both). The scan runs the rules of the one eligibility
 * table (lib/memory/eligibility.ts, the same code `ineligibilityReason` runs on one entry), each
 * as one tight pass compacting a scratch list of rows; the retriever still checks every returned
 * entry with `ineligibilityReason`, and a test compares the pools with `isEligible`. Both polarity
 * pools of a retrieval share the passes of every rule but polarity; only the list the scorer needs
 * is copied out.
 *
 * The columns follow the memory by object identity: a row whose entry object changed since the
 * last call (an append, or a merge, which makes a new object) is re-read, and its BM25 document is
 * tokenised then (once per row version, like its embedding, rather than on the hot path).
 * @module
 */
import type { MemoryEntry } from "../memory/entry.ts";
import { bm25Document } from "../memory/entry-text.ts";
import {
  activeRules,
  ELIGIBILITY_RULES,
  eligibilityProbe,
  POLARITY_CODE,
  SCOPE_CODE,
  type CandidateColumns,
  type EligibilityContext,
  type EligibilityProbe,
} from "../memory/eligibility.ts";
import { Bm25Corpus, bm25Tokens, type Bm25Options } from "./bm25.ts";

/** The polarity rule, which the two-pool scan applies once per pool after the others. */
const POLARITY_RULE = ELIGIBILITY_RULES.find((r) => r.name === "polarity")!;

/** The retrieving episode and pool (the retriever never sets rule 4's allow/deny lists; the scan would honour them). */
export type ScanContext = Omit<EligibilityContext, "allowDbIds" | "denyDbIds">;

/** Sizes of one pool: eligible rows, and those of them whose error_type is the scan's type. */
export interface PoolCounts {
  legal: number;
  typed: number;
}

/** Column copy of one memory's scan fields and BM25 documents. */
export class MemoryColumns {
  #source: MemoryEntry[] = [];
  /** The memory revision the columns were last synced at (undefined: compare rows). */
  #revision: number | undefined = undefined;
  #strings = new Map<string, number>();
  #position = new Float64Array(1024);
  #query = new Int32Array(1024);
  #db = new Int32Array(1024);
  #type = new Int32Array(1024);
  #polarity = new Uint8Array(1024);
  #scope = new Uint8Array(1024);
  /** Scratch row lists of the last scan: legal and typed (and, for a two-polarity scan, the negative pool's pair). */
  #scratch: [Int32Array, Int32Array, Int32Array, Int32Array] = [new Int32Array(0), new Int32Array(0), new Int32Array(0), new Int32Array(0)];
  readonly #bm25 = new Bm25Corpus();

  /** Number of rows copied. */
  get size(): number {
    return this.#source.length;
  }

  /**
   * Brings the columns in step with `entries` (row order; rows never move). With the memory's
   * `revision`, a call at an unchanged revision returns at once.
   */
  sync(entries: readonly MemoryEntry[], revision?: number): void {
    if (revision !== undefined && revision === this.#revision && entries.length === this.#source.length) return;
    this.#revision = revision;
    const source = this.#source;
    if (source.length > entries.length) source.length = entries.length;
    if (entries.length > this.#position.length) this.#grow(entries.length);
    for (let row = 0; row < entries.length; row++) {
      const e = entries[row];
      if (source[row] === e) continue;
      source[row] = e;
      this.#position[row] = e.source_stream_position;
      this.#query[row] = this.#intern(e.source_query_id);
      this.#db[row] = this.#intern(e.source_db_id);
      this.#type[row] = this.#intern(e.error_type);
      this.#polarity[row] = POLARITY_CODE[e.polarity] ?? 0;
      this.#scope[row] = SCOPE_CODE[e.applicability_scope] ?? 0;
      this.#bm25.set(row, bm25Tokens(bm25Document(e)));
    }
  }

  /** Legal and typed pool sizes for `ctx` (every rule of ELIGIBILITY_RULES that applies). Call `sync` first. */
  count(ctx: ScanContext, errorType: string): PoolCounts {
    return this.#scan(ctx, errorType);
  }

  /** The eligible rows for `ctx`, ascending; only those of type `errorType` when `typedOnly`. */
  rows(ctx: ScanContext, errorType: string, typedOnly: boolean): number[] {
    return this.pool(ctx, errorType, () => typedOnly).rows;
  }

  /**
   * One pass over the columns for `ctx`: the pool sizes, and the rows (ascending) of the typed pool
   * when `useTyped(sizes)` says so, else of the legal pool. Call `sync` first.
   */
  pool(ctx: ScanContext, errorType: string, useTyped: (counts: PoolCounts) => boolean): PoolCounts & { rows: number[] } {
    const counts = this.#scan(ctx, errorType);
    const typedOnly = useTyped(counts);
    const [legalRows, typedRows] = this.#scratch;
    return { ...counts, rows: Array.from((typedOnly ? typedRows : legalRows).subarray(0, typedOnly ? counts.typed : counts.legal)) };
  }

  /**
   * `pool` for each of `ctxs`. When they are the positive and the negative pool of one retrieval
   * (equal but for the polarity), both are filled in a single pass over the columns.
   */
  pools(ctxs: readonly ScanContext[], errorType: string, useTyped: (counts: PoolCounts) => boolean): (PoolCounts & { rows: number[] })[] {
    const [a, b] = ctxs;
    const split =
      ctxs.length === 2 &&
      a.polarity !== null &&
      b.polarity !== null &&
      a.polarity !== b.polarity &&
      a.causal === b.causal &&
      a.streamPosition === b.streamPosition &&
      a.queryId === b.queryId &&
      a.dbId === b.dbId &&
      a.excludeSameDatabase === b.excludeSameDatabase;
    if (!split) return ctxs.map((ctx) => this.pool(ctx, errorType, useTyped));
    const byPolarity = this.#scanBothPolarities(a, errorType);
    return ctxs.map((ctx) => {
      const { counts, legalRows, typedRows } = byPolarity[ctx.polarity === "positive" ? 1 : 2];
      const typedOnly = useTyped(counts);
      return { ...counts, rows: Array.from((typedOnly ? typedRows : legalRows).subarray(0, typedOnly ? counts.typed : counts.legal)) };
    });
  }

  /** `#scan` for the positive (code 1) and the negative (code 2) pool of `ctx` in one pass of each rule. */
  #scanBothPolarities(ctx: ScanContext, errorType: string): Record<1 | 2, { counts: PoolCounts; legalRows: Int32Array; typedRows: Int32Array }> {
    // Every rule but the pool's polarity (a combined-pool probe), then the polarity rule once per pool.
    const combined = this.#probe({ ...ctx, polarity: null });
    const [legal1, typed1, legal2, typed2] = this.#scratch;
    const shared = this.#keepEligible(combined, legal1);
    legal2.set(legal1.subarray(0, shared));
    const type = this.#lookup(errorType);
    const split = (code: 1 | 2, legalRows: Int32Array, typedRows: Int32Array) => {
      const legal = POLARITY_RULE.keep(this.#columns, { ...combined, polarity: code }, legalRows, shared);
      return { counts: { legal, typed: this.#keepTyped(legalRows, legal, type, typedRows) }, legalRows, typedRows };
    };
    return { 1: split(1, legal1, typed1), 2: split(2, legal2, typed2) };
  }

  /** The rules' probe of `ctx` over the interned ids; sizes the scratch lists to the rows. */
  #probe(ctx: ScanContext): EligibilityProbe {
    if (this.#scratch[0].length < this.#source.length) this.#scratch = [0, 1, 2, 3].map(() => new Int32Array(this.#position.length)) as [Int32Array, Int32Array, Int32Array, Int32Array];
    return eligibilityProbe(ctx, (s) => this.#lookup(s));
  }

  /** Fills `rows` with every row, then keeps those each active rule allows (ascending); returns how many. */
  #keepEligible(probe: EligibilityProbe, rows: Int32Array): number {
    let n = this.#source.length;
    for (let row = 0; row < n; row++) rows[row] = row;
    for (const rule of activeRules(probe)) n = rule.keep(this.#columns, probe, rows, n);
    return n;
  }

  /** Writes the rows of `rows[0..n)` whose error_type is `type` to `out`; returns how many. */
  #keepTyped(rows: Int32Array, n: number, type: number, out: Int32Array): number {
    const types = this.#type;
    let typed = 0;
    for (let k = 0; k < n; k++) if (types[rows[k]] === type) out[typed++] = rows[k];
    return typed;
  }

  /** The columns as the eligibility rules read them. */
  get #columns(): CandidateColumns {
    return { position: this.#position, query: this.#query, db: this.#db, polarity: this.#polarity, scope: this.#scope };
  }

  /**
   * Counts the eligible and the typed eligible rows, writing both lists to the scratch buffers
   * (kept between calls: fresh large allocations are slow on some machines).
   */
  #scan(ctx: ScanContext, errorType: string): PoolCounts {
    const probe = this.#probe(ctx);
    const [legalRows, typedRows] = this.#scratch;
    const legal = this.#keepEligible(probe, legalRows);
    return { legal, typed: this.#keepTyped(legalRows, legal, this.#lookup(errorType), typedRows) };
  }

  /** true when `row`'s error_type is `errorType`. Call `sync` first. */
  hasType(row: number, errorType: string): boolean {
    return row < this.#source.length && this.#type[row] === this.#lookup(errorType);
  }

  /** BM25 scores of `rows` (the corpus is exactly these rows) for `queryTokens`. Call `sync` first. */
  bm25Scores(queryTokens: readonly string[], rows: readonly number[], opts?: Bm25Options): number[] {
    return this.#bm25.scores(queryTokens, rows, opts);
  }

  #intern(s: string): number {
    let id = this.#strings.get(s);
    if (id === undefined) this.#strings.set(s, (id = this.#strings.size));
    return id;
  }

  /** The id of an interned string, −1 when no row has ever held it. */
  #lookup(s: string): number {
    return this.#strings.get(s) ?? -1;
  }

  #grow(rows: number): void {
    const size = Math.max(rows, 2 * this.#position.length);
    const grow = <T extends Float64Array | Int32Array | Uint8Array>(old: T, make: (n: number) => T): T => {
      const next = make(size);
      next.set(old as never);
      return next;
    };
    this.#position = grow(this.#position, (n) => new Float64Array(n));
    this.#query = grow(this.#query, (n) => new Int32Array(n));
    this.#db = grow(this.#db, (n) => new Int32Array(n));
    this.#type = grow(this.#type, (n) => new Int32Array(n));
    this.#polarity = grow(this.#polarity, (n) => new Uint8Array(n));
    this.#scope = grow(this.#scope, (n) => new Uint8Array(n));
  }
}
