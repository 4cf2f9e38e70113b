/**
 * Repair stage, one episode (METHOD.md §6.1–6.2, §6.5): attempt 0 is the cached initial SQL
 * (re-scored online and checked against its cached label); then, while the method repairs, the last
 * attempt is not terminal and fewer than K repairs were made: classify, retrieve (memory methods),
 * prompt, one greedy generation, extract SQL, score — with Reflexion's reflections where the method
 * asks for them. A method's hooks (lib/methods/hooks.ts) act here and nowhere else: its classifier
 * labels each failed attempt, its memory's `retrieve` picks notes from the eligible view before each
 * repair and its `write` runs once the episode is final, their model calls accounted under the kinds
 * they declare, each at its declared output limit. Whether an attempt is accepted, what the agent is
 * shown and when the loop stops are the feedback regime's (lib/repair/feedback-step.ts); what the
 * hooks may read is built from the method's declared sight (lib/methods/sight.ts). Returns the
 * trajectory, the retrieval log, the finished episode that memory
 * finalization reads and the hook's notes; it never writes memory itself (the run does, after
 * committing the trajectory).
 * @module
 */
import { classifyFailure } from "../classify.ts";
import type { DatasetName, Example } from "../data/types.ts";
import { MeritError } from "../errors.ts";
import { GenerationRefusedError } from "../llm/endpoint-pool.ts";
import type { ChatBackend, Embedder, GenerateResult, Sampling } from "../llm/types.ts";
import { failureContext, NULL_CLASSIFICATION_MEMORY_TYPE, type EpisodeAttempt, type FinishedEpisode } from "../memory/finalize.ts";
import type { MemoryStore } from "../memory/store.ts";
import { extractSql } from "../oracle/extract-sql.ts";
import type { Verdict } from "../oracle/oracle.ts";
import type { FeedbackRegime, Status } from "../oracle/types.ts";
import { extractReflection, promptHash, reflectionPrompt, repairPrompt, type PromptAttempt, type PromptMemory } from "../prompts.ts";
import type { RetrievalLogRecord } from "../retrieval/retrieval-log.ts";
import { DEFAULT_FEEDBACK_NOISE, getFeedback } from "../methods/feedback.ts";
import { attemptViewFor } from "../methods/sight.ts";
import { judgeAttempt, type Judged } from "./feedback-step.ts";
import { callMost, eligibleNotes, retrievedSection, scopeAllows, stampWrite, type AttemptView, type Note, type NoteView, type QuestionView, type SamplingModel } from "../methods/hooks.ts";
import { callHook, callHookSync, deepFreeze, DEFAULT_HOOK_DEADLINE_S, type HookSite } from "../methods/hook-guard.ts";
import { episodeId } from "../memory/finalize.ts";
import type { Retriever } from "../retrieval/retriever.ts";
import type { MethodSpec } from "../methods/index.ts";
import type { CallKind, ErrorType } from "./trajectory.ts";
import { EpisodeSampler, proposeRepair, type ExecuteSql } from "./proposal.ts";

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
  /** Memory methods only. */
  memory?: MemoryStore;
  retriever?: Retriever;
  embedder?: Embedder;
  /** A memory hook's notes written so far in this run (the episode shows its hook the eligible ones only). */
  notes?: readonly NoteView[];
  /** Read-only execution of a candidate for a propose hook (a run: its oracle's `execute`; lib/repair/proposal.ts). */
  execute?: ExecuteSql;
}

/** One LLM call as accounted (METHOD.md §6.5): a kit kind or a kind the method's hooks declare. */
export interface CallRecord {
  kind: CallKind | string;
  promptTokens: number;
  outputTokens: number;
  truncatedPromptTokens: number;
  cached: boolean;
  promptHash: string | null;
  /** The server's message when it refused this generation deterministically (issue 16 §2), else null. */
  failure: string | null;
  /** A call of a declared kind (a hook's, a judging regime's) that generated up to its output limit: its text may be cut. */
  outputTruncated: boolean;
}

/** One scored attempt. */
export interface AttemptRecord extends EpisodeAttempt {
  /** The oracle's verdict (for the record and the tables; the agent and its hooks see what the regime shows). */
  confirmedCorrect: boolean;
  /** The classifier's type (METHOD.md §3), or the method's classify hook's label. */
  errorType: ErrorType | string | null;
  dbExecutions: number;
  /** Whether the feedback regime accepted it. */
  accepted: boolean;
  /** Whether the loop stops after it (the regime's `stops`; by default, it was accepted). */
  stops: boolean;
  /** The outcome a method's hooks read (the regime's `verdict`: what the agent observed). */
  verdict: string;
  /** The bounded preview of its result rows ("" when it did not execute). */
  rowsPreview: string;
}

/** A prompt sent in this episode (logged for the causal audit). */
export interface PromptRecord {
  kind: CallKind | string;
  hash: string;
  text: string;
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

/** The cached initial label disagrees with the online oracle: the cache is stale for this data. */
export class InitialLabelMismatchError extends MeritError {
  constructor(queryId: string, cached: string, online: string) {
    super(`initial cache label of query ${queryId} is ${cached} but the oracle now says ${online}; rebuild the cache with \`merit initial\` for this data and protocol`);
    this.name = "InitialLabelMismatchError";
  }
}

/** Runs one episode to completion. */
export async function runEpisode(spec: EpisodeSpec, services: EpisodeServices): Promise<EpisodeResult> {
  const { example, method } = spec;
  const attempts: AttemptRecord[] = [];
  const calls: CallRecord[] = [];
  const prompts: PromptRecord[] = [];
  const reflections: string[] = [];
  const retrieved: string[][] = [];
  const retrievalLog: RetrievalLogRecord[] = [];
  let queryEmbeddings = 0;
  let hookEmbeddings = 0;
  let embeddingTokens: number | null = 0;
  // the run's embedder with every text it embeds for this episode counted (retrieval's query, a hook's texts)
  const embedder: Embedder | undefined = services.embedder && countingEmbedder(services.embedder, (n) => (embeddingTokens = embeddingTokens === null || n === null ? null : embeddingTokens + n));
  const wallMs = { retrieval: 0, memory: 0 };
  const hooks = method.hooks;
  const view: QuestionView = { dataset: spec.dataset, queryId: example.id, dbId: example.dbId, question: example.question, evidence: example.evidence, schema: spec.schema, streamPosition: spec.streamPosition };
  const classify = hooks.classify ? hookClassifier(method.name, hooks.classify, view) : undefined;
  // Every hook call: one line naming method and hook when it fails, and a deadline (lib/methods/hook-guard.ts).
  const site = (hook: string, name: string): HookSite => ({ method: method.name, hook, name, queryId: example.id });
  const deadlineS = spec.hookDeadlineS ?? DEFAULT_HOOK_DEADLINE_S;
  const regime = getFeedback(spec.feedbackRegime);

  const score = async (sql: string): Promise<AttemptRecord> => {
    const verdict = await services.score(example, sql);
    if (verdict.goldTimedOut) {
      throw new MeritError(`query ${example.id}: its gold query ran past the SQL deadline (sql_timeout_s in the config), so the query cannot be scored; raise sql_timeout_s (default 30 s) and start the run again in a fresh --out`);
    }
    if (verdict.status === "NO_DATABASE" || verdict.status === "GOLD_ERROR") {
      throw new MeritError(`query ${example.id} cannot be scored (${verdict.status}: ${verdict.dbError}); it should have been dropped from the stream`);
    }
    // The initial SQL's cached label is the oracle's: a stale cache is refused whatever the regime shows.
    if (attempts.length === 0 && verdict.status !== spec.initial.execution_status) {
      throw new InitialLabelMismatchError(example.id, spec.initial.execution_status, verdict.status);
    }
    // What the feedback regime makes of it: acceptance, what the agent is shown, whether the loop stops.
    const judged = await judgeAttempt(regime, verdict, { ...view, attempt: attempts.length, streamSeed: spec.streamSeed, sql, noise: spec.feedbackNoise ?? DEFAULT_FEEDBACK_NOISE }, hookModel);
    return toAttempt(sql, verdict, judged, classify);
  };

  const question = { dataset: spec.dataset, schema: spec.schema, question: example.question, evidence: example.evidence };
  // The loop stops where the regime says (by default: on an accepted attempt).
  const terminal = (a: AttemptRecord) => a.stops;
  const asPrompt = (a: AttemptRecord): PromptAttempt => ({ sql: a.sql, status: a.status, dbError: a.dbError });
  // `limit`: a declared kind's output limit; the kit's kinds (reflection, repair) generate at the run's max_output_tokens.
  const generate = async (kind: string, prompt: string, limit?: number, sampling?: Sampling): Promise<GenerateResult> => {
    const hash = promptHash(prompt);
    prompts.push({ kind, hash, text: prompt });
    let result: GenerateResult;
    let failure: string | null = null;
    try {
      result = await services.backend.generate({ prompt, maxOutputTokens: limit ?? spec.maxOutputTokens, ...(sampling ? { sampling } : {}) });
    } catch (error) {
      // A server's deterministic refusal is a failed generation with no text (so no SQL: the attempt
      // scores as an execution error), recorded with the server's message; the episode goes on.
      if (!(error instanceof GenerationRefusedError)) throw error;
      failure = error.reason;
      result = { text: "", promptTokens: error.promptTokens, outputTokens: 0, truncatedPromptTokens: error.truncatedPromptTokens, cached: false };
    }
    calls.push({
      kind,
      promptTokens: result.promptTokens,
      outputTokens: result.outputTokens,
      truncatedPromptTokens: result.truncatedPromptTokens,
      cached: result.cached,
      promptHash: hash,
      failure,
      // Recorded for the declared kinds, whose text a hook keeps as state (a repair's truncation shows as output_tokens = max_output_tokens).
      outputTruncated: limit !== undefined && failure === null && result.outputTokens >= limit,
    });
    return result;
  };
  // The model as the method's hooks (and a judging feedback regime) see it: their declared kinds only —
  // never the kit's initial_cache, reflection or repair — at most their declared count per episode.
  const declared = new Set([...Object.keys(hooks.calls ?? {}), ...(regime.call ? [regime.call.kind] : [])]);
  const made = new Map<string, number>();
  const mostOf = (kind: string): number | undefined => (regime.call?.kind === kind ? regime.call.perAttempt * (spec.maxRepairSteps + 1) : 0) + (hooks.calls?.[kind] ? callMost(hooks.calls[kind], spec.maxRepairSteps) : 0) || undefined;
  const limitOf = (kind: string): number => hooks.calls?.[kind]?.maxOutputTokens ?? (regime.call?.kind === kind ? regime.call.maxOutputTokens : undefined) ?? spec.maxOutputTokens;
  const sampler = new EpisodeSampler(method.name, hooks, spec.streamSeed, example.id);
  const hookModel: SamplingModel = {
    async generate(kind, prompt) {
      return (await hookModel.reply(kind, prompt)).text;
    },
    reply: (kind, prompt) => hookCall(kind, prompt),
    // a declared sampled kind: its temperature, a seed of (stream seed, query, step = attempts so far, kind, index)
    sample: (kind, prompt, options) => hookCall(kind, prompt, declared.has(kind) ? sampler.next(kind, attempts.length, options) : undefined),
    async embed(texts) {
      if (!services.embedder) throw new MeritError(`method "${method.name}": a hook asked for embeddings but the run has no embedder; set memory.embedsNotes: true in the method's hooks so runs load it`);
      hookEmbeddings += texts.length;
      return embedder!.embed(texts);
    },
  };
  async function hookCall(kind: string, prompt: string, sampling?: Sampling) {
    if (!declared.has(kind)) throw new MeritError(`method "${method.name}": a hook called the model with kind "${kind}", which it does not declare; add it to the method's hooks.calls (declared: ${[...declared].join(", ") || "none"})`);
    const most = mostOf(kind);
    const n = (made.get(kind) ?? 0) + 1;
    if (most !== undefined && n > most) throw new MeritError(`method "${method.name}": its hooks made ${n} "${kind}" calls in the episode of query ${example.id} but declare at most ${most}; raise hooks.calls.${kind}.most (merit grid --plan counts it)`);
    made.set(kind, n);
    if (typeof prompt !== "string" || prompt === "") throw new MeritError(`method "${method.name}": a hook's "${kind}" call has an empty prompt`);
    if (!sampling) sampler.checkGreedy(kind);
    const result = await generate(kind, prompt, limitOf(kind), sampling);
    return { text: result.text, truncated: calls[calls.length - 1].outputTruncated };
  }
  // What the hooks read, built from the method's declared sight: the oracle's verdict only for `oracle`.
  const attemptView = (a: AttemptRecord): AttemptView => attemptViewFor(method.sight, { sql: a.sql, verdict: a.verdict, dbError: a.dbError, executed: a.predictedExecOk, errorType: a.errorType, rowsPreview: a.rowsPreview, confirmedCorrect: a.confirmedCorrect });

  // Attempt 0: the cached initial SQL, never regenerated (its call is accounted first, before any
  // call a feedback regime makes to judge it).
  calls.push({
    kind: "initial_cache",
    promptTokens: spec.initial.prompt_tokens ?? 0,
    outputTokens: spec.initial.output_tokens ?? 0,
    truncatedPromptTokens: 0,
    cached: true,
    promptHash: spec.initial.prompt_hash,
    failure: null,
    outputTruncated: false,
  });
  const first = await score(spec.initial.initial_sql);
  attempts.push(first);
  const initialFailureType = initialTypeOf(first, classify);
  const reflect = async () => {
    const last = attempts[attempts.length - 1];
    const prompt = reflectionPrompt({ ...question, attempts: attempts.map(asPrompt), currentErrorType: last.errorType ?? "Unknown" }, spec.promptsDir);
    reflections.push(extractReflection((await generate("reflection", prompt)).text));
  };

  // A step hook: after a failure that another repair follows, a note for this episode's later prompts.
  const step = async () => {
    if (!hooks.step || attempts.length - 1 >= spec.maxRepairSteps) return;
    const stepHook = hooks.step;
    const note = await callHook(site("step.afterFailure", stepHook.name), hookModel, deadlineS, (m) => stepHook.afterFailure(deepFreeze({ ...view, attempts: attempts.map(attemptView), notes: [...reflections] }), m));
    if (note === null) return;
    if (typeof note !== "string") throw new MeritError(`method "${method.name}": step "${hooks.step.name}" returned ${JSON.stringify(note)}; afterFailure must return a string or null`);
    if (note.trim() !== "") reflections.push(note.trim());
  };
  if (method.repairs && method.reflects && !terminal(first) && spec.maxRepairSteps > 0) await reflect();
  if (method.repairs && !terminal(first)) await step();

  while (method.repairs && !terminal(attempts[attempts.length - 1]) && attempts.length - 1 < spec.maxRepairSteps) {
    const iteration = attempts.length; // 1-based repair step
    const last = attempts[attempts.length - 1];
    const currentErrorType = last.errorType ?? "Unknown";
    let positives: PromptMemory[] = [];
    let negatives: PromptMemory[] = [];
    let notesText = "";
    const retrievalStart = performance.now();
    if (method.memory) {
      const { memory, retriever } = services;
      if (!memory || !retriever || !embedder) throw new MeritError(`method ${method.name} needs a memory store, a retriever and an embedder`);
      const result = await retriever.retrieve(
        memory,
        {
          queryId: example.id,
          dbId: example.dbId,
          streamPosition: spec.streamPosition,
          repairIteration: iteration,
          currentErrorType,
          question: example.question,
          currentSql: last.sql,
          failureContext: failureContext(last),
        },
        method.memory,
        embedder,
      );
      // Each entry goes under its own polarity's heading, whatever the pool layout: a combined pool
      // (returned as `positives`) holds negatives too when the writer stores them, and a failed
      // direction must never be shown as a confirmed success. By-polarity pools split the same way.
      const ranked = [...result.positives, ...result.negatives].map((r) => r.entry);
      positives = ranked.filter((e) => e.polarity === "positive");
      negatives = ranked.filter((e) => e.polarity === "negative");
      retrieved.push(ranked.map((e) => e.entry_id));
      retrievalLog.push(result.log);
      queryEmbeddings += result.embeddingCalls;
    } else if (hooks.memory) {
      const eligible = eligibleNotes(services.notes ?? [], spec.streamPosition, example.id);
      const memoryHook = hooks.memory;
      const section = retrievedSection(memoryHook.heading, await callHook(site("memory.retrieve", memoryHook.name), hookModel, deadlineS, (m) => memoryHook.retrieve(deepFreeze({ ...view, iteration, attempts: attempts.map(attemptView) }), eligible, m)));
      const allowed = new Set(eligible);
      if (section === null || section.picked.some((p) => !p || !allowed.has(p.note) || (p.score !== undefined && !Number.isFinite(p.score)))) {
        throw new MeritError(`method "${method.name}": memory.retrieve must return notes from the memory it was given ([{ note, score? }] or { picked: [{ note, score? }], text }, finite scores), not copies or other objects`);
      }
      const picked = section.picked;
      notesText = section.text;
      retrieved.push(picked.map((p) => p.note.note_id));
      retrievalLog.push(noteRetrievalRecord(method.name, example.id, iteration, currentErrorType, eligible.length, picked));
    } else {
      retrieved.push([]);
    }
    if (method.memory || hooks.memory) wallMs.retrieval += performance.now() - retrievalStart;
    const prompt = repairPrompt({ ...question, positives, negatives, reflections, attempts: attempts.map(asPrompt), currentErrorType, memoryNotes: notesText }, spec.promptsDir);
    const output = await generate("repair", prompt);
    // A propose hook picks the SQL scored at this step (lib/repair/proposal.ts); without one, the greedy repair's.
    const proposed = hooks.propose ? await proposeRepair({ hook: hooks.propose, site: site("propose.propose", hooks.propose.name), model: hookModel, deadlineS, example, execute: services.execute, request: { ...view, iteration, attempts: attempts.map(attemptView), prompt, greedy: extractSql(output.text) } }) : null;
    const attempt = await score(proposed ? proposed.sql : extractSql(output.text));
    if (proposed) attempt.dbExecutions += proposed.executions;
    attempts.push(attempt);
    if (method.reflects && !terminal(attempt)) await reflect();
    if (!terminal(attempt)) await step();
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
  // The memory hook writes once the episode is final; its notes are stored only after the run commits this episode.
  let notes: Note[] | null = null;
  let retired: string[] = [];
  let judgedSuccess: boolean | null = null;
  const writeStart = performance.now();
  if (hooks.memory) {
    const last = attempts[attempts.length - 1];
    const eligible = eligibleNotes(services.notes ?? [], spec.streamPosition, example.id);
    const memoryHook = hooks.memory;
    const drafts = await callHook(site("memory.write", memoryHook.name), hookModel, deadlineS, (m) => memoryHook.write(deepFreeze({ ...view, attempts: attempts.map(attemptView), success: terminal(last), reflections: [...reflections], retrieved: retrieved.map((r) => [...r]) }), m, eligible));
    const source = { queryId: example.id, dbId: example.dbId, streamPosition: spec.streamPosition, episodeId: episodeId(spec.dataset, method.name, spec.streamSeed, spec.streamPosition, example.id) };
    ({ notes, retired, verdict: judgedSuccess } = stampWrite(method.name, source, drafts, eligible, memoryHook.replaces));
    wallMs.memory += performance.now() - writeStart;
  }
  // Every declared kind was called only in the episodes its scope names (`per`), which the plan relies on.
  const shape = { initiallyAccepted: terminal(attempts[0]), finallyAccepted: terminal(attempts[attempts.length - 1]) };
  for (const [kind, decl] of Object.entries(hooks.calls ?? {})) {
    if ((made.get(kind) ?? 0) > 0 && !scopeAllows(decl.per ?? "episode", shape)) {
      throw new MeritError(`method "${method.name}": its hooks made a "${kind}" call in the episode of query ${example.id}, which its scope per: "${decl.per}" excludes (initially ${shape.initiallyAccepted ? "accepted" : "not accepted"}, finally ${shape.finallyAccepted ? "accepted" : "not accepted"}); widen hooks.calls.${kind}.per`);
    }
  }
  return { attempts, prompts, calls, reflections, retrieved, retrievalLog, queryEmbeddings, finished, notes, hookEmbeddings, embeddingTokens, retired, wallMs, initialFailureType, judgedSuccess };
}

/**
 * The failure type of an initial attempt the oracle scores wrong but the feedback showed as CORRECT
 * (so it has no type of its own), classified from what the DBMS said of it — the initial failure
 * breakdown (Table 5) reads the initial attempt whatever the feedback said (issue 39 item 1); null
 * for every other initial attempt (its `errorType` is the type).
 */
function initialTypeOf(first: AttemptRecord, classify?: (a: { sql: string; status: string; dbError: string | null; predictedExecOk: boolean }) => string): string | null {
  if (first.confirmedCorrect || first.errorType !== null) return null;
  const status = first.predictedExecOk ? "DENOTATION_MISMATCH" : first.dbError === "TIMEOUT" ? "TIMEOUT" : "EXECUTION_ERROR";
  const input = { sql: first.sql, status, dbError: first.dbError, predictedExecOk: first.predictedExecOk } as const;
  return classify ? classify(input) : (classifyFailure(input)?.errorType ?? NULL_CLASSIFICATION_MEMORY_TYPE);
}

/** The embedding tokens of `texts` together (0 for none); null when `embedder` cannot count them. */
export async function countEmbeddingTokens(embedder: Embedder | undefined, texts: readonly string[]): Promise<number | null> {
  if (texts.length === 0) return 0;
  const counts = (await embedder?.tokenCounts?.(texts)) ?? null;
  return counts === null ? null : counts.reduce((s, n) => s + n, 0);
}

/**
 * `inner` with the tokens of every text it embeds reported to `add` before the vectors come (null when
 * `inner` cannot count them); identity and dimension are `inner`'s.
 */
export function countingEmbedder(inner: Embedder, add: (tokens: number | null) => void): Embedder {
  return {
    identity: inner.identity,
    dimension: inner.dimension,
    async embed(texts) {
      if (texts.length > 0) add(await countEmbeddingTokens(inner, texts));
      return inner.embed(texts);
    },
    tokenCounts: (texts) => inner.tokenCounts?.(texts) ?? Promise.resolve(null),
    close: () => inner.close(),
  };
}

/** A classify hook as the episode calls it: the label must be one the hook declares. */
function hookClassifier(method: string, hook: NonNullable<MethodSpec["hooks"]["classify"]>, view: QuestionView): (a: { sql: string; status: string; dbError: string | null; predictedExecOk: boolean }) => string {
  const types = new Set(hook.types);
  return (a) => {
    const label = callHookSync({ method, hook: "classify.classify", name: hook.name, queryId: view.queryId }, () => hook.classify(deepFreeze({ ...view, sql: a.sql, status: a.status, dbError: a.dbError, executed: a.predictedExecOk })));
    if (typeof label !== "string" || !types.has(label)) throw new MeritError(`method "${method}": classifier "${hook.name}" returned ${JSON.stringify(label)} for query ${view.queryId}, which is not one of its declared types (${hook.types.join(", ")})`);
    return label;
  };
}

/** The retrieval_log.jsonl record of a memory hook's step: the picked notes in the log's aligned arrays (no pools, filter or channels). */
function noteRetrievalRecord(method: string, queryId: string, iteration: number, errorType: string, eligible: number, picked: readonly { note: NoteView; score?: number }[]): RetrievalLogRecord {
  const score = (p: { score?: number }) => Math.round((p.score ?? 0) * 1e12) / 1e12;
  return {
    query_id: queryId,
    repair_iteration: iteration,
    current_error_type: errorType,
    legal_pool_size: eligible,
    typed_pool_size: 0,
    fallback_used: false,
    type_filter_applied: false,
    type_match_used_as_soft_score: false,
    retrieved_entry_ids: picked.map((p) => p.note.note_id),
    retrieved_polarities: picked.map((p) => p.note.polarity),
    retrieved_error_types: picked.map((p) => p.note.kind),
    source_db_ids: picked.map((p) => p.note.source_db_id),
    source_stream_positions: picked.map((p) => p.note.source_stream_position),
    dense_scores: picked.map(() => 0),
    bm25_scores: picked.map(() => 0),
    type_match_scores: picked.map(() => 0),
    final_scores: picked.map(score),
    method_name: method,
    legal_pool_size_by_polarity: {},
    typed_pool_size_by_polarity: {},
    fallback_used_by_polarity: {},
    dense_search: "none",
  };
}

/**
 * A verdict as an attempt, with the status the regime shows the agent (under dbms_only the model
 * never learns correctness, METHOD.md §2.5). The failure type is the method's classify hook's label
 * when it has one, else the classifier's (§3).
 */
function toAttempt(sql: string, verdict: Verdict, judged: Judged, classify?: (a: { sql: string; status: string; dbError: string | null; predictedExecOk: boolean }) => string): AttemptRecord {
  const confirmedCorrect = verdict.status === "CORRECT";
  const status = judged.status;
  const classification =
    status === "CORRECT" ? null : classify ? { errorType: classify({ sql, status, dbError: verdict.dbError, predictedExecOk: verdict.predictedExecOk }) } : classifyFailure({ status, dbError: verdict.dbError, predictedExecOk: verdict.predictedExecOk });
  return {
    sql,
    status,
    predictedExecOk: verdict.predictedExecOk,
    dbError: verdict.dbError,
    acceptance: judged.acceptance,
    confirmedCorrect,
    errorType: classification ? classification.errorType : null,
    dbExecutions: verdict.dbExecutions,
    accepted: judged.accepted,
    stops: judged.stops,
    verdict: judged.verdict,
    rowsPreview: judged.rowsPreview,
  };
}
