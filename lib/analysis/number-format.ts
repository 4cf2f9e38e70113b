/**
 * Analysis stage, number formatting for tables (METHOD.md §9): fixed decimals, explicit signs for
 * differences, mean ± std, thousands separators. Pure and locale-independent.
 * @module
 */
import type { MeanStd } from "./aggregate.ts";

/** Placeholder for a missing value. */
export const MISSING = "—";

/** Fixed decimals; −0 prints as 0. @example fixed(58.8975, 2) === "58.90" */
export function fixed(x: number, decimals: number): string {
  const s = x.toFixed(decimals);
  return /^-0\.?0*$/.test(s) ? s.slice(1) : s;
}

/** Fixed decimals with an explicit sign (ASCII "+" / "-"); zero prints as "+0.00". @example signed(-1.234, 2) === "-1.23" */
export function signed(x: number, decimals: number): string {
  const s = fixed(x, decimals);
  return s.startsWith("-") ? s : `+${s}`;
}

/**
 * A difference as the paper's tables print it: an explicit "+" or "-", except that a value shown as
 * zero prints unsigned. @example difference(0.001, 2) === "0.00"; difference(0.58, 2) === "+0.58"
 */
export function difference(x: number, decimals: number): string {
  const s = fixed(x, decimals);
  return /^0\.?0*$/.test(s) ? s : signed(x, decimals);
}

/** "[lo, hi]" of differences as the paper prints them (see difference). @example differenceInterval(0, 2.17, 2) === "[0.00, +2.17]" */
export function differenceInterval(lo: number, hi: number, decimals: number): string {
  return `[${difference(lo, decimals)}, ${difference(hi, decimals)}]`;
}

/** "mean ± std", or just the mean when std is undefined (one seed). @example meanPm({mean: 58.9, std: 0.123, n: 3}, 2) === "58.90 ± 0.12" */
export function meanPm(m: MeanStd, decimals: number): string {
  return m.std === null ? fixed(m.mean, decimals) : `${fixed(m.mean, decimals)} ± ${fixed(m.std, decimals)}`;
}

/** Integer-or-fixed with comma thousands separators. @example grouped(3619, 0) === "3,619" */
export function grouped(x: number, decimals: number): string {
  const [whole, frac] = fixed(x, decimals).split(".");
  const withCommas = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return frac === undefined ? withCommas : `${withCommas}.${frac}`;
}

/** "[lo, hi]" with signs. @example interval(-0.5, 2.1, 2) === "[-0.50, +2.10]" */
export function interval(lo: number, hi: number, decimals: number): string {
  return `[${signed(lo, decimals)}, ${signed(hi, decimals)}]`;
}

/** A p-value: 4 decimals, or "<0.0001". */
export function pValue(p: number): string {
  return p < 0.0001 ? "<0.0001" : p.toFixed(4);
}
