/**
 * Repair episodes, attempt comparison (METHOD.md §8 diagnostics): the SQL normalisation used by the
 * oscillation rate and the normalised token edit distance between consecutive attempts of one
 * episode (run-metrics.ts, the figures).
 * @module
 */
import { levenshtein } from "../levenshtein.ts";

/**
 * Normalise an attempt for comparison (METHOD.md §8): strip, remove trailing `;` characters,
 * lower-case, collapse whitespace runs to one space. A final trim makes the collapse equal to
 * Python's `" ".join(s.split())`, so `select 1 ;` and `SELECT 1` normalise alike.
 * @example normalizeAttemptSql("  SELECT  *\nFROM t;; ") === "select * from t"
 */
export function normalizeAttemptSql(sql: string): string {
  return sql
    .trim()
    .replace(/;+$/, "")
    .toLowerCase()
    .replace(/\s+/g, " ")
    .trim();
}

/**
 * Tokens of a normalised SQL string: maximal runs of word characters, or single non-space symbols.
 * Word characters are Unicode letters, digits and `_`, as Python's `\w` on str.
 * @example sqlTokens("count(*)>=2") → ["count", "(", "*", ")", ">", "=", "2"]
 */
export function sqlTokens(normalized: string): string[] {
  return normalized.match(/[\p{L}\p{N}_]+|[^\p{L}\p{N}_\s]/gu) ?? [];
}

/** Levenshtein distance between two token sequences (unit insert, delete and substitute costs). */
export function tokenLevenshtein(a: readonly string[], b: readonly string[]): number {
  return levenshtein(a, b);
}

/**
 * Normalised token edit distance between two attempts (METHOD.md §8): Levenshtein over the tokens of
 * the normalised SQL divided by the larger token count (at least 1). Range [0, 1].
 */
export function normalizedEditDistance(before: string, after: string): number {
  const a = sqlTokens(normalizeAttemptSql(before));
  const b = sqlTokens(normalizeAttemptSql(after));
  return tokenLevenshtein(a, b) / Math.max(a.length, b.length, 1);
}

/**
 * Whether a trajectory oscillates (METHOD.md §8): some attempt i ≥ 1 equals, after normalisation,
 * an earlier attempt (the initial SQL included; two empty "" attempts count as equal).
 */
export function isOscillating(attempts: readonly string[]): boolean {
  const seen = new Set<string>();
  for (const sql of attempts) {
    const key = normalizeAttemptSql(sql);
    if (seen.has(key)) return true;
    seen.add(key);
  }
  return false;
}
