/**
 * The one module a plugin file imports (README "Write a follow-up study"; DESIGN.md §1): every
 * registry a study can add to — methods (hook sets), rankers for MERIT's memory, datasets, SQL
 * executors, inference engines — the types their entries implement, and the bundled entries the
 * guides start from (`meritMemory`, `reflect`, `meritMethod`, `spider`, `bird`, `createExecutor`, `getEngine`;
 * test/foundation/readme-snippets.test.ts compiles those sections' snippets). A plugin file lives anywhere outside lib/
 * (`studies/NAME/`, `examples/`) and is loaded with `--plugin FILE.ts` or the config's `plugins`.
 * @module
 */
export { count, nonNegative, oneOf, registerMethod, registerAlias } from "./methods/index.ts";
/** The kit's hook factories: MERIT's memory (its args: `merit methods`), Reflexion's reflection step, a method with MERIT's memory, and the ranker registry MERIT's memory names its `ranker` from. */
export { meritMemory, meritMethod, MERIT_MEMORY_DEFAULTS, RANKERS, reflect } from "./methods/index.ts";
export type { EntryMemory, Factory, FactoryArgs, MethodDefinition, StepHook, StepState } from "./methods/index.ts";
/**
 * What a study reads back of a method: the equal-budget control's K (METHOD.md §13: K plus the most
 * calls its hooks declare), the most calls one declaration allows at a K (a `most` may follow K:
 * `{ per_repair: n, plus?: m }`), and the source a registered method declares (`citation`, and
 * `groundTruth`: whether its hooks read the oracle's verdict, from its declared sight; null for a method without hooks).
 */
export { budgetMatchedSteps, callMost, methodSource } from "./methods/index.ts";
export { MeritError } from "./errors.ts";
export type { DenseRows, PoolPlan, RankContext, RankedRow, Ranker, RankPool } from "./methods/index.ts";
/** Hooks over one episode (a classifier, a memory written after each episode, extra call kinds): lib/methods/hooks.ts. */
export { cosine, isSourceNote, MAX_EXECUTION_ROWS, MAX_NOTE_BYTES, topByCosine } from "./methods/hooks.ts";
export type { AttemptView, CallDeclaration, PerRepairBound, ClassifyHook, ClassifyInput, EpisodeView, ExecutionView, HookModel, HookReply, MemoryHook, MethodHooks, Note, NoteDraft, NotePolarity, NoteView, PickedNote, ProposeHook, ProposeRequest, ProposeTools, QuestionView, RetrieveRequest, RetrieveResult, SamplingModel, WriteResult } from "./methods/hooks.ts";
export { sampleSeed } from "./repair/proposal.ts";
/** How hooks are called (deadline, one-line failures) and what they are given: SQL rows JSON-safe (lib/methods/hook-guard.ts). */
export { DEFAULT_HOOK_DEADLINE_S, jsonRows } from "./methods/hook-guard.ts";
/** The deterministic classifier of METHOD.md §3 and its vocabulary, for a classify hook that refines it. */
export { classifyFailure, ERROR_TYPES } from "./classify.ts";
export type { ErrorType } from "./classify.ts";
export type { MemoryEntry, Polarity } from "./memory/entry.ts";
/** The rank helpers of METHOD.md §5.4 (Python rounding, min–max normalisation, the ranked order), for a ranker. */
export { compareRanked, minMaxNormalize, pyRound } from "./retrieval/rank.ts";
export { registerDataset } from "./data/dataset-registry.ts";
/** The bundled Spider and BIRD adapters a dataset plugin starts from: `registerDataset({ ...spider, name, title, layout })`. */
export { spider } from "./data/datasets/spider.ts";
export { bird } from "./data/datasets/bird.ts";
export type { DatasetAdapter, DatasetLayout, RecordFields, ScoringSpec } from "./data/adapter.ts";
export { registerExecutor, resultRows } from "./oracle/executor.ts";
/** A registered engine's executor (`createExecutor("sqlite", opts)`, the bundled sandbox), for an executor that wraps one. */
export { createExecutor } from "./oracle/executors.ts";
export type { ExecRequest, ExecResult, ExecutorOptions, SqlExecutor } from "./oracle/executor.ts";
export type { Rows, SqlValue } from "./oracle/types.ts";
/** The engine-independent worker pool (slots, FIFO queue, deadline kill-and-replace, crash replacement) an executor can run its engine in. */
export { ExecutorPool } from "./oracle/executor-pool.ts";
export type { ExecutorPoolOptions, PoolWorker, PoolWorkerEvents, WorkerJob, WorkerMessage } from "./oracle/executor-pool.ts";
/** The engine-independent statement rules (refusals, DQS fallback, caps) every executor applies; see sql-rules.mjs. */
export { collectRows, dqsToLiteral, DQS_ERROR, LEADING_KEYWORD, NOT_AUTHORIZED, OverCap, refusalOf, refusedKeyword } from "./oracle/sql-rules.mjs";
/** URL of sql-rules.mjs, for an executor whose worker thread or process imports the rules itself. */
export const SQL_RULES_URL: string = new URL("./oracle/sql-rules.mjs", import.meta.url).href;
export { getEngine, registerEngine } from "./llm/engines/index.ts";
/** Feedback regimes (what the agent is told about each attempt): lib/methods/feedback.ts. */
export { judgePrompt, noiseDraw, parseJudgeVerdict, registerFeedback, rowsPreview } from "./methods/feedback.ts";
export type { AcceptanceMeaning, FeedbackInput, FeedbackRegimeDef, ShowInput } from "./methods/feedback.ts";
/** What a method may read (`sight` in registerMethod): the agent's view, or the oracle's verdict too. */
export type { Sight } from "./methods/sight.ts";
export type { DecodingParams, EngineRequest, InferenceEngine } from "./llm/engine-request.ts";
