/**
 * Analysis stage (METHOD.md §8, §9): re-exports of metrics, aggregation, bootstrap, tables and
 * figures. Rendering (figure-render.ts) and DataFrames (table-frame.ts) are imported directly,
 * since they load vega/resvg and danfojs.
 * @module
 */
export * from "./aggregate.ts";
export * from "../repair/attempt-sql.ts";
export * from "./bootstrap.ts";
export * from "./classifier-validation.ts";
export * from "./figures.ts";
export * from "../experiment/run-metrics.ts";
export * from "./number-format.ts";
export * from "./run-summary.ts";
export * from "./table.ts";
export * from "./tables.ts";
export * from "./annotation-cases.ts";
export * from "./csv.ts";
export * from "./figure-failures.ts";
export * from "./memory-growth.ts";
export * from "./random-sample.ts";
export * from "./report-manifest.ts";
export * from "./run-alignment.ts";
export * from "./holm.ts";
export * from "./model-identity.ts";
export * from "./paper-comparison.ts";
export * from "./paper-layout.ts";
export * from "./power.ts";
export * from "./table-difficulty.ts";
export * from "./figure-power.ts";
export * from "./notebook.ts";
