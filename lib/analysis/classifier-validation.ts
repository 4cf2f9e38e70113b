/**
 * Analysis stage, classifier validation (METHOD.md §8, §9 Table 5): agreement of the deterministic
 * failure classifier's coarse types with adjudicated human gold types on initially failed queries —
 * coverage, accuracy, macro-F1 over the union of labels, and the confusion matrix.
 * @module
 */
import { z } from "zod";
import { MeritError } from "../errors.ts";
import { ERROR_TYPES } from "../repair/trajectory.ts";

/** One annotation row (one annotator's label for one case). */
export const AnnotationRowSchema = z
  .object({
    query_id: z.string().min(1),
    db_id: z.string().min(1),
    /** The initial SQL the annotator saw. */
    predicted_sql: z.string(),
    /** The DBMS message (or "" for executable wrong answers). */
    error_message: z.string(),
    /** The classifier's coarse type. */
    predicted_type: z.string().min(1),
    /** The adjudicated human type (identical across the case's rows). */
    gold_type: z.string().min(1),
    annotator_id: z.string().min(1),
  })
  .strict();
export type AnnotationRow = z.infer<typeof AnnotationRowSchema>;

/** Requirements of a validation set (METHOD.md §8); defaults are the reference's. */
export interface ValidationRequirements {
  /** @default 150 */
  minCases?: number;
  /** @default 200 */
  maxCases?: number;
  /** Cases labelled by at least two distinct annotators. @default 50 */
  minDoubleAnnotated?: number;
}

/** Per-label scores (one-vs-rest). */
export interface LabelScore {
  label: string;
  precision: number;
  recall: number;
  f1: number;
  /** Cases whose gold type is this label. */
  support: number;
}

/** Result of a validation; rates are fractions in [0, 1]. */
export interface ClassifierValidation {
  cases: number;
  double_annotated: number;
  /** Share of cases predicted as something other than `Unknown`. */
  coverage: number;
  unknown_rate: number;
  /** Share of cases with predicted == gold, over all cases. */
  accuracy: number;
  /** Unweighted mean of per-label F1 over the union of gold and predicted labels. */
  macro_f1: number;
  /** Label order of `per_label` and of both confusion axes: METHOD.md §3 order, then others alphabetically. */
  labels: string[];
  per_label: LabelScore[];
  /** confusion[g][p] = cases with gold labels[g] predicted as labels[p]. */
  confusion: number[][];
  /** The population-weighted accuracy (Table 5); present when the trajectories carry their error types. */
  weighting?: PopulationWeighting;
}

/** One predicted-type stratum of the initial failures. */
export interface Stratum {
  /** The run's coarse type of the initial attempt (unclassified → Result Mismatch, as in the breakdowns). */
  type: string;
  /** Initially failed queries of the run with this type. */
  population: number;
  /** Annotated cases of this type, and how many of them the classifier got right. */
  cases: number;
  correct: number;
}

/**
 * Accuracy weighted to the population of initial failures: each predicted-type stratum's accuracy
 * times its share of all initial failures (post-stratification of a simple random sample; the
 * stratified estimator when the sample was drawn per type). Fractions in [0, 1].
 */
export interface PopulationWeighting {
  /** Initially failed queries of the run. */
  population: number;
  /** Strata in METHOD.md §3 order, then others alphabetically. */
  strata: Stratum[];
  /** Σ W_h·acc_h / Σ W_h over the strata with annotated cases; null when no annotated case falls in a populated stratum. */
  accuracy: number | null;
  /** Share of the initial failures whose stratum has annotated cases (1 when every type was sampled). */
  covered_share: number;
  /** Cases whose annotated predicted_type is not the run's type of that initial attempt (0 for files `merit annotate` wrote). */
  type_mismatches: number;
}

/** What validation reads of a trajectory; with `error_types`, the accuracy is also population-weighted. */
export interface ValidationTrajectory {
  query_id: string;
  db_id: string;
  initial_correct: boolean;
  error_types?: readonly (string | null)[];
  /** The type of an initial failure the feedback accepted (lib/repair/trajectory.ts). */
  initial_failure_type?: string;
}

/**
 * Validate the classifier against gold labels. `trajectories` are the run's (any method: the initial
 * attempt is shared) and prove each case failed initially; when they carry error types they are
 * also the population the accuracy is weighted to.
 */
export function classifierValidation(
  rows: readonly AnnotationRow[],
  trajectories: readonly ValidationTrajectory[],
  req: ValidationRequirements = {},
): ClassifierValidation {
  const minCases = req.minCases ?? 150;
  const maxCases = req.maxCases ?? 200;
  const minDouble = req.minDoubleAnnotated ?? 50;
  const initial = new Map(trajectories.map((t) => [`${t.db_id}\u0000${t.query_id}`, t.initial_correct]));
  const cases = new Map<string, { first: AnnotationRow; annotators: Set<string> }>();
  for (const row of rows) {
    const key = `${row.db_id}\u0000${row.query_id}`;
    const name = `case (${row.db_id}, ${row.query_id})`;
    const known = initial.get(key);
    if (known === undefined) throw new MeritError(`classifier validation: ${name} has no trajectory; annotate queries of the supplied run only`);
    if (known) throw new MeritError(`classifier validation: ${name} was initially correct; only initially failed queries can be annotated`);
    const existing = cases.get(key);
    if (existing === undefined) {
      cases.set(key, { first: row, annotators: new Set([row.annotator_id]) });
      continue;
    }
    for (const field of ["predicted_sql", "error_message", "predicted_type", "gold_type"] as const) {
      if (existing.first[field] !== row[field]) {
        throw new MeritError(`classifier validation: ${name} rows disagree on ${field} (${JSON.stringify(existing.first[field])} vs ${JSON.stringify(row[field])}); adjudicate the gold label before validating`);
      }
    }
    existing.annotators.add(row.annotator_id);
  }
  if (cases.size < minCases || cases.size > maxCases) {
    throw new MeritError(`classifier validation: ${cases.size} cases, but ${minCases}–${maxCases} are required (METHOD.md §8); annotate more or fewer cases`);
  }
  const doubled = [...cases.values()].filter((c) => c.annotators.size >= 2).length;
  if (doubled < minDouble) throw new MeritError(`classifier validation: ${doubled} cases have two annotators, ${minDouble} are required; add second annotations`);

  const pairs = [...cases.values()].map((c) => [c.first.gold_type, c.first.predicted_type] as const);
  const labels = orderLabels(new Set(pairs.flat()));
  const index = new Map(labels.map((l, i) => [l, i]));
  const confusion = labels.map(() => labels.map(() => 0));
  for (const [gold, predicted] of pairs) confusion[index.get(gold)!][index.get(predicted)!] += 1;
  const per_label = labels.map((label, i) => {
    const tp = confusion[i][i];
    const goldCount = confusion[i].reduce((s, x) => s + x, 0);
    const predictedCount = confusion.reduce((s, row) => s + row[i], 0);
    const precision = predictedCount === 0 ? 0 : tp / predictedCount;
    const recall = goldCount === 0 ? 0 : tp / goldCount;
    const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
    return { label, precision, recall, f1, support: goldCount };
  });
  const n = pairs.length;
  const covered = pairs.filter(([, p]) => p !== "Unknown").length;
  const weighting = trajectories.every((t) => t.error_types !== undefined) ? populationWeighting([...cases.values()].map((c) => c.first), trajectories) : undefined;
  return {
    cases: n,
    double_annotated: doubled,
    coverage: covered / n,
    unknown_rate: 1 - covered / n,
    accuracy: pairs.filter(([g, p]) => g === p).length / n,
    macro_f1: per_label.reduce((s, l) => s + l.f1, 0) / labels.length,
    labels,
    per_label,
    confusion,
    ...(weighting ? { weighting } : {}),
  };
}

/** The initial type of a trajectory as the breakdowns count it (METHOD.md §8: no classification → Result Mismatch). */
const initialType = (t: ValidationTrajectory) => t.initial_failure_type ?? t.error_types?.[0] ?? "Result Mismatch";

/** Post-stratified accuracy of the cases (one row per case) over the run's initial failures. */
function populationWeighting(cases: readonly AnnotationRow[], trajectories: readonly ValidationTrajectory[]): PopulationWeighting {
  const failed = trajectories.filter((t) => !t.initial_correct);
  const typeOf = new Map(failed.map((t) => [`${t.db_id}\u0000${t.query_id}`, initialType(t)]));
  const strata = new Map<string, Stratum>();
  const stratum = (type: string) => strata.get(type) ?? strata.set(type, { type, population: 0, cases: 0, correct: 0 }).get(type)!;
  for (const t of failed) stratum(initialType(t)).population += 1;
  let mismatches = 0;
  for (const c of cases) {
    const type = typeOf.get(`${c.db_id}\u0000${c.query_id}`)!;
    if (type !== c.predicted_type) mismatches += 1;
    const h = stratum(type);
    h.cases += 1;
    if (c.predicted_type === c.gold_type) h.correct += 1;
  }
  const ordered = orderLabels(new Set(strata.keys())).map((t) => strata.get(t)!);
  const sampled = ordered.filter((h) => h.cases > 0 && h.population > 0);
  const mass = sampled.reduce((s, h) => s + h.population, 0);
  return {
    population: failed.length,
    strata: ordered,
    accuracy: mass === 0 ? null : sampled.reduce((s, h) => s + h.population * (h.correct / h.cases), 0) / mass,
    covered_share: failed.length === 0 ? 0 : mass / failed.length,
    type_mismatches: mismatches,
  };
}

/** METHOD.md §3 label order first, then any other labels alphabetically. */
function orderLabels(labels: Set<string>): string[] {
  const known = (ERROR_TYPES as readonly string[]).filter((l) => labels.has(l));
  const other = [...labels].filter((l) => !(ERROR_TYPES as readonly string[]).includes(l)).sort();
  return [...known, ...other];
}
