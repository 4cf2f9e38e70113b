/**
 * Levenshtein distance (unit insert, delete and substitute costs) over any sequence: characters of a
 * string (nearest-name suggestions in lib/errors.ts) or SQL tokens (edit distance by step, METHOD.md §8).
 * @module
 */

/** Edit distance between two sequences; one row of the DP table, O(|b|) memory. */
export function levenshtein<T>(a: ArrayLike<T>, b: ArrayLike<T>): number {
  const row = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) row[j] = j;
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j];
      row[j] = Math.min(above + 1, row[j - 1] + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length];
}
