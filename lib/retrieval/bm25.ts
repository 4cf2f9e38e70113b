/**
 * Retrieval stage (METHOD.md §5.2): the kit's own Lucene-style BM25 over the current candidate
 * pool — tokens are maximal runs of [a-z0-9_] after lower-casing, repeated query tokens count
 * again, idf = ln(1 + (N − df + 0.5)/(df + 0.5)), k1 = 1.5, b = 0.75. Pure.
 *
 * Tokenisation uses natural's RegexpTokenizer in its default "gaps" mode with the separator
 * pattern /[^a-z0-9_]+/: splitting on maximal runs of non-token characters yields exactly the
 * maximal runs of [a-z0-9_], and natural drops the empty strings a leading/trailing separator
 * leaves. The sub-module is imported directly (the package root prints adverts and reads .env).
 * @module
 */
import { RegexpTokenizer } from "natural/lib/natural/tokenizers/regexp_tokenizer.js";

/** BM25 parameters (METHOD.md §5.2 pins k1 = 1.5, b = 0.75). */
export interface Bm25Options {
  /** Term-frequency saturation; default 1.5. */
  k1?: number;
  /** Length normalisation in [0, 1]; default 0.75. */
  b?: number;
}

export const BM25_DEFAULTS = { k1: 1.5, b: 0.75 } as const;

const TOKENIZER = new RegexpTokenizer({ pattern: /[^a-z0-9_]+/ });

/**
 * Lower-cases and splits into maximal runs of `[a-z0-9_]`.
 * @example bm25Tokens("SELECT T1.name, count(*)") // ["select", "t1", "name", "count"]
 */
export function bm25Tokens(text: string): string[] {
  return TOKENIZER.tokenize(text.toLowerCase()) as string[];
}

/** What BM25 needs to know about one document: its token count and term frequencies. */
export interface Bm25DocStats {
  readonly length: number;
  readonly tf: ReadonlyMap<string, number>;
}

/** Token count and term frequencies of a tokenised document (cacheable per document). */
export function bm25DocStats(tokens: readonly string[]): Bm25DocStats {
  const tf = new Map<string, number>();
  for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
  return { length: tokens.length, tf };
}

/**
 * BM25 over a corpus given as document stats (the corpus is exactly `docs`: N, avgdl and df are
 * computed over it). Each document sums its query-token contributions in query order; tokens it
 * lacks contribute 0.
 */
export function bm25ScoresFromStats(queryTokens: readonly string[], docs: readonly Bm25DocStats[], opts: Bm25Options = {}): number[] {
  const k1 = opts.k1 ?? BM25_DEFAULTS.k1;
  const b = opts.b ?? BM25_DEFAULTS.b;
  const n = docs.length;
  if (n === 0) return [];
  let totalLength = 0;
  for (const d of docs) totalLength += d.length;
  const avgdl = totalLength / n;
  const idf = new Map<string, number>();
  for (const t of queryTokens) {
    if (idf.has(t)) continue;
    let df = 0;
    for (const d of docs) if (d.tf.has(t)) df += 1;
    idf.set(t, Math.log(1 + (n - df + 0.5) / (df + 0.5)));
  }
  return docs.map((d) => {
    let score = 0;
    for (const t of queryTokens) {
      const tf = d.tf.get(t);
      if (tf === undefined) continue;
      score += ((idf.get(t) as number) * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * d.length) / avgdl));
    }
    return score;
  });
}

/** A BM25 scorer configured once over a fixed corpus (STYLE.md §2.4: configure, then call). */
export interface Bm25Scorer {
  /** Number of documents (N). */
  readonly size: number;
  /** Mean document length in tokens (avgdl). */
  readonly averageLength: number;
  /** One score per document, in corpus order, for a raw query string. */
  scores(query: string): number[];
  /** The same for an already tokenised query (repetitions count again). */
  scoresForTokens(queryTokens: readonly string[]): number[];
}

/** Precomputes the document stats of `docs` (raw strings, or token arrays from `bm25Tokens`). */
export function createBm25(docs: readonly (string | readonly string[])[], opts: Bm25Options = {}): Bm25Scorer {
  const stats = docs.map((doc) => bm25DocStats(typeof doc === "string" ? bm25Tokens(doc) : doc));
  const total = stats.reduce((sum, d) => sum + d.length, 0);
  const scoresForTokens = (queryTokens: readonly string[]) => bm25ScoresFromStats(queryTokens, stats, opts);
  return {
    size: stats.length,
    averageLength: stats.length === 0 ? 0 : total / stats.length,
    scores: (query: string) => scoresForTokens(bm25Tokens(query)),
    scoresForTokens,
  };
}

/**
 * BM25 score of each document for `query` (METHOD.md §5.2), in document order. The corpus is
 * exactly `docs` (N, avgdl and df are computed over it).
 * @example bm25Scores("b c", ["a b c", "a d"]) // [≈ 1.2718, 0]: 2 · ln 2 · 2.5/(1 + 1.5·(0.25 + 0.75·3/2.5))
 */
export function bm25Scores(query: string, docs: string[], opts?: { k1?: number; b?: number }): number[] {
  return createBm25(docs, opts).scores(query);
}
