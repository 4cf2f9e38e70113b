/**
 * Analysis stage, standard normal distribution for the BCa bootstrap interval (METHOD.md §9):
 * the CDF Φ and its inverse, to about 1e-14 relative (tails included).
 * @module
 */
import { MeritError } from "../errors.ts";

const LOG_SQRT_2PI = 0.9189385332046728; // ln √(2π)

/**
 * Φ(x), the standard normal CDF. For |x| ≤ 3, Marsaglia's series (J. Stat. Softw. 11(4), 2004):
 * Φ(x) = ½ + φ(x)·(x + x³/3 + x⁵/(3·5) + …), terms of one sign, no cancellation. For x < −3, the
 * lower tail φ(x)/(t + 1/(t + 2/(t + 3/(t + …)))) with t = −x (Laplace's continued fraction), which
 * keeps relative accuracy deep in the tail; x > 3 uses 1 − Φ(−x). Below −40 Φ underflows to 0.
 */
export function normalCdf(x: number): number {
  if (Number.isNaN(x)) return NaN;
  if (x > 3) return 1 - normalCdf(-x);
  if (x < -3) return lowerTail(-x);
  const q = x * x;
  let sum = x;
  let term = x;
  let previous = 0;
  for (let i = 1; sum !== previous; ) {
    previous = sum;
    i += 2;
    term *= q / i;
    sum += term;
  }
  return 0.5 + sum * Math.exp(-0.5 * q - LOG_SQRT_2PI);
}

/** Φ(−t) for t ≥ 3 by the continued fraction, evaluated backwards from 200 terms (converged to double precision). */
function lowerTail(t: number): number {
  if (t > 40) return 0;
  let fraction = t;
  for (let k = 200; k >= 1; k--) fraction = t + k / fraction;
  return Math.exp(-0.5 * t * t - LOG_SQRT_2PI) / fraction;
}

// Acklam's rational approximation of Φ⁻¹ (relative error 1.15e-9), refined below by Halley steps.
const A = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
const B = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
const C = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
const D = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
const P_LOW = 0.02425;

/** Φ⁻¹(p) for 0 < p < 1 (−∞ at 0, +∞ at 1). */
export function normalQuantile(p: number): number {
  if (!(p >= 0 && p <= 1)) throw new MeritError(`normalQuantile: probability ${p} is outside [0, 1]`);
  if (p === 0) return -Infinity;
  if (p === 1) return Infinity;
  let x: number;
  if (p < P_LOW) {
    const q = Math.sqrt(-2 * Math.log(p));
    x = (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5]) / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1);
  } else if (p <= 1 - P_LOW) {
    const q = p - 0.5;
    const r = q * q;
    x = ((((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q) / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1);
  } else {
    const q = Math.sqrt(-2 * Math.log(1 - p));
    x = -(((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5]) / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1);
  }
  // Two Halley steps on Φ(x) − p bring the error to the accuracy of normalCdf.
  for (let step = 0; step < 2 && Math.abs(x) < 38; step++) {
    const u = (normalCdf(x) - p) * Math.exp(0.5 * x * x + LOG_SQRT_2PI);
    x -= u / (1 + 0.5 * x * u);
  }
  return x;
}
