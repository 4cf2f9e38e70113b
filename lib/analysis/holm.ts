/**
 * Analysis stage, multiple comparisons (METHOD.md §9, beyond the paper): Holm's step-down
 * adjustment of a family of p-values (Holm 1979), used across the ablation family of Table 4.
 * @module
 */

/**
 * Holm-adjusted p-values in input order: sort ascending, p̃_(i) = max_{j ≤ i} min(1, (m − j + 1)·p_(j)).
 * @example holmAdjust([0.01, 0.04, 0.03]) // [0.03, 0.06, 0.06]
 */
export function holmAdjust(pValues: readonly number[]): number[] {
  const m = pValues.length;
  const order = pValues.map((p, i) => [p, i] as const).sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  const out = new Array<number>(m);
  let running = 0;
  order.forEach(([p, i], rank) => {
    running = Math.max(running, Math.min(1, (m - rank) * p));
    out[i] = running;
  });
  return out;
}
