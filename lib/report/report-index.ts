/**
 * Report stage, pure core (METHOD.md §8): turns read runs into the page's columnar index — the run
 * list, the unique queries (sorted by dataset then numeric id, grouped into episode chunks) and one
 * row per episode sorted by query, method, seed and run label.
 * @module
 */
import { MeritError } from "../errors.ts";
import { ATTEMPT_STATUSES } from "../oracle/types.ts";
import { ERROR_TYPES, type Trajectory } from "../repair/trajectory.ts";
import { memoryGrowth } from "./memory-growth.ts";
import type { QueryColumns, ReportIndex, ReportRun, RowColumns } from "./report-data.ts";
import type { QueryText } from "./query-context.ts";
import type { RunInput } from "./run-reader.ts";

/** Oracle statuses in the order of their codes (METHOD.md §2.6). */
export const STATUSES = ATTEMPT_STATUSES;

/** Where each episode sits: the row number and the trajectory, for the chunk builder. */
export interface PlacedEpisode {
  row: number;
  run: number;
  query: number;
  trajectory: Trajectory;
}

export interface BuiltIndex {
  index: ReportIndex;
  /** Episodes in row order. */
  episodes: PlacedEpisode[];
}

export interface IndexOptions {
  title: string;
  /** Queries per episode chunk (a chunk holds every method and seed of its queries). */
  chunkQueries: number;
  /** Question text per "dataset/query_id" ("" when unknown). */
  queryText: (dataset: string, queryId: string) => QueryText | undefined;
  warnings: string[];
}

/** Compares query ids numerically when both are integers (Spider/BIRD ids), else as strings. */
export function compareIds(a: string, b: string): number {
  const x = Number(a);
  const y = Number(b);
  if (Number.isInteger(x) && Number.isInteger(y) && x !== y) return x - y;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Builds the index of `runs` (each must hold trajectories of a single dataset, method and seed). */
export function buildIndex(runs: readonly RunInput[], opts: IndexOptions): BuiltIndex {
  if (!Number.isInteger(opts.chunkQueries) || opts.chunkQueries < 1) throw new RangeError(`chunkQueries must be a positive integer, got ${opts.chunkQueries}`);
  const reportRuns: ReportRun[] = runs.map((r) => {
    const t = r.trajectories[0];
    return { label: r.label, dataset: t.dataset, method: t.method, seed: t.stream_seed, hasMemory: r.memory !== null };
  });
  const datasets = [...new Set(reportRuns.map((r) => r.dataset))].sort();

  const queryKeys = new Map<string, { dataset: string; id: string; db: string }>();
  for (const r of runs) for (const t of r.trajectories) queryKeys.set(`${t.dataset}/${t.query_id}`, { dataset: t.dataset, id: t.query_id, db: t.db_id });
  const sortedQueries = [...queryKeys.values()].sort((a, b) => (a.dataset !== b.dataset ? (a.dataset < b.dataset ? -1 : 1) : compareIds(a.id, b.id)));
  const queries: QueryColumns = { dataset: [], id: [], db: [], question: [], chunk: [] };
  const queryIndex = new Map<string, number>();
  sortedQueries.forEach((q, i) => {
    queryIndex.set(`${q.dataset}/${q.id}`, i);
    queries.dataset.push(datasets.indexOf(q.dataset));
    queries.id.push(q.id);
    queries.db.push(q.db);
    queries.question.push(opts.queryText(q.dataset, q.id)?.question ?? "");
    queries.chunk.push(Math.floor(i / opts.chunkQueries));
  });

  const placed: Omit<PlacedEpisode, "row">[] = [];
  runs.forEach((r, run) => {
    for (const t of r.trajectories) placed.push({ run, query: queryIndex.get(`${t.dataset}/${t.query_id}`) as number, trajectory: t });
  });
  const rank = (p: Omit<PlacedEpisode, "row">) => reportRuns[p.run];
  placed.sort((a, b) => {
    if (a.query !== b.query) return a.query - b.query;
    const x = rank(a);
    const y = rank(b);
    if (x.method !== y.method) return x.method < y.method ? -1 : 1;
    if (x.seed !== y.seed) return x.seed - y.seed;
    return x.label < y.label ? -1 : x.label > y.label ? 1 : a.run - b.run;
  });

  const rows: RowColumns = { run: [], query: [], initial: [], final: [], failure: [], failureMask: [], initialCorrect: [], finalCorrect: [], steps: [], tokens: [], initialTokensKnown: [], position: [] };
  const statusCode = (s: string) => (STATUSES as readonly string[]).indexOf(s);
  // METHOD.md §3's types in their order, then any classify hook's labels present, sorted (the
  // explorer's failure filter is a bit mask: at most 31 labels, which checkHooks' cap keeps).
  const present = new Set(placed.flatMap((p) => p.trajectory.error_types.filter((e): e is string => e !== null)));
  const errorTypes = [...ERROR_TYPES, ...[...present].filter((t) => !(ERROR_TYPES as readonly string[]).includes(t)).sort()];
  if (errorTypes.length > 31) throw new MeritError(`the runs hold ${errorTypes.length} failure labels; the report's explorer filters at most 31 (report fewer runs at once)`);
  const typeCode = (s: string | null) => (s === null ? -1 : errorTypes.indexOf(s));
  const episodes = placed.map((p, row) => {
    const t = p.trajectory;
    rows.run.push(p.run);
    rows.query.push(p.query);
    rows.initial.push(statusCode(t.statuses[0]));
    rows.final.push(statusCode(t.statuses[t.statuses.length - 1]));
    rows.failure.push(typeCode(t.error_types[0]));
    rows.failureMask.push(t.error_types.reduce((mask, e) => (e === null ? mask : mask | (1 << typeCode(e))), 0));
    rows.initialCorrect.push(t.initial_correct ? 1 : 0);
    rows.finalCorrect.push(t.final_correct ? 1 : 0);
    rows.steps.push(t.repair_steps);
    rows.tokens.push(t.accounting.total_tokens);
    rows.initialTokensKnown.push(t.initial_tokens_known ? 1 : 0);
    rows.position.push(t.stream_position);
    return { ...p, row };
  });

  const growth = runs.flatMap((r, run) => (r.memory === null ? [] : [{ run, ...memoryGrowth(r.memory) }]));
  const chunkCount = sortedQueries.length === 0 ? 0 : Math.floor((sortedQueries.length - 1) / opts.chunkQueries) + 1;
  const index: ReportIndex = {
    format: "merit-report-v1",
    title: opts.title,
    datasets,
    statuses: [...STATUSES],
    errorTypes,
    runs: reportRuns,
    queries,
    rows,
    growth,
    chunkCount,
    warnings: opts.warnings,
  };
  return { index, episodes };
}
