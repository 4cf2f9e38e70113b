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

/**
 * A corpus of tokenised documents addressed by number, scored with BM25 over any subset of them
 * (the retriever's corpus is the current candidate pool, METHOD.md §5.2). Tokens are interned to
 * ids once per document; a scoring call makes one pass over the subset's distinct tokens for df and
 * term frequencies, then sums each document's query-token contributions in query order. The
 * arithmetic is exactly that of the formula in the module comment, operation for operation.
 */
export class Bm25Corpus {
  readonly #vocab = new Map<string, number>();
  /** Per document: offset of its distinct token ids in #ids/#tfs (−1: not set), their count, its token count. */
  #start = new Int32Array(1024).fill(-1);
  #distinct = new Int32Array(1024);
  #length = new Int32Array(1024);
  #size = 0;
  /** Distinct token ids and their term frequencies of every document, back to back (append-only). */
  #ids = new Int32Array(16384);
  #tfs = new Int32Array(16384);
  #used = 0;
  /** Scratch: query-token slot per token id during a call, −1 elsewhere. */
  #slot = new Int32Array(64).fill(-1);
  /** Scratch: the documents × query-slots term-frequency table, reused across calls (fresh large buffers are slow to fault in). */
  #table = new Int32Array(1024);

  /** Number of document numbers in use (0 … size − 1; some may be unset). */
  get size(): number {
    return this.#size;
  }

  /** true when document `doc` has been set. */
  has(doc: number): boolean {
    return Number.isInteger(doc) && doc >= 0 && doc < this.#size && this.#start[doc] !== -1;
  }

  /** Sets (or replaces) document `doc` from its tokens (`bm25Tokens`). */
  set(doc: number, tokens: readonly string[]): void {
    const tf = new Map<number, number>();
    for (const token of tokens) {
      let id = this.#vocab.get(token);
      if (id === undefined) this.#vocab.set(token, (id = this.#vocab.size));
      tf.set(id, (tf.get(id) ?? 0) + 1);
    }
    if (this.#vocab.size > this.#slot.length) {
      const slot = new Int32Array(Math.max(2 * this.#slot.length, this.#vocab.size)).fill(-1);
      slot.set(this.#slot);
      this.#slot = slot;
    }
    if (doc >= this.#start.length) {
      const size = Math.max(doc + 1, 2 * this.#start.length);
      this.#start = grown(this.#start, size, -1);
      this.#distinct = grown(this.#distinct, size, 0);
      this.#length = grown(this.#length, size, 0);
    }
    if (this.#used + tf.size > this.#ids.length) {
      const size = Math.max(this.#used + tf.size, 2 * this.#ids.length);
      this.#ids = grown(this.#ids, size, 0);
      this.#tfs = grown(this.#tfs, size, 0);
    }
    this.#start[doc] = this.#used;
    this.#distinct[doc] = tf.size;
    this.#length[doc] = tokens.length;
    for (const [id, count] of tf) {
      this.#ids[this.#used] = id;
      this.#tfs[this.#used] = count;
      this.#used += 1;
    }
    this.#size = Math.max(this.#size, doc + 1);
  }

  /**
   * BM25 score of each of `docs` (document numbers, all set) for `queryTokens`, with N, avgdl and
   * df computed over exactly those documents. Repeated query tokens count again.
   */
  scores(queryTokens: readonly string[], docs: readonly number[], opts: Bm25Options = {}): number[] {
    const k1 = opts.k1 ?? BM25_DEFAULTS.k1;
    const b = opts.b ?? BM25_DEFAULTS.b;
    const n = docs.length;
    if (n === 0) return [];
    const slot = this.#slot;
    const unique: number[] = [];
    const sequence = new Int32Array(queryTokens.length);
    queryTokens.forEach((token, i) => {
      const id = this.#vocab.get(token);
      if (id === undefined) return void (sequence[i] = -1); // in no document: contributes nothing
      if (slot[id] === -1) slot[id] = unique.push(id) - 1;
      sequence[i] = slot[id];
    });
    const width = unique.length;
    if (n * width > this.#table.length) this.#table = new Int32Array(Math.max(n * width, 2 * this.#table.length));
    const tfs = this.#table;
    tfs.fill(0, 0, n * width);
    const df = new Float64Array(width);
    const lengths = new Float64Array(n);
    let totalLength = 0;
    const ids = this.#ids;
    const counts = this.#tfs;
    try {
      for (let i = 0; i < n; i++) {
        const doc = docs[i];
        if (!this.has(doc)) throw new RangeError(`Bm25Corpus.scores: document ${doc} is not set`);
        const start = this.#start[doc];
        const end = start + this.#distinct[doc];
        lengths[i] = this.#length[doc];
        totalLength += this.#length[doc];
        for (let j = start; j < end; j++) {
          const u = slot[ids[j]];
          if (u === -1) continue;
          tfs[i * width + u] = counts[j];
          df[u] += 1;
        }
      }
    } finally {
      for (const id of unique) slot[id] = -1;
    }
    const avgdl = totalLength / n;
    const idf = new Float64Array(width);
    for (let u = 0; u < width; u++) idf[u] = Math.log(1 + (n - df[u] + 0.5) / (df[u] + 0.5));
    const out = new Array<number>(n);
    for (let i = 0; i < n; i++) {
      // k1·(1 − b + b·|d|/avgdl), evaluated once per document: the same operations on the same
      // values as inside the formula, so every term is bit-identical to the formula written out.
      const norm = k1 * (1 - b + (b * lengths[i]) / avgdl);
      let score = 0;
      for (let q = 0; q < sequence.length; q++) {
        const u = sequence[q];
        if (u === -1) continue;
        const tf = tfs[i * width + u];
        if (tf === 0) continue;
        score += (idf[u] * tf * (k1 + 1)) / (tf + norm);
      }
      out[i] = score;
    }
    return out;
  }
}

/** A copy of `a` with length `size`, new cells set to `fill`. */
function grown(a: Int32Array, size: number, fill: number): Int32Array<ArrayBuffer> {
  const next = new Int32Array(size).fill(fill, a.length);
  next.set(a);
  return next;
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
  const corpus = new Bm25Corpus();
  let total = 0;
  docs.forEach((doc, i) => {
    const tokens = typeof doc === "string" ? bm25Tokens(doc) : doc;
    corpus.set(i, tokens);
    total += tokens.length;
  });
  const all = docs.map((_, i) => i);
  const scoresForTokens = (queryTokens: readonly string[]) => corpus.scores(queryTokens, all, opts);
  return {
    size: docs.length,
    averageLength: docs.length === 0 ? 0 : total / docs.length,
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
