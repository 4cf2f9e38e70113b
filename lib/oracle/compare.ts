/**
 * Denotation comparison (METHOD.md §2.3 step 3 and §2.4) with Python's value semantics: the Spider
 * test-suite `result_eq` (bag semantics, order iff the gold has `order by`, column permutations, the
 * `quick_rej` pre-check with its `str(value) + str(type(value))` row sort) and BIRD's
 * `set(pred) == set(gold)`. Values compare as Python compares sqlite3 results: `1 == 1.0`, integers
 * beyond 2^53 exact (bigint), `'1' != 1`, bytes by content.
 * @module
 */
import type { Rows, SqlValue } from "./types.ts";

/** Equality/hash key of one value under Python `==` and `hash` (int and integral float coincide). */
export function valueKey(v: SqlValue): string {
  if (v === null) return "N";
  if (typeof v === "bigint") return "n" + v.toString();
  if (typeof v === "number") {
    if (Number.isInteger(v)) return "n" + (Number.isSafeInteger(v) ? String(v) : BigInt(v).toString()); // the same digits (String(-0) is "0" too)
    return "f" + String(v);
  }
  if (typeof v === "string") return "s" + v;
  return "b" + Buffer.from(v).toString("hex");
}

/** Key of a row (a Python tuple): length-prefixed value keys, so no two distinct tuples collide. */
export function rowKey(row: readonly SqlValue[]): string {
  return joinKeys(row, valueKey)!;
}

/** The length-prefixed join of the row's value keys; null when `keyOf` has none for a value. */
function joinKeys(row: readonly SqlValue[], keyOf: (v: SqlValue) => string | null): string | null {
  let key = "";
  for (const v of row) {
    const k = keyOf(v);
    if (k === null) return null;
    key += k.length + ":" + k;
  }
  return key;
}

/** A value's key that also tells the types apart (int 1 from float 1.0, -0.0 from 0.0); null for NaN (not equal to itself in Python). */
function strictValueKey(v: SqlValue): string | null {
  if (v === null) return "N";
  if (typeof v === "bigint") return "i" + v.toString();
  if (typeof v === "number") return Number.isNaN(v) ? null : Object.is(v, -0) ? "f-0" : "f" + String(v);
  if (typeof v === "string") return "s" + v;
  return "b" + Buffer.from(v).toString("hex");
}

/**
 * True when `pred` is `gold` value for value, types included (in order, or as a multiset when order
 * does not matter): then `result_eq` is True — rows with equal strict keys are the same Python tuples
 * with the same types, so quick_rej (which sorts by `str(v) + str(type(v))`) sorts them alike and
 * passes, and the identity permutation (always a candidate) makes the rows identical. False says nothing.
 */
function identicalRows(gold: Rows, pred: Rows, orderMatters: boolean): boolean {
  const goldKeys = gold.map((row) => joinKeys(row, strictValueKey));
  const predKeys = pred.map((row) => joinKeys(row, strictValueKey));
  if (goldKeys.includes(null)) return false;
  if (orderMatters) return goldKeys.every((k, i) => k === predKeys[i]);
  return sameKeyMultiset(goldKeys as string[], predKeys as string[]); // a null pred key matches no gold key
}

/** Python's `repr(float)` (shortest round-trip digits; exponent form outside 1e-4 ≤ |x| < 1e16). */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const sign = x < 0 ? "-" : "";
  const [mantissa, expText] = Math.abs(x).toExponential().split("e");
  const digits = mantissa.replace(".", "");
  const exp = Number(expText);
  if (exp >= -4 && exp < 16) {
    if (exp < 0) return sign + "0." + "0".repeat(-exp - 1) + digits;
    const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
    const frac = digits.slice(exp + 1);
    return sign + intPart + "." + (frac === "" ? "0" : frac);
  }
  const expAbs = String(Math.abs(exp)).padStart(2, "0");
  const body = digits.length > 1 ? digits[0] + "." + digits.slice(1) : digits;
  return sign + body + "e" + (exp < 0 ? "-" : "+") + expAbs;
}

/** Python's `repr(bytes)`. */
export function pyBytesRepr(bytes: Uint8Array): string {
  let hasSingle = false;
  let hasDouble = false;
  for (const b of bytes) {
    if (b === 0x27) hasSingle = true;
    if (b === 0x22) hasDouble = true;
  }
  const quote = hasSingle && !hasDouble ? '"' : "'";
  let out = "b" + quote;
  for (const b of bytes) {
    if (b === 0x5c) out += "\\\\";
    else if (b === 0x09) out += "\\t";
    else if (b === 0x0a) out += "\\n";
    else if (b === 0x0d) out += "\\r";
    else if (b === 0x27 && quote === "'") out += "\\'";
    else if (b < 0x20 || b >= 0x7f) out += "\\x" + b.toString(16).padStart(2, "0");
    else out += String.fromCharCode(b);
  }
  return out + quote;
}

/** `str(value) + str(type(value))`, the sort key of the test-suite's `unorder_row`. */
export function pySortKey(v: SqlValue): string {
  if (v === null) return "None<class 'NoneType'>";
  if (typeof v === "bigint") return v.toString() + "<class 'int'>";
  if (typeof v === "number") return pyFloatRepr(v) + "<class 'float'>";
  if (typeof v === "string") return v + "<class 'str'>";
  return pyBytesRepr(v) + "<class 'bytes'>";
}

/** Compares strings by code point, as Python does (UTF-16 order differs above U+FFFF). */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // Move surrogates above U+E000–U+FFFF so unit order matches code point order.
    x = x >= 0xe000 ? x - 0x800 : x >= 0xd800 ? x + 0x2000 : x;
    y = y >= 0xe000 ? y - 0x800 : y >= 0xd800 ? y + 0x2000 : y;
    return x - y;
  }
  return a.length - b.length;
}

/** The test-suite's `unorder_row`: the row's values sorted (stably) by `pySortKey`. */
function unorderRow(row: readonly SqlValue[]): readonly SqlValue[] {
  if (row.length < 2) return row; // nothing to sort (and the caller never mutates it)
  const keyed = row.map((v, i) => ({ v, k: pySortKey(v), i }));
  keyed.sort((p, q) => compareCodePoints(p.k, q.k) || p.i - q.i);
  return keyed.map((e) => e.v);
}

function sameKeySet(a: readonly string[], b: readonly string[]): boolean {
  const sa = new Set(a);
  const sb = new Set(b);
  if (sa.size !== sb.size) return false;
  for (const k of sa) if (!sb.has(k)) return false;
  return true;
}

function sameKeyMultiset(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const counts = new Map<string, number>();
  for (const k of a) counts.set(k, (counts.get(k) ?? 0) + 1);
  for (const k of b) {
    const c = counts.get(k);
    if (!c) return false;
    counts.set(k, c - 1);
  }
  return true;
}

/** `quick_rej`: false means "certainly different" (it can also reject some equal tables, as upstream does). */
function quickRej(gold: Rows, pred: Rows, orderMatters: boolean): boolean {
  const s1 = gold.map((r) => rowKey(unorderRow(r)));
  const s2 = pred.map((r) => rowKey(unorderRow(r)));
  if (orderMatters) return s1.length === s2.length && s1.every((k, i) => k === s2[i]);
  return sameKeySet(s1, s2);
}

/**
 * Candidate column permutations: `perm[i]` = prediction column that plays gold column i. Upstream
 * prunes with 20 randomly sampled prediction rows when there are more than 3 columns; pruning never
 * removes a permutation that could succeed, so pruning with every row (as here) gives the same verdict
 * deterministically and without the global RNG.
 */
function* candidatePermutations(gold: Rows, pred: Rows, numCols: number): Generator<number[]> {
  const allowed: number[][] = [];
  for (let i = 0; i < numCols; i++) {
    const cols = [...Array(numCols).keys()];
    if (numCols <= 3) {
      allowed.push(cols);
      continue;
    }
    const goldValues = new Set(gold.map((r) => valueKey(r[i])));
    allowed.push(cols.filter((j) => pred.every((r) => goldValues.has(valueKey(r[j])))));
  }
  const perm: number[] = new Array(numCols);
  const used = new Array<boolean>(numCols).fill(false);
  function* walk(i: number): Generator<number[]> {
    if (i === numCols) {
      yield perm.slice();
      return;
    }
    for (const j of allowed[i]) {
      if (used[j]) continue; // upstream skips permutations with repeated columns
      used[j] = true;
      perm[i] = j;
      yield* walk(i + 1);
      used[j] = false;
    }
  }
  yield* walk(0);
}

/**
 * The Spider test-suite `result_eq(gold, pred, order_matters)`: both empty ⇒ equal; row or column
 * counts differ ⇒ not equal; `quick_rej`; then some column permutation of `pred` must make the rows
 * identical in order (order_matters) or equal as sets and as multisets (bag semantics).
 */
export function spiderResultEq(gold: Rows, pred: Rows, orderMatters: boolean): boolean {
  if (gold.length === 0 && pred.length === 0) return true;
  if (gold.length !== pred.length) return false;
  const numCols = gold[0].length;
  if (pred[0].length !== numCols) return false;
  const goldKeys = gold.map(rowKey);
  if (numCols === 1) {
    // One column: `unorder_row` is the identity, so quick_rej's keys are the row keys, and the one
    // permutation is the identity; quick_rej's test is then the ordered comparison itself, or the
    // set half of the unordered one.
    const predKeys = pred.map(rowKey);
    if (orderMatters) return goldKeys.every((k, i) => k === predKeys[i]);
    return sameKeyMultiset(goldKeys, predKeys); // equal multisets are equal sets: upstream's set test is implied
  }
  if (identicalRows(gold, pred, orderMatters)) return true; // the common case of a correct prediction, without quick_rej's sorts
  if (!quickRej(gold, pred, orderMatters)) return false;
  for (const perm of candidatePermutations(gold, pred, numCols)) {
    const predKeys = pred.map((r) => rowKey(perm.map((j) => r[j])));
    if (orderMatters) {
      if (goldKeys.every((k, i) => k === predKeys[i])) return true;
    } else if (sameKeyMultiset(goldKeys, predKeys)) { // implies the set equality upstream also tests
      return true;
    }
  }
  return false;
}

/** BIRD: `set(pred) == set(gold)` over row tuples — row order and duplicates ignored, column order kept. */
export function birdResultEq(gold: Rows, pred: Rows): boolean {
  return sameKeySet(gold.map(rowKey), pred.map(rowKey));
}
