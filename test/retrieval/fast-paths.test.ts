// Tests the retrieval fast paths against the plain definitions they replace, on random inputs: the column pools vs isEligible (every rule, after merges), Bm25Corpus vs the BM25 formula written out naively (bit for bit, any subset), topRanked vs rankCandidates (ties and near-ties at 12 decimals), and the 4-row exactDenseScores vs dot.
import { describe, expect, it } from "vitest";
import { PyRandom } from "../../lib/random.ts";
import { bm25Document } from "../../lib/memory/entry-text.ts";
import type { MemoryEntry } from "../../lib/memory/entry.ts";
import { isEligible, type EligibilityContext } from "../../lib/memory/eligibility.ts";
import { Bm25Corpus, bm25Tokens } from "../../lib/retrieval/bm25.ts";
import { exactDenseScores } from "../../lib/retrieval/dense.ts";
import { MemoryColumns } from "../../lib/retrieval/memory-columns.ts";
import { rankCandidates, rankColumnsOf, topRanked, type RankInput } from "../../lib/retrieval/rank.ts";
import { dot } from "../../lib/vector.ts";
import { makeEntry } from "../memory/fixtures.ts";

const TYPES = ["Syntax", "Schema Linking", "Aggregation", "Unknown"];
const SCOPES: MemoryEntry["applicability_scope"][] = ["global", "global", "cross_database", "same_database"];

function randomEntry(rng: PyRandom, i: number): MemoryEntry {
  return makeEntry({
    polarity: rng.random() < 0.6 ? "positive" : "negative",
    errorType: TYPES[rng.randbelow(TYPES.length)],
    queryId: `q${rng.randbelow(12)}`,
    dbId: `db${rng.randbelow(4)}`,
    position: rng.randbelow(40),
    scope: SCOPES[rng.randbelow(SCOPES.length)],
    delta: `SELECT c${rng.randbelow(9)} FROM t${i}`,
    episode: `ep${i}`,
  });
}

/** The BM25 formula of METHOD.md §5.2 written out directly over token lists (no interning). */
function naiveBm25(query: readonly string[], docs: readonly (readonly string[])[]): number[] {
  const [k1, b] = [1.5, 0.75];
  const n = docs.length;
  const avgdl = docs.reduce((s, d) => s + d.length, 0) / n;
  return docs.map((d) => {
    let score = 0;
    for (const t of query) {
      const tf = d.filter((x) => x === t).length;
      if (tf === 0) continue;
      const df = docs.filter((x) => x.includes(t)).length;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      score += (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * d.length) / avgdl));
    }
    return score;
  });
}

describe("MemoryColumns pools equal isEligible", () => {
  it("for random memories and contexts (causal or not, every polarity, cross-database), before and after merges", () => {
    const rng = new PyRandom(21);
    const entries = Array.from({ length: 300 }, (_, i) => randomEntry(rng, i));
    const columns = new MemoryColumns();
    let compared = 0;
    for (let round = 0; round < 3; round++) {
      columns.sync(entries);
      for (let trial = 0; trial < 40; trial++) {
        const errorType = rng.random() < 0.9 ? TYPES[rng.randbelow(TYPES.length)] : "Never Seen Type";
        const base = {
          streamPosition: rng.randbelow(45),
          queryId: rng.random() < 0.9 ? `q${rng.randbelow(12)}` : "q-unseen",
          dbId: rng.random() < 0.9 ? `db${rng.randbelow(4)}` : "db-unseen",
          causal: rng.random() < 0.8,
          excludeSameDatabase: rng.random() < 0.3,
        };
        const contexts: EligibilityContext[] = [
          { ...base, polarity: "positive" },
          { ...base, polarity: "negative" },
          { ...base, polarity: null },
        ];
        for (const ctx of contexts) {
          const legal = entries.flatMap((e, row) => (isEligible(e, ctx) ? [row] : []));
          const typed = legal.filter((row) => entries[row].error_type === errorType);
          expect(columns.rows(ctx, errorType, false)).toEqual(legal);
          expect(columns.rows(ctx, errorType, true)).toEqual(typed);
          expect(columns.count(ctx, errorType)).toEqual({ legal: legal.length, typed: typed.length });
          compared += legal.length;
        }
        // The retriever's two-pool scan (one pass for both polarities) equals one scan per pool.
        const [positive, negative] = contexts;
        for (const minTyped of [0, 5, 1000]) {
          const useTyped = ({ typed }: { typed: number }) => typed >= minTyped;
          expect(columns.pools([positive, negative], errorType, useTyped)).toEqual([positive, negative].map((ctx) => columns.pool(ctx, errorType, useTyped)));
          expect(columns.pools([negative, positive], errorType, useTyped)).toEqual([negative, positive].map((ctx) => columns.pool(ctx, errorType, useTyped)));
        }
      }
      // A merge replaces entry objects in place, with other fields; appends add rows.
      for (let k = 0; k < 50; k++) entries[rng.randbelow(entries.length)] = randomEntry(rng, 1000 + k);
      entries.push(...Array.from({ length: 20 }, (_, i) => randomEntry(rng, 2000 + 20 * round + i)));
    }
    expect(compared).toBeGreaterThan(2000); // not vacuous
  });

  it("with a revision, rows are re-read only when it changes", () => {
    const entries = [makeEntry({ errorType: "Syntax", episode: "e1" })];
    const columns = new MemoryColumns();
    const ctx = { streamPosition: 5, queryId: "q-cur", dbId: "db1", polarity: "positive" as const, causal: true, excludeSameDatabase: false };
    columns.sync(entries, 1);
    expect(columns.rows(ctx, "Syntax", true)).toEqual([0]);
    entries[0] = makeEntry({ errorType: "Aggregation", episode: "e1" });
    columns.sync(entries, 1); // same revision: trusted, not re-read
    expect(columns.rows(ctx, "Syntax", true)).toEqual([0]);
    columns.sync(entries, 2);
    expect(columns.rows(ctx, "Syntax", true)).toEqual([]);
    expect(columns.rows(ctx, "Aggregation", true)).toEqual([0]);
  });

  it("BM25 through the columns re-reads a merged row's document", () => {
    const a = makeEntry({ delta: "SELECT alpha FROM t", episode: "e1" });
    const b = makeEntry({ delta: "SELECT beta FROM t", episode: "e2" });
    const entries = [a, b];
    const columns = new MemoryColumns();
    columns.sync(entries);
    const query = bm25Tokens("alpha");
    expect(columns.bm25Scores(query, [0, 1])).toEqual(naiveBm25(query, entries.map((e) => bm25Tokens(bm25Document(e)))));
    entries[0] = makeEntry({ delta: "SELECT gamma FROM t", episode: "e1" });
    columns.sync(entries);
    expect(columns.bm25Scores(query, [0, 1])).toEqual([0, 0]);
  });
});

describe("Bm25Corpus", () => {
  it("is bit-identical to the formula written out, on random corpora and subsets, with repeated and unknown query tokens", () => {
    const rng = new PyRandom(22);
    const vocab = Array.from({ length: 15 }, (_, i) => `w${i}`);
    const docs = Array.from({ length: 80 }, () => Array.from({ length: rng.randbelow(12) }, () => vocab[rng.randbelow(vocab.length)]));
    const corpus = new Bm25Corpus();
    docs.forEach((d, i) => corpus.set(i, d));
    for (let trial = 0; trial < 60; trial++) {
      const subset = docs.map((_, i) => i).filter(() => rng.random() < 0.5);
      const query = Array.from({ length: 1 + rng.randbelow(8) }, () => (rng.random() < 0.9 ? vocab[rng.randbelow(vocab.length)] : "unknown"));
      expect(corpus.scores(query, subset)).toEqual(naiveBm25(query, subset.map((i) => docs[i])));
    }
  });
  it("an unset document is an error; replacing a document changes its scores", () => {
    const corpus = new Bm25Corpus();
    corpus.set(2, ["a", "b"]);
    expect(() => corpus.scores(["a"], [0, 2])).toThrow(/document 0 is not set/);
    corpus.set(0, ["a"]);
    const before = corpus.scores(["a"], [0, 2]);
    corpus.set(0, ["c"]);
    expect(corpus.scores(["a"], [0, 2])).not.toEqual(before);
    expect(corpus.scores(["a"], [0, 2])[0]).toBe(0);
  });
});

describe("topRanked equals the first k of rankCandidates", () => {
  it("on random pools with exact ties and values closer than the rounding step", () => {
    const rng = new PyRandom(23);
    for (let trial = 0; trial < 300; trial++) {
      const n = 1 + rng.randbelow(60);
      const coarse = rng.random() < 0.5;
      const value = (): number => {
        if (coarse) return rng.randbelow(4) / 3; // many exact ties in every key
        const base = rng.randbelow(3) / 7;
        return rng.random() < 0.5 ? base : base + rng.randbelow(5) * 3e-13; // near-ties below 1e-12
      };
      const inputs: RankInput[] = Array.from({ length: n }, (_, i) => ({
        entryId: `e${rng.randbelow(1000)}_${i}`,
        dense: value(),
        bm25: value() * 5,
        typeMatch: rng.random() < 0.5 ? 1 : 0,
      }));
      const weights = rng.random() < 0.5 ? { dense: 0.75, bm25: 0.25, typeBonus: 0 } : { dense: 0.75, bm25: 0.25, typeBonus: 0.1 };
      for (const k of [1, 3, 4, 9, n + 2]) expect(topRanked(rankColumnsOf(inputs), weights, k)).toEqual(rankCandidates(inputs, weights).slice(0, k));
    }
  });
  it("k = 0 or an empty pool gives []", () => {
    expect(topRanked(rankColumnsOf([{ entryId: "a", dense: 1, bm25: 1, typeMatch: 0 }]), { dense: 1, bm25: 0, typeBonus: 0 }, 0)).toEqual([]);
    expect(topRanked(rankColumnsOf([]), { dense: 1, bm25: 0, typeBonus: 0 }, 4)).toEqual([]);
  });
});

describe("exactDenseScores (4 rows side by side)", () => {
  it("equals dot per row for every row count around the group width, repeated rows included", () => {
    const rng = new PyRandom(24);
    const vectors = Array.from({ length: 12 }, () => Float32Array.from({ length: 1024 }, () => rng.random() * 2 - 1));
    const query = Float32Array.from({ length: 1024 }, () => rng.random() * 2 - 1);
    for (let count = 0; count <= 11; count++) {
      const rows = Array.from({ length: count }, () => rng.randbelow(vectors.length));
      expect(exactDenseScores(query, vectors, rows)).toEqual(rows.map((row) => dot(query, vectors[row])));
    }
  });
});
