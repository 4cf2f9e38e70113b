/**
 * Analysis stage, power planning of a study (METHOD.md §9, beyond the paper; `merit study plan`):
 * before any compute, the minimum detectable effect (MDE, α = 0.05, 80% power) of each comparison
 * for the planned queries × stream orders, and the queries or orders a target Δ needs.
 *
 * The variance comes from a pilot run when one is present (the study's own finished runs of both
 * methods: power.ts `pairedPower`, which splits it into a between-query part σ_b² and an across-seed
 * part σ_w²), else from the paper's Table 2 (data/paper-numbers.json). The paper reports only each
 * comparison's interval, so the derivation is: SE = (hi − lo) / (2 · z_{1−(1−level)/2}) (normal
 * approximation of its percentile interval), and the per-query standard deviation of the
 * seed-averaged paired difference σ = SE · √n, n the dataset's queries (Spider 1,034, BIRD 1,534),
 * over the paper's 3 stream orders. With S planned orders the paper's σ cannot be split into σ_b and
 * σ_w, so fewer orders are charged the worst case (σ² · 3 / S, all of it across seeds) and more
 * orders are credited nothing (σ²): the MDE is never understated, and how many orders a target
 * needs is left to a pilot. A comparison the paper does not report uses the paper's largest σ on
 * that dataset (its largest overall for a dataset the paper does not cover): conservative.
 * The paper's queries are all of dev; a study whose subset keeps mostly initially failed queries
 * has more discordance per query, which only a pilot measures.
 * @module
 */
import { normalQuantile } from "./normal.ts";
import type { PaperNumbers } from "./paper-comparison.ts";
import type { PowerResult } from "./power.ts";

/** The per-query standard deviation the paper's Table 2 implies for one comparison. */
export interface PaperVariance {
  dataset: string;
  reference: string;
  other: string;
  /** σ of the seed-averaged per-query difference, pp. */
  sd: number;
  /** Queries n and stream orders S of the paper's design. */
  queries: number;
  seeds: number;
}

/** What a planned design can detect, and what a target Δ needs (pp). */
export interface PlannedPower {
  /** MDE of the planned queries × orders. */
  mde: number;
  /** Least queries (at the planned orders) with MDE ≤ target. */
  queriesNeeded: number;
  /** Least stream orders (at the planned queries) with MDE ≤ target; null when none (or unknown: paper variance). */
  seedsNeeded: number | null;
  /** Where the variance came from, in words. */
  source: string;
}

/** z_{1−α/2} + z_{power}: 2.802 at α = 0.05 and 80% power. */
export function mdeFactor(alpha = 0.05, power = 0.8): number {
  return normalQuantile(1 - alpha / 2) + normalQuantile(power);
}

/** Every Table 2 row of the paper as a per-query standard deviation (see the module comment). */
export function paperVariances(paper: PaperNumbers): PaperVariance[] {
  const seeds = Array.isArray(paper.setup.stream_seeds) ? paper.setup.stream_seeds.length : 3;
  return paper.table2.flatMap((r) => {
    const queries = (paper.setup[r.dataset] as { queries?: number } | undefined)?.queries;
    if (typeof queries !== "number") return [];
    const se = (r.hi - r.lo) / (2 * normalQuantile(1 - (1 - r.level) / 2));
    return [{ dataset: r.dataset, reference: r.reference, other: r.other, sd: se * Math.sqrt(queries), queries, seeds }];
  });
}

/**
 * The paper's variance for comparing `a` with `b` on `dataset`: the pair itself, else the largest σ
 * (see the module comment); `source` names the pair borrowed and why it was chosen.
 */
export function paperVarianceFor(list: readonly PaperVariance[], dataset: string, a: string, b: string): { variance: PaperVariance; source: string } {
  const pair = list.find((v) => v.dataset === dataset && ((v.reference === a && v.other === b) || (v.reference === b && v.other === a)));
  if (pair) return { variance: pair, source: `paper Table 2, ${pair.reference} vs ${pair.other} on ${dataset}` };
  const covered = list.some((v) => v.dataset === dataset);
  const pool = covered ? list.filter((v) => v.dataset === dataset) : list;
  if (pool.length === 0) throw new Error("paperVarianceFor: the paper numbers hold no Table 2 row");
  const widest = pool.reduce((x, y) => (y.sd > x.sd ? y : x));
  const why = covered
    ? `the paper does not compare ${a} with ${b}; this is its largest σ on ${dataset}, the conservative choice`
    : `the paper has no ${dataset} runs; this is its largest σ over ${[...new Set(list.map((v) => v.dataset))].join(" and ")}, the conservative choice`;
  return { variance: widest, source: `paper Table 2, ${widest.reference} vs ${widest.other} on ${widest.dataset} (${why})` };
}

/** Planned power from the paper's variance: `queries` × `seeds`, target Δ in pp. */
export function powerFromPaper(v: PaperVariance, source: string, queries: number, seeds: number, target: number, factor = mdeFactor()): PlannedPower {
  const sd = seeds >= v.seeds ? v.sd : v.sd * Math.sqrt(v.seeds / seeds);
  return { mde: (factor * sd) / Math.sqrt(queries), queriesNeeded: Math.ceil(((factor * sd) / target) ** 2), seedsNeeded: null, source: `${source}: σ = ${v.sd.toFixed(1)} pp per query over ${v.seeds} orders` };
}

/** Most stream orders a plan searches for `seedsNeeded`. */
const MAX_ORDERS = 100;

/**
 * Planned power from a pilot's `pairedPower`, rescaled to `queries` × `seeds`; null when the pilot
 * shows no variance at all (identical outcomes: it says nothing about the variance to expect).
 */
export function powerFromPilot(r: PowerResult, queries: number, seeds: number, target: number): PlannedPower | null {
  const now = r.varBetween + r.varWithin / r.seeds;
  if (r.se === 0 || now === 0) return null;
  const mdeAt = (n: number, s: number) => r.factor * r.se * Math.sqrt(r.queries / n) * Math.sqrt((r.varBetween + r.varWithin / s) / now);
  const mde = mdeAt(queries, seeds);
  let seedsNeeded: number | null = null;
  for (let s = 1; s <= MAX_ORDERS; s++) {
    if (mdeAt(queries, s) <= target) {
      seedsNeeded = s;
      break;
    }
  }
  return {
    mde,
    queriesNeeded: Math.ceil(queries * (mde / target) ** 2),
    seedsNeeded,
    source: `pilot: the study's runs (${r.queries} queries × ${r.seeds} orders, σ_b² ${r.varBetween.toFixed(1)}, σ_w² ${r.varWithin.toFixed(1)} pp²)`,
  };
}
