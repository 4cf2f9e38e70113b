/**
 * Analysis stage, annotation cases (METHOD.md §8 classifier validation): the initially failed
 * queries of a run exported as a CSV for human labelling (gold_type and annotator_id left empty),
 * and the labelled CSV read back as annotation rows for classifierValidation.
 * @module
 */
import { MeritError } from "../errors.ts";
import { PyRandom } from "../random.ts";
import type { Trajectory } from "../repair/trajectory.ts";
import type { AnnotationRow } from "./classifier-validation.ts";
import { csvObjects, formatCsv } from "./csv.ts";
import { pySample } from "./random-sample.ts";

/** Columns of the annotation CSV, in file order. `question` is context for the annotator only. */
export const ANNOTATION_COLUMNS = ["query_id", "db_id", "question", "predicted_sql", "error_message", "predicted_type", "gold_type", "annotator_id"] as const;

/** One initially failed query as the annotator sees it. */
export interface AnnotationCase {
  query_id: string;
  db_id: string;
  question: string;
  /** The initial (cached) SQL. */
  predicted_sql: string;
  /** DBMS error text of the initial attempt, "" when it executed. */
  error_message: string;
  /** Classifier type of the initial attempt (null → `Result Mismatch`, as in METHOD.md §8 breakdowns). */
  predicted_type: string;
}

/**
 * The initially failed queries of a run in ascending source_index order (the sampling population).
 * `questions` maps query_id → question text; a query without one is an error (wrong dataset).
 */
export function failedCases(trajectories: readonly Trajectory[], questions: ReadonlyMap<string, string>): AnnotationCase[] {
  return trajectories
    .filter((t) => !t.initial_correct)
    .sort((x, y) => x.source_index - y.source_index)
    .map((t) => {
      const question = questions.get(t.query_id);
      if (question === undefined) throw new MeritError(`annotate: query ${t.query_id} (${t.db_id}) is not in the dataset's examples; pass the data directory the run used (--data-dir)`);
      return {
        query_id: t.query_id,
        db_id: t.db_id,
        question,
        predicted_sql: t.attempts[0],
        error_message: t.db_errors[0] ?? "",
        predicted_type: t.error_types[0] ?? "Result Mismatch",
      };
    });
}

/**
 * `n` cases drawn as CPython's `random.Random(seed).sample(cases, n)` (in selection order), so the
 * sample is reproducible from the seed and the source-ordered population alone.
 */
export function sampleCases(cases: readonly AnnotationCase[], n: number, seed: number): AnnotationCase[] {
  if (n > cases.length) throw new MeritError(`annotate: --sample ${n} but the run has only ${cases.length} initially failed queries; sample at most ${cases.length}`);
  return pySample(new PyRandom(seed), cases, n);
}

/** The CSV to hand to annotators: header + one row per case, gold_type and annotator_id empty. */
export function casesCsv(cases: readonly AnnotationCase[]): string {
  return formatCsv([[...ANNOTATION_COLUMNS], ...cases.map((c) => [c.query_id, c.db_id, c.question, c.predicted_sql, c.error_message, c.predicted_type, "", ""])]);
}

/**
 * Read a labelled annotation CSV (any column order; extra columns such as `question` are ignored)
 * into annotation rows. Every row needs a gold_type and an annotator_id; a case labelled by two
 * annotators appears as two rows.
 */
export function goldLabelRows(text: string, file: string): AnnotationRow[] {
  const { header, rows } = csvObjects(text, file);
  const needed = ANNOTATION_COLUMNS.filter((c) => c !== "question");
  const missing = needed.filter((c) => !header.includes(c));
  if (missing.length > 0) throw new MeritError(`${file}: missing column(s) ${missing.join(", ")}; start from the CSV \`merit annotate\` writes`);
  return rows.map((r, i) => {
    for (const c of ["query_id", "db_id", "predicted_type", "gold_type", "annotator_id"] as const) {
      if (r[c].trim() === "") throw new MeritError(`${file}: record ${i + 2} (query ${r.query_id || "?"}) has an empty ${c}; label every case or delete its row`);
    }
    return {
      query_id: r.query_id,
      db_id: r.db_id,
      predicted_sql: r.predicted_sql,
      error_message: r.error_message,
      predicted_type: r.predicted_type,
      gold_type: r.gold_type.trim(),
      annotator_id: r.annotator_id.trim(),
    };
  });
}
