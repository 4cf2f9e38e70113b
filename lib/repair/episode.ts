/**
 * Repair stage, one episode (METHOD.md §6.1–6.2, §6.5), read top-down: attempt 0 is the cached
 * initial SQL (re-scored online and checked against its cached label); then, while the method
 * repairs, the last attempt does not stop the loop and fewer than K repairs were made: the memory's
 * section (lib/repair/episode-memory.ts), the repair prompt, one greedy generation, the extracted
 * SQL scored — and after every failed attempt the method's step (Reflexion's `reflect()` is one).
 * Whether an attempt is accepted, what the agent is shown and when the loop stops are the feedback
 * regime's (lib/repair/feedback-step.ts); what the hooks may read is built from the method's declared
 * sight (lib/methods/sight.ts); every model call is accounted by lib/repair/episode-calls.ts. A note
 * memory writes once the episode is final; the episode never writes memory itself (the run does,
 * after committing the trajectory).
 * @module
 */

import type { DatasetName, Example } from "../data/types.ts";
import { MeritError } from "../errors.ts";
import type { ChatBackend, Embedder } from "../llm/types.ts";
import { episodeId, type FinishedEpisode } from "../memory/finalize.ts";
import { extractSql } from "../oracle/extract-sql.ts";
import type { Verdict } from "../oracle/oracle.ts";
import type { FeedbackRegime, Status } from "../oracle/types.ts";
import { repairPrompt, type PromptAttempt } from "../prompts.ts";
import type { RetrievalLogRecord } from "../retrieval/retrieval-log.ts";
import { DEFAULT_FEEDBACK_NOISE, getFeedback } from "../methods/feedback.ts";
import { attemptViewFor } from "../methods/sight.ts";
import { type AttemptView, type Note, type QuestionView } from "../methods/hooks.ts";
import { callHook, deepFreeze, DEFAULT_HOOK_DEADLINE_S } from "../methods/hook-guard.ts";
import type { MethodSpec } from "../methods/method.ts";
import { countingEmbedder } from "./embedding-count.ts";
import { EpisodeCalls, type CallRecord, type PromptRecord } from "./episode-calls.ts";
import { episodeMemoryOf, type EpisodeMemory, type HookCalling, type RetrievedSection, type WrittenNotes } from "./episode-memory.ts";
import { proposeRepair, type ExecuteSql } from "./proposal.ts";
import { judgeAttempt } from "./feedback-step.ts";
import { hookClassifier, initialTypeOf, InitialLabelMismatchError, toAttempt, type AttemptRecord } from "./scored-attempt.ts";

export { countEmbeddingTokens, countingEmbedder } from "./embedding-count.ts";
export { InitialLabelMismatchError } from "./scored-attempt.ts";

/**
 * Attempt 0 as the episode reads it (METHOD.md §6.6, §6.5): the cached initial SQL, the label it was
 * cached with and its token accounting. A record of the initial cache (lib/experiment/initial-cache.ts)
 * has these fields and is passed as it is; the episode loop knows nothing else of that file's schema.
 */
export interface InitialAttempt {
  /** Canonical single statement, or "" (METHOD.md §2.7). */
  initial_sql: string;
  /** The cached label; the oracle's online verdict must agree with it, whatever the feedback regime. */
  execution_status: Status;
  /** SHA-256 of the initial prompt; null when the SQL came from a predictions file. */
  prompt_hash: string | null;
  /** Token counts from token ids; null = unknown (imported predictions). */
  prompt_tokens: number | null;
  output_tokens: number | null;
}

/** Everything that identifies one episode of one run. */
export interface EpisodeSpec {
  dataset: DatasetName;
  method: MethodSpec;
  streamSeed: number;
  streamPosition: number;
  example: Example;
  schema: string;
  initial: InitialAttempt;
  /** A registered feedback regime (lib/methods/feedback.ts). */
  feedbackRegime: FeedbackRegime;
  /** `noisy_oracle`'s flip probability (config `feedback_noise`; default 0.1). */
  feedbackNoise?: number;
  /** K (METHOD.md §6.1: 7). */
  maxRepairSteps: number;
  maxOutputTokens: number;
  /** The user's template folder (config `prompts_dir`); absent = the kit's prompts/. */
  promptsDir?: string;
  /** Seconds a hook may spend per call outside its model calls (config `hook_deadline_s`; lib/methods/hook-guard.ts). */
  hookDeadlineS?: number;
}

/** The seams an episode calls (STYLE.md §2.2); tests pass scripted doubles. */
export interface EpisodeServices {
  backend: ChatBackend;
  /** The confirmed oracle for this run's dataset and protocol. */
  score(example: Example, sql: string): Promise<Verdict>;
  /**
   * The method's memory over the run's store (lib/experiment/run-memory.ts; `episodeMemoryOf` in
   * lib/repair/episode-memory.ts). Without one, a note memory starts empty and MERIT's memory is refused.
   */
  memory?: EpisodeMemory;
  /** The run's embedder (MERIT's memory: query embeddings; counted per episode). */
  embedder?: Embedder;
  /** Read-only execution of a candidate on the example's database (a propose hook's `execute`): rows, never a verdict. */
  execute?: ExecuteSql;
}

export interface EpisodeResult {
  attempts: AttemptRecord[];
  /** Every reflection and repair prompt, in call order. */
  prompts: PromptRecord[];
  calls: CallRecord[];
  reflections: string[];
  /** Retrieved entry ids per repair step ([] for memoryless steps). */
  retrieved: string[][];
  retrievalLog: RetrievalLogRecord[];
  /** Query embeddings computed during retrieval. */
  queryEmbeddings: number;
  /** Input to memory finalization (METHOD.md §4.3). */
  finished: FinishedEpisode;
  /** The notes a memory hook wrote once the episode was final (stamped); null for a method without one. */
  notes: Note[] | null;
  /** Ids of earlier notes the memory hook's write superseded or retired ([] for none). */
  retired: string[];
  /** Texts the hooks embedded (billed as embedding calls). */
  hookEmbeddings: number;
  /**
   * Tokens of every text embedded in the episode (retrieval queries, hooks' texts; METHOD.md §12.1, "Cost"),
   * counted by the embedder's token counter whether the vector was cached or computed; null when a
   * text was embedded by an embedder that cannot count (Embedder.tokenCounts).
   */
  embeddingTokens: number | null;
  /**
   * Wall time (ms) of this episode's retrieval steps (query embedding, ranking, a memory hook's
   * retrieve with its calls) and of its memory hook's write (with its calls). Measured, so never part
   * of the trajectory (a replay must reproduce trajectories byte for byte); the run sums it into
   * manifest.json `timing`.
   */
  wallMs: { retrieval: number; memory: number };
  /** The type of an initial failure the feedback accepted (so `attempts[0].errorType` is null); null otherwise. */
  initialFailureType: string | null;
  /** The memory write's own verdict of the episode (a judging method's `verdict`); null when it gave none. */
  judgedSuccess: boolean | null;
}

/** Runs one episode to completion. */
export async function runEpisode(spec: EpisodeSpec, services: EpisodeServices): Promise<EpisodeResult> {
  const { example, method } = spec;
  const { hooks } = method;
  const attempts: AttemptRecord[] = [];
  const reflections: string[] = [];
  const retrieved: string[][] = [];
  const retrievalLog: RetrievalLogRecord[] = [];
  const wallMs = { retrieval: 0, memory: 0 };
  let queryEmbeddings = 0;
  let embeddingTokens: number | null = 0;
  // the run's embedder with every text it embeds for this episode counted (retrieval's query, a hook's texts)
  const embedder: Embedder | undefined = services.embedder && countingEmbedder(services.embedder, (n) => (embeddingTokens = embeddingTokens === null || n === null ? null : embeddingTokens + n));
  const regime = getFeedback(spec.feedbackRegime);
  // A sampled call's step is the number of attempts so far (its seed: stream seed, query, step, kind, index).
  const calls = new EpisodeCalls({ method: method.name, queryId: example.id, hooks, regime, backend: services.backend, embedder, maxRepairSteps: spec.maxRepairSteps, maxOutputTokens: spec.maxOutputTokens, streamSeed: spec.streamSeed, step: () => attempts.length });
  const view: QuestionView = { dataset: spec.dataset, queryId: example.id, dbId: example.dbId, question: example.question, evidence: example.evidence, schema: spec.schema, streamPosition: spec.streamPosition };
  // Every hook call: one line naming method and hook when it fails, and a deadline (lib/methods/hook-guard.ts).
  const calling: HookCalling = { site: (hook, name) => ({ method: method.name, hook, name, queryId: example.id }), model: calls.model, deadlineS: spec.hookDeadlineS ?? DEFAULT_HOOK_DEADLINE_S };
  const classify = hooks.classify ? hookClassifier(method.name, hooks.classify, view) : undefined;
  const memory = services.memory ?? episodeMemoryOf(method, {});
  // What the hooks read, built from the method's declared sight: the oracle's verdict only for `oracle`.
  const attemptView = (a: AttemptRecord): AttemptView => attemptViewFor(method.sight, { sql: a.sql, verdict: a.verdict, dbError: a.dbError, executed: a.predictedExecOk, errorType: a.errorType, rowsPreview: a.rowsPreview, confirmedCorrect: a.confirmedCorrect });
  const asPrompt = (a: AttemptRecord): PromptAttempt => ({ sql: a.sql, status: a.status, dbError: a.dbError });
  const last = () => attempts[attempts.length - 1];

  const score = async (sql: string): Promise<AttemptRecord> => {
    const verdict = await services.score(example, sql);
    checkScorable(example.id, verdict, attempts.length === 0 ? spec.initial.execution_status : null);
    // What the feedback regime makes of it: acceptance, what the agent is shown, whether the loop stops.
    const judged = await judgeAttempt(regime, verdict, { ...view, attempt: attempts.length, streamSeed: spec.streamSeed, sql, noise: spec.feedbackNoise ?? DEFAULT_FEEDBACK_NOISE }, calls.model);
    return toAttempt(sql, verdict, judged, classify);
  };
  // After a failed attempt: the method's step (Reflexion's reflection), unless no repair follows and the step does not ask to run then.
  const step = async () => {
    const stepHook = hooks.step;
    if (!stepHook || (attempts.length - 1 >= spec.maxRepairSteps && !(stepHook.afterLast && attempts.length > 1))) return;
    const shown = attempts.map((a) => ({ sql: a.sql, status: a.status, dbError: a.dbError, errorType: a.errorType }));
    const note = await callHook(calling.site("step.afterFailure", stepHook.name), calls.model, calling.deadlineS, (m) => stepHook.afterFailure(deepFreeze({ ...view, attempts: attempts.map(attemptView), shown, notes: [...reflections], promptsDir: spec.promptsDir }), m));
    if (note === null) return;
    if (typeof note !== "string") throw new MeritError(`method "${method.name}": step "${stepHook.name}" returned ${JSON.stringify(note)}; afterFailure must return a string or null`);
    reflections.push(note.trim());
  };

  // Attempt 0: the cached initial SQL, never regenerated (its call is accounted first, before any call a feedback regime makes to judge it).
  calls.initial(spec.initial);
  attempts.push(await score(spec.initial.initial_sql));
  const initialFailureType = initialTypeOf(attempts[0], classify);
  if (method.repairs && !last().stops) await step();

  while (method.repairs && !last().stops && attempts.length - 1 < spec.maxRepairSteps) {
    const iteration = attempts.length; // 1-based repair step
    const currentErrorType = last().errorType ?? "Unknown";
    let section: Pick<RetrievedSection, "positives" | "negatives" | "notesText"> = { positives: [], negatives: [], notesText: "" };
    if (memory) {
      const start = performance.now();
      const got = await memory.retrieve({ view, iteration, last: last(), attempts: attempts.map(attemptView) }, calling, embedder);
      wallMs.retrieval += performance.now() - start;
      retrieved.push(got.ids);
      retrievalLog.push(got.log);
      queryEmbeddings += got.queryEmbeddings;
      section = got;
    } else {
      retrieved.push([]);
    }
    const question = { dataset: spec.dataset, schema: spec.schema, question: example.question, evidence: example.evidence };
    const prompt = repairPrompt({ ...question, positives: section.positives, negatives: section.negatives, reflections, attempts: attempts.map(asPrompt), currentErrorType, memoryNotes: section.notesText }, spec.promptsDir);
    const output = await calls.generate("repair", prompt);
    // A propose hook picks the SQL scored at this step (lib/repair/proposal.ts); without one, the greedy repair's.
    const proposed = hooks.propose ? await proposeRepair({ hook: hooks.propose, site: calling.site("propose.propose", hooks.propose.name), model: calls.model, deadlineS: calling.deadlineS, example, execute: services.execute, request: { ...view, iteration, attempts: attempts.map(attemptView), prompt, greedy: extractSql(output.text) } }) : null;
    const attempt = await score(proposed ? proposed.sql : extractSql(output.text));
    if (proposed) attempt.dbExecutions += proposed.executions;
    attempts.push(attempt);
    if (!last().stops) await step();
  }

  const finished: FinishedEpisode = {
    dataset: spec.dataset,
    method: method.name,
    streamOrderSeed: spec.streamSeed,
    streamPosition: spec.streamPosition,
    queryId: example.id,
    dbId: example.dbId,
    question: example.question,
    schema: spec.schema,
    feedbackRegime: spec.feedbackRegime,
    attempts,
    retrievedEntryIds: retrieved.length > 0 ? retrieved[retrieved.length - 1] : [],
  };
  // The memory writes once the episode is final (a note memory's notes; MERIT's entry is finalized by
  // the run); what it writes is stored only after the run commits this episode.
  let written: WrittenNotes = { notes: null, retired: [], verdict: null };
  if (memory) {
    const start = performance.now();
    const source = { queryId: example.id, dbId: example.dbId, streamPosition: spec.streamPosition, episodeId: episodeId(spec.dataset, method.name, spec.streamSeed, spec.streamPosition, example.id) };
    written = await memory.write({ ...view, attempts: attempts.map(attemptView), success: last().stops, reflections: [...reflections], retrieved: retrieved.map((r) => [...r]) }, source, calling);
    wallMs.memory += performance.now() - start;
  }
  // Every declared kind was called only in the episodes its scope names (`per`), which the plan relies on.
  calls.checkScopes({ initiallyAccepted: attempts[0].stops, finallyAccepted: last().stops });
  return { attempts, prompts: calls.prompts, calls: calls.calls, reflections, retrieved, retrievalLog, queryEmbeddings, finished, notes: written.notes, retired: written.retired, hookEmbeddings: calls.hookEmbeddings, embeddingTokens, wallMs, initialFailureType, judgedSuccess: written.verdict };
}

/**
 * Refuses a verdict the episode cannot go on from: the gold ran past the SQL deadline, the query cannot
 * be scored, or (attempt 0, `cached` given) the cached initial label disagrees with the oracle — a
 * stale cache is refused whatever the regime shows.
 */
function checkScorable(queryId: string, verdict: Verdict, cached: Status | null): void {
  if (verdict.goldTimedOut) {
    throw new MeritError(`query ${queryId}: its gold query ran past the SQL deadline (sql_timeout_s in the config), so the query cannot be scored; raise sql_timeout_s (default 30 s) and start the run again in a fresh --out`);
  }
  if (verdict.status === "NO_DATABASE" || verdict.status === "GOLD_ERROR") {
    throw new MeritError(`query ${queryId} cannot be scored (${verdict.status}: ${verdict.dbError}); it should have been dropped from the stream`);
  }
  if (cached !== null && verdict.status !== cached) throw new InitialLabelMismatchError(queryId, cached, verdict.status);
}
