/**
 * Report stage (METHOD.md §8, §9): the compact data the static HTML report ships — a columnar index
 * of every episode (one row per run × query) loaded with the page, and episode details split into
 * chunks that the page loads on demand through <script> tags (fetch() of local files fails under file://).
 * Field names are what the browser code (assets/viewer.js) reads.
 * @module
 */

/** One run directory as the page lists it. */
export interface ReportRun {
  /** Directory name relative to the common parent of all run directories, e.g. `merit-s0`. */
  label: string;
  dataset: string;
  method: string;
  seed: number;
  /** The run has a memory/ folder (memory methods). */
  hasMemory: boolean;
}

/** Unique queries, one column per field; index i is the query the rows point at. */
export interface QueryColumns {
  /** Index into ReportIndex.datasets. */
  dataset: number[];
  id: string[];
  db: string[];
  question: string[];
  /** Episode chunk number holding every episode of this query. */
  chunk: number[];
}

/**
 * One row per episode, one column per field (≈ 60k rows on a full grid, so arrays of small ints).
 * Status codes index ReportIndex.statuses; failure codes index ReportIndex.errorTypes (−1 = none).
 */
export interface RowColumns {
  /** Index into ReportIndex.runs. */
  run: number[];
  /** Index into QueryColumns. */
  query: number[];
  /** Status code of attempt 0 (the cached initial SQL). */
  initial: number[];
  /** Status code of the last attempt. */
  final: number[];
  /** Failure type code of attempt 0, −1 when it was CORRECT. */
  failure: number[];
  /** Bit i set when some attempt had failure type errorTypes[i]. */
  failureMask: number[];
  /** 1 when initial_correct, else 0. */
  initialCorrect: number[];
  /** 1 when final_correct, else 0. */
  finalCorrect: number[];
  /** Repair steps (attempts − 1). */
  steps: number[];
  /** accounting.total_tokens of the episode. */
  tokens: number[];
  /** 1 when the initial call's tokens are known, 0 for imported initial predictions (the cache records null; shown "n/a"). */
  initialTokensKnown: number[];
  /** 0-based stream position in its run. */
  position: number[];
}

/** Memory size after each stream position of one run (METHOD.md §4): entries counted at their first observation. */
export interface MemoryGrowth {
  run: number;
  /** Stream positions where the memory changed, ascending. */
  position: number[];
  /** Positive entries in memory after that position. */
  positive: number[];
  /** Negative entries in memory after that position. */
  negative: number[];
}

/**
 * The page's index. `report-data/index.js` assigns it to window.MERIT_REPORT with `rows` encoded by
 * column-codec.ts (assets/filters.js `decodeRows` restores the integer columns).
 */
export interface ReportIndex {
  format: "merit-report-v1";
  title: string;
  datasets: string[];
  statuses: string[];
  errorTypes: string[];
  runs: ReportRun[];
  queries: QueryColumns;
  rows: RowColumns;
  growth: MemoryGrowth[];
  chunkCount: number;
  /** Problems met while reading (missing dataset files, runs without retrieval logs), shown on the page. */
  warnings: string[];
}

/** One retrieved memory at one repair step, joined with its entry (retrieval_log.jsonl + memory/). */
export interface RetrievedMemory {
  id: string;
  polarity: string;
  errorType: string;
  sourceDb: string;
  sourcePosition: number;
  dense: number;
  bm25: number;
  typeMatch: number;
  final: number;
}

/** The retrieval of one repair step (METHOD.md §5.7). */
export interface RetrievalStep {
  step: number;
  errorType: string;
  legalPool: number;
  typedPool: number;
  fallback: boolean;
  typeFilter: boolean;
  denseSearch: string;
  hits: RetrievedMemory[];
}

/** Everything the episode view shows about one (run, query) beyond the index row. */
export interface EpisodeDetail {
  /** Row number in ReportIndex.rows. */
  row: number;
  attempts: string[];
  statuses: string[];
  dbErrors: (string | null)[];
  errorTypes: (string | null)[];
  callKinds: string[];
  promptTokens: number[];
  outputTokens: number[];
  truncatedTokens: number[];
  /** False for imported initial predictions: call 0's token counts are unknown (shown "n/a", not 0). */
  initialTokensKnown: boolean;
  reflections: string[];
  /** One element per repair step of a memory method; [] otherwise. */
  retrieval: RetrievalStep[];
}

/** What a memory entry looked like at the end of the run (counts are final, not as of retrieval time). */
export interface EntrySummary {
  sourceQuery: string;
  question: string;
  delta: string;
  outcome: string;
  dbError: string | null;
  confirmations: number;
  successes: number;
  failures: number;
}

/** One chunk file (`report-data/episodes-NNN.js` calls window.meritReportChunk(n, payload)). */
export interface EpisodeChunk {
  episodes: EpisodeDetail[];
  /** BIRD evidence per query index ("" for Spider). */
  evidence: Record<number, string>;
  /** Rendered schema text (METHOD.md §1.3) per "dataset/db_id". */
  schemas: Record<string, string>;
  /** Entries retrieved by this chunk's episodes, per run index then entry id. */
  entries: Record<number, Record<string, EntrySummary>>;
}
