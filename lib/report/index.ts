/**
 * Report stage (METHOD.md §8, §9): the public surface of lib/report — the static HTML report and
 * trajectory explorer written by `merit report --html`.
 * @module
 */
export { writeHtmlReport, chunkFile, type HtmlReportOptions, type HtmlReportSummary } from "./html-report.ts";
export { buildIndex, compareIds, STATUSES, type BuiltIndex, type IndexOptions, type PlacedEpisode } from "./report-index.ts";
export { buildChunks, type ChunkContext } from "./episode-chunks.ts";
export { memoryGrowth } from "./memory-growth.ts";
export { pageHtml, tableHtml, escapeHtml, type PageOptions } from "./page-html.ts";
export { readJsonLines } from "../experiment/run-dir.ts";
export { readRun, type RunInput } from "./run-reader.ts";
export { loadDatasetContext, type DatasetContext, type QueryText } from "./query-context.ts";
export type * from "./report-data.ts";
