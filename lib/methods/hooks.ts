/**
 * Methods, hooks over one episode (METHOD.md §12; issue 29): the behaviour a method adds to the
 * episode loop (lib/repair/episode.ts), each a plain function a plugin file supplies —
 *
 * - `classify`: a failed attempt → a failure-type label from the vocabulary the hook declares
 *   (default: the deterministic classifier of METHOD.md §3). It reads the attempt (SQL, status, DBMS
 *   message) and the question, never the gold.
 * - `memory`: `write` runs once the episode is final and returns notes (lessons, insights, …) to
 *   store, given the same eligible view `retrieve` sees (a memory that revises its state reads it
 *   there); `retrieve` runs before each repair over the **eligible view** only — notes written by
 *   episodes at strictly earlier stream positions, never by the current query — and picks the notes
 *   that reach the repair prompt. The kit stamps every note with its source query, database, stream
 *   position and episode, records the written notes in the episode's trajectory line (so the commit
 *   point holds them and a resumed run rebuilds the memory from its trajectories) and adds them to the
 *   memory only after that line is committed. A hook therefore cannot see the future, and
 *   `merit audit` checks what the notes say (no gold SQL) exactly as it checks prompts. A write may
 *   revise earlier notes — a note `supersedes` others, or `{ notes, retire }` — the one sanctioned
 *   change to the memory (recorded as the trajectory's `memory_retires`, replayed on resume,
 *   audited; lib/methods/note-memory.ts). Everything a hook is given is deeply frozen, and every
 *   hook call goes through lib/methods/hook-guard.ts (one-line failures, a deadline).
 * - `step`: after a failed attempt that another repair follows, a text for the rest of this episode's
 *   prompts (with the local reflections; Reflexion's `reflect` step is the paper's own).
 * - `calls`: the extra LLM call kinds the hooks make (`distill`, `judge`, `curate`, …) with the most
 *   calls of each per episode. Hooks call the model through {@link HookModel}: the call cache, the
 *   slot pool and the accounting (tokens, `call_kinds`) are the same as for repairs; a kind not
 *   declared, or one more call than declared, stops the run with one line. `merit grid --plan` counts
 *   the declared calls. A kind that declares a `temperature` is sampled: its calls go through
 *   `model.sample`, each with a seed the kit derives (lib/repair/proposal.ts).
 * - `propose`: at each repair step, the SQL that is scored (default: the greedy repair's). It is
 *   given the rendered repair prompt and the greedy repair's SQL, and may draw samples of a declared
 *   sampled kind and execute candidates read-only through the run's executor — their rows or error,
 *   never a verdict (self-consistency: examples/self-consistency.ts).
 *
 * A method without hooks is exactly the paper's: the defaults are today's behaviour, byte for byte.
 * @module
 */
import { ERROR_TYPES } from "../classify.ts";
import { MeritError } from "../errors.ts";
import { canonicalJson, contentHash, type JsonValue } from "../hash.ts";
import { MAX_SAMPLING_TEMPERATURE } from "../llm/types.ts";
import { fromOtherQuery, writtenBefore } from "../memory/eligibility.ts";
import { jsonInexact } from "./hook-guard.ts";
import { isEntryMemory, type EntryMemory } from "./merit-memory.ts";
import { describedNotes, markSourceSlot } from "./note-columns.ts";

/** Call kinds every method may make: the shared initial cache, Reflexion's reflection, the repair. */
export const BUILTIN_CALL_KINDS: readonly string[] = ["initial_cache", "reflection", "repair"];

/** The kit's kinds no hook may call: the initial cache is shared, the repair is the loop's own. */
const RESERVED_CALL_KINDS: readonly string[] = ["initial_cache", "repair"];

/** A call kind or a failure-type label spelled as written to disk. */
const CALL_KIND = /^[a-z][a-z0-9_]{0,39}$/;

/** A generation as a hook receives it from `reply`. */
export interface HookReply {
  /** The response text ("" when a server refused it). */
  text: string;
  /**
   * The generation stopped at its kind's output limit (`maxOutputTokens`) rather than by itself: the
   * text may be cut mid-way, so a hook that rewrites its state from it keeps the previous state.
   */
  truncated: boolean;
}

/** The model as a hook sees it; every call is accounted to the current episode. */
export interface HookModel {
  /** One greedy generation under a declared call kind, at most its declared `maxOutputTokens`; the text and whether it hit that limit. */
  reply(kind: string, prompt: string): Promise<HookReply>;
  /** `reply`'s text alone (for a hook that needs no truncation flag). */
  generate(kind: string, prompt: string): Promise<string>;
  /** L2-normalised vectors of `texts` (the run's embedder and embedding cache); each text counts as one embedding call. */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

/** The model as a propose hook sees it: the hooks' model, and sampled generations of its declared sampled kinds. */
export interface SamplingModel extends HookModel {
  /**
   * One sampled generation under a declared kind that declares a `temperature` (and only such a kind),
   * at that temperature, with a seed the kit derives from the run's stream seed, the query, the repair
   * step, the kind and `index` — so a replay or a resumed run draws the same sample, and the call cache
   * keys it by temperature and seed. `index` (default: the count of this kind's samples already drawn
   * at this step) numbers the sample; the same index at the same step is the same sample.
   */
  sample(kind: string, prompt: string, options?: { index?: number }): Promise<HookReply>;
}

/**
 * One attempt as a hook reads it (built by lib/methods/sight.ts from the method's declared sight):
 * what the agent observed, never the gold.
 */
export interface AttemptView {
  sql: string;
  /**
   * The outcome the feedback regime gave (FeedbackRegime.verdict): under the paper's regime the status
   * the agent was shown (CORRECT, DENOTATION_MISMATCH, EXECUTION_ERROR, TIMEOUT); under `dbms_only`
   * EXECUTED for SQL that ran, never a verdict the regime did not give.
   */
  status: string;
  dbError: string | null;
  /** Whether the SQL executed. */
  executed: boolean;
  /** The failure type of this attempt (null when it was accepted as correct). */
  errorType: string | null;
  /** Up to 5 result rows, one JSON array per line, each cut to 200 characters ("" when the SQL did not execute). */
  rowsPreview: string;
  /** The oracle's verdict: present only for a method that declares `sight: "oracle"` (ground truth). */
  oracleCorrect?: boolean;
}

/** The question an episode is about. */
export interface QuestionView {
  dataset: string;
  queryId: string;
  dbId: string;
  question: string;
  /** BIRD evidence ("" when none). */
  evidence: string;
  /** The rendered schema text the prompts show. */
  schema: string;
  /** 0-based stream position of the episode. */
  streamPosition: number;
}

/** What a classify hook reads. */
export interface ClassifyInput extends QuestionView {
  sql: string;
  /**
   * The status the agent is shown (the kit's classifier reads the same): the repair prompt shows the
   * label beside it. Under `dbms_only` an executed attempt shows as DENOTATION_MISMATCH (METHOD.md §2.5).
   */
  status: string;
  dbError: string | null;
  executed: boolean;
}

/** A finer (or other) failure classifier. */
export interface ClassifyHook {
  /** Recorded in the manifest. */
  name: string;
  /** Every label `classify` may return (the trajectory check and Table 5 read it). */
  types: readonly string[];
  /** The label of a failed attempt (never called for an attempt accepted as correct). */
  classify(attempt: ClassifyInput): string;
}

/** The finished episode a write hook reads. */
export interface EpisodeView extends QuestionView {
  /** Every attempt, the initial SQL first. */
  attempts: readonly AttemptView[];
  /** The loop ended on an attempt the feedback accepted (under the oracle: a correct one). */
  success: boolean;
  /** Reflexion reflections of this episode ([] when none). */
  reflections: readonly string[];
  /** Note ids retrieved at each repair step. */
  retrieved: readonly (readonly string[])[];
}

/** What a write hook returns for one note; the kit stamps the rest. */
export interface NoteDraft {
  /** What the note is (`lesson`, `insight`, `workflow`, …): a short label, shown in prompts. */
  kind: string;
  /** The note as the prompt shows it. */
  text: string;
  /** What retrieval matches it by (embedded when the hook sets `embedsNotes`); default `text`. */
  key?: string;
  /** Whether it records what worked, what failed, or neither (default `neutral`). */
  polarity?: NotePolarity;
  /** Anything else the hook wants back at retrieval: JSON that round-trips exactly (no BigInt, Date, Map, cycles; refused in one line). */
  data?: JsonValue;
  /**
   * Ids of notes in the memory the write hook was given that this note replaces (a revision: MemP's
   * adjust, Mem0's UPDATE, ExpeL's EDIT). They leave the memory once this episode is committed.
   */
  supersedes?: string[];
}

/**
 * What a write hook returns: the new notes, or `{ notes, retire, verdict }` — the new notes, the ids
 * of notes of the memory it was given that leave it with no successor (Mem0's DELETE, ExpeL's REMOVE),
 * and, for a method that judges its own episodes (ReasoningBank), whether its judge call took the
 * episode for a success. The verdict is recorded as the trajectory's `judged_success`, and the report's
 * judge-agreement table sets it against the oracle's verdict of the final attempt; give it only for a
 * verdict a judge made, never for one read from the oracle (sight: "oracle").
 */
export type WriteResult = NoteDraft[] | { notes: NoteDraft[]; retire?: string[]; verdict?: boolean };

/** The most bytes (UTF-8) of one note's text, key and data together; a larger note is refused. */
export const MAX_NOTE_BYTES = 64 * 1024;

export type NotePolarity = "positive" | "negative" | "neutral";

/** A stored note: the draft with its source, stamped by the kit. */
export interface Note {
  note_id: string;
  kind: string;
  text: string;
  key: string;
  polarity: NotePolarity;
  data: JsonValue;
  source_query_id: string;
  source_db_id: string;
  source_stream_position: number;
  source_episode_id: string;
  /** The notes this one replaces (present only when it revises some). */
  supersedes?: string[];
}

/**
 * A note as a hook sees it: deeply frozen (its data too), with its key's vector when the hook embeds
 * notes — a fresh copy at each read, so writing into it changes nothing that is stored.
 */
export interface NoteView extends Readonly<Note> {
  readonly vector: Float32Array | null;
}

/** What a retrieve hook reads about the current repair step. */
export interface RetrieveRequest extends QuestionView {
  /** 1-based repair step. */
  iteration: number;
  /** The attempts so far, the initial SQL first; the last one is the failure being repaired. */
  attempts: readonly AttemptView[];
}

/** One picked note and its score (logged in retrieval_log.jsonl). */
export interface PickedNote {
  note: NoteView;
  score?: number;
}

/** A memory a method writes after each episode and reads before each repair. */
export interface MemoryHook {
  /** Recorded in the manifest. */
  name: string;
  /** Heading of the prompt section the picked notes are shown under, e.g. `LESSONS FROM EARLIER EPISODES`. */
  heading: string;
  /** Embed every note's key once when it is written (billed to the writing episode); notes then carry `vector`. */
  embedsNotes?: boolean;
  /**
   * Note kinds of which only the latest note is in force (a memory that rewrites one state: Dynamic
   * Cheatsheet's sheet, AWM's workflow set, ExpeL's insight list): a note of such a kind retires the
   * earlier notes of its kind in the memory the write was given, as if the write named them in
   * `retire` (recorded as `memory_retires`, so the memory size counts the notes in force). Default: none.
   */
  replaces?: readonly string[];
  /**
   * After the episode is final: the notes to store ([] for none), or `{ notes, retire }`. `memory` is
   * the eligible view at this episode (the same notes `retrieve` is given), for a memory that updates
   * its earlier state: a note's `supersedes` and `retire` name notes of it, which leave the memory
   * once this episode is committed (METHOD.md §12.4).
   */
  write(episode: EpisodeView, model: HookModel, memory: readonly NoteView[]): WriteResult | Promise<WriteResult>;
  /** Before each repair: the notes to show, best first, from the eligible view only (or those notes with the text made from them). */
  retrieve(request: RetrieveRequest, memory: readonly NoteView[], model: HookModel): RetrieveResult | Promise<RetrieveResult>;
}

/**
 * What a retrieve hook returns: the picked notes, which the prompt shows one block each under the
 * hook's heading; or `{ picked, text }`, the picked notes with a text the hook made from them (a
 * synthesized sheet, say), which the prompt shows under the heading instead ("" shows nothing). The
 * picked notes are logged in retrieval_log.jsonl either way.
 */
export type RetrieveResult = PickedNote[] | { picked: PickedNote[]; text: string };

/**
 * Extra calls of one kind: at most `most` per episode, and only in the episodes `per` names —
 * `episode` (every one; the default), `repair_episode` (those whose initial attempt was not
 * accepted), `success` (those that ended on an accepted attempt, initially or after repairs),
 * `repaired` (not accepted at first, accepted at the end). The run refuses a call outside its scope;
 * `merit grid --plan` counts each kind only where its scope allows, so a method that calls only
 * after successes is counted exactly.
 */
export interface CallDeclaration {
  /**
   * The most calls of this kind per episode: a positive integer, or `{ per_repair: n, plus?: m }`,
   * which follows the run's K (max_repair_steps): n calls per repair step plus m (a step hook that
   * calls once after each failed attempt declares `{ per_repair: 1 }`, at most K calls).
   */
  most: number | PerRepairBound;
  per?: CallScope;
  /**
   * The most tokens one call of this kind may generate (the backend stops there; a call that reaches
   * it is recorded as truncated). Default: the run's `decoding.max_output_tokens` (METHOD.md: 512), as
   * for repairs and reflections. A curator or inducer that re-emits its whole state needs more.
   */
  maxOutputTokens?: number;
  /**
   * A sampled kind: its calls are `model.sample` draws at this temperature (in (0, 2]), each with its
   * own derived seed; absent, the kind is greedy (`reply`/`generate`), as every kit call is.
   */
  temperature?: number;
}

/** The largest output limit a call kind may declare. */
export const MAX_DECLARED_OUTPUT_TOKENS = 32_768;

/** A `most` that follows K: `per_repair` × K + `plus` calls per episode. */
export interface PerRepairBound {
  per_repair: number;
  plus?: number;
}

/** The most calls a declaration allows in one episode of a run with K = `k` repair steps. */
export function callMost(decl: Pick<CallDeclaration, "most">, k: number): number {
  return typeof decl.most === "number" ? decl.most : decl.most.per_repair * k + (decl.most.plus ?? 0);
}

/** A declaration's `most` in words: `3`, `2·K`, `K + 1`. */
export function callMostText(most: CallDeclaration["most"]): string {
  if (typeof most === "number") return String(most);
  const times = most.per_repair === 1 ? "K" : `${most.per_repair}·K`;
  return most.plus ? `${times} + ${most.plus}` : times;
}

export const CALL_SCOPES = ["episode", "repair_episode", "success", "repaired"] as const;
export type CallScope = (typeof CALL_SCOPES)[number];

/** Whether a call of `scope` may be made in an episode that did (not) start accepted and did (not) end accepted. */
export function scopeAllows(scope: CallScope, episode: { initiallyAccepted: boolean; finallyAccepted: boolean }): boolean {
  switch (scope) {
    case "episode":
      return true;
    case "repair_episode":
      return !episode.initiallyAccepted;
    case "success":
      return episode.finallyAccepted;
    case "repaired":
      return !episode.initiallyAccepted && episode.finallyAccepted;
  }
}

/** What a step hook reads: the episode so far (its last attempt failed) and the notes it already added. */
export interface StepState extends QuestionView {
  attempts: readonly AttemptView[];
  /**
   * The attempts exactly as the repair prompt showed them to the agent (SQL, the status line, the DBMS
   * message, the failure label): the paper's prompts keep their text, so a step that renders one of the
   * kit's templates (Reflexion's reflection) reads this, not a verdict.
   */
  shown: readonly { sql: string; status: string; dbError: string | null; errorType: string | null }[];
  /** What the episode's steps added so far (Reflexion's reflections and this hook's notes), in order. */
  notes: readonly string[];
  /** The run's prompt template folder (config `prompts_dir`), for a step that renders a kit template; undefined = the kit's prompts/. */
  promptsDir: string | undefined;
}

/**
 * A per-attempt addition: after the initial failure and after every failed repair that another
 * repair follows, a short text for the rest of this episode's repair prompts (shown with the local
 * reflections, recorded in the trajectory's `reflections`), or null for none. Episode-local: it is
 * never stored in memory. Its model calls go under a declared kind (`calls`, e.g. per: "repair_episode").
 */
export interface StepHook {
  /** Recorded in the manifest. */
  name: string;
  /** The factory's args (a step built by a factory, e.g. `reflect()`), recorded in the manifest. */
  args?: Readonly<Record<string, JsonValue>>;
  /** Run after the last failed repair too (Reflexion's reference reflects after every failure: 2K + 1 calls); default false. */
  afterLast?: boolean;
  /** The call kinds this step makes (merged into the method's `calls`; a kind declared twice is refused). */
  calls?: Record<string, CallDeclaration>;
  /** The text for the rest of the episode's prompts ("" is recorded as an empty reflection), or null for none. */
  afterFailure(state: StepState, model: HookModel): string | null | Promise<string | null>;
}

/** The most result rows `execute` hands a propose hook; a longer result is cut there (`truncated`). */
export const MAX_EXECUTION_ROWS = 1000;

/**
 * A candidate's execution as a propose hook sees it: what the database returned, never whether it
 * is right. Run read-only on the example's database by the run's executor under its SQL deadline.
 */
export interface ExecutionView {
  /** The SQL ran to a result (under the executor's row and byte caps). */
  executed: boolean;
  /** Its rows, JSON-safe (lib/methods/hook-guard.ts `jsonRows`), at most {@link MAX_EXECUTION_ROWS}; [] when it did not run. */
  rows: JsonValue[][];
  /** More rows came than `rows` holds. */
  truncated: boolean;
  /** The DBMS message (`TIMEOUT` past the deadline; the cap's message over a cap); null when it ran. */
  error: string | null;
}

/** What a propose hook reads at one repair step. */
export interface ProposeRequest extends QuestionView {
  /** 1-based repair step. */
  iteration: number;
  /** The attempts so far, the initial SQL first; the last one is the failure being repaired. */
  attempts: readonly AttemptView[];
  /** The repair prompt the kit rendered for this step (what the greedy repair was asked). */
  prompt: string;
  /** The greedy repair's SQL for this step (extractSql of its output; "" when it gave none). */
  greedy: string;
}

/** What a propose hook may use: the model, read-only execution, the kit's SQL extraction. */
export interface ProposeTools {
  model: SamplingModel;
  /** Executes `sql` read-only on the example's database through the run's executor: rows or an error, never a verdict. Counted in the attempt's db_executions. */
  execute(sql: string): Promise<ExecutionView>;
  /** The kit's model response → SQL (METHOD.md §2.7): what a repair's output is scored as. */
  extractSql(text: string): string;
}

/**
 * How a repair candidate is produced: at each repair step, after the kit's greedy repair call, the
 * SQL that is scored (a string; the kit keeps its single statement, "" for none). Self-consistency
 * draws samples of a sampled kind and votes by execution result. Its calls and executions are
 * accounted to the episode; it never sees the gold or the oracle's verdict of a candidate.
 */
export interface ProposeHook {
  /** Recorded in the manifest. */
  name: string;
  propose(request: ProposeRequest, tools: ProposeTools): string | Promise<string>;
}

/** A method's hooks (all optional; none = stateless iterative repair with the paper's classifier). */
export interface MethodHooks {
  classify?: ClassifyHook;
  /** A memory: MERIT's entry memory (`meritMemory(args)`, lib/methods/merit-memory.ts) or a note memory a plugin writes. */
  memory?: MemoryHook | EntryMemory;
  step?: StepHook;
  /** The SQL scored at each repair step (default: the greedy repair's). */
  propose?: ProposeHook;
  /** Extra call kinds the hooks make, with the most calls of each per episode. */
  calls?: Record<string, CallDeclaration>;
}

/** The manifest's record of a method's hooks (functions are identified by the plugin file's sha256). */
export interface HooksRecord {
  classify?: { name: string; types: string[] };
  step?: { name: string; args?: Record<string, JsonValue> };
  propose?: { name: string };
  /** A note memory's name, heading and whether it embeds; MERIT's entry memory's name and every arg. */
  memory?: { name: string; heading: string; embeds_notes: boolean } | { name: string; args: Record<string, JsonValue> };
  /** `per` only when it is not `episode`, `max_output_tokens` and `temperature` only when declared (so records of methods declaring neither keep their bytes). */
  calls: Record<string, { most: number | PerRepairBound; per?: CallScope; max_output_tokens?: number; temperature?: number }>;
}

/** Checks a method's hooks when it is registered; one line naming the method and the fix. */
export function checkHooks(method: string, hooks: MethodHooks): void {
  const fail = (what: string) => {
    throw new MeritError(`method "${method}": ${what}`);
  };
  for (const [kind, decl] of Object.entries(hooks.calls ?? {})) {
    if (!CALL_KIND.test(kind)) fail(`call kind "${kind}" must be lower_snake_case (a-z, 0-9, _; at most 40 characters)`);
    if (RESERVED_CALL_KINDS.includes(kind)) fail(`call kind "${kind}" is the kit's own; declare a kind of your own (e.g. "distill", "judge")`);
    const most = decl?.most as unknown;
    const whole = (x: unknown, min: number) => typeof x === "number" && Number.isInteger(x) && x >= min;
    const perRepair = typeof most === "object" && most !== null && !Array.isArray(most) && Object.keys(most).every((key) => key === "per_repair" || key === "plus") && whole((most as PerRepairBound).per_repair, 1) && ((most as PerRepairBound).plus === undefined || whole((most as PerRepairBound).plus, 0));
    if (!whole(most, 1) && !perRepair) fail(`calls.${kind}.most must be a positive integer (the most calls of that kind per episode) or { per_repair: n, plus?: m } (n per repair step, n·K + m in all)`);
    if (decl.per !== undefined && !(CALL_SCOPES as readonly string[]).includes(decl.per)) fail(`calls.${kind}.per must be one of ${CALL_SCOPES.join(", ")}`);
    if (decl.maxOutputTokens !== undefined && (!Number.isInteger(decl.maxOutputTokens) || decl.maxOutputTokens < 1 || decl.maxOutputTokens > MAX_DECLARED_OUTPUT_TOKENS)) fail(`calls.${kind}.maxOutputTokens must be an integer in 1..${MAX_DECLARED_OUTPUT_TOKENS} (the most tokens one call generates), or left out for the run's max_output_tokens`);
    if (decl.temperature !== undefined && !(typeof decl.temperature === "number" && decl.temperature > 0 && decl.temperature <= MAX_SAMPLING_TEMPERATURE)) fail(`calls.${kind}.temperature must be a number in (0, ${MAX_SAMPLING_TEMPERATURE}] (a sampled kind, drawn with model.sample), or left out for a greedy kind`);
  }
  if (hooks.propose && (typeof hooks.propose.name !== "string" || hooks.propose.name === "" || typeof hooks.propose.propose !== "function")) fail("propose must be { name, propose(request, tools) }");
  if (hooks.classify) {
    const c = hooks.classify;
    if (typeof c.name !== "string" || c.name === "") fail("classify.name must be a non-empty string");
    if (typeof c.classify !== "function") fail("classify.classify must be a function (attempt) => label");
    if (!Array.isArray(c.types) || c.types.length === 0) fail("classify.types must list every label the classifier returns");
    if (c.types.length > 24) fail(`classify.types lists ${c.types.length} labels; at most 24 (the report's explorer filters failure labels with a 31-bit mask beside METHOD.md's 7)`);
    if (new Set(c.types).size !== c.types.length) fail("classify.types lists a label twice");
    for (const t of c.types) if (typeof t !== "string" || t.trim() === "" || t.length > 60) fail(`classify.types: ${JSON.stringify(t)} is not a label (a non-empty string of at most 60 characters)`);
  }
  if (hooks.step && (typeof hooks.step.name !== "string" || hooks.step.name === "" || typeof hooks.step.afterFailure !== "function")) fail("step must be { name, afterFailure(state, model) }");
  if (hooks.memory && !isEntryMemory(hooks.memory)) {
    const m = hooks.memory;
    if (typeof m.name !== "string" || m.name === "") fail("memory.name must be a non-empty string");
    if (typeof m.heading !== "string" || m.heading.trim() === "" || m.heading.includes("\n")) fail("memory.heading must be one non-empty line");
    if (typeof m.write !== "function" || typeof m.retrieve !== "function") fail("memory.write and memory.retrieve must both be functions");
    if (m.replaces !== undefined && (!Array.isArray(m.replaces) || m.replaces.some((k) => typeof k !== "string" || !CALL_KIND.test(k)))) fail("memory.replaces must list note kinds (lower_snake_case labels, as the notes' kind), e.g. [\"cheatsheet\"]");
    if (m.embedsNotes !== undefined && typeof m.embedsNotes !== "boolean") fail("memory.embedsNotes must be true or false");
  }
  checkEmbedderUse(hooks, fail);
}

/**
 * A run loads the embedder for a hook method only when its memory sets `embedsNotes`; a hook that
 * calls `model.embed(…)`, ranks by `topByCosine` or reads a note's `vector` without it would fail in
 * its first episode (after the initial cache is built). Read from the hooks' source text at
 * registration, so `merit study plan` and every command that loads the method refuse it first.
 */
function checkEmbedderUse(hooks: MethodHooks, fail: (what: string) => never): void {
  if (isEntryMemory(hooks.memory)) return;
  if (hooks.memory?.embedsNotes === true) return;
  const sources: [string, unknown][] = [["memory.write", hooks.memory?.write], ["memory.retrieve", hooks.memory?.retrieve], ["step.afterFailure", hooks.step?.afterFailure], ["propose.propose", hooks.propose?.propose], ["classify.classify", hooks.classify?.classify]];
  for (const [where, fn] of sources) {
    if (typeof fn !== "function") continue;
    const text = Function.prototype.toString.call(fn).replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, "");
    const use = /\.embed\s*\(/.test(text) ? "calls model.embed(…)" : /\btopByCosine\b/.test(text) ? "ranks by topByCosine(…)" : /\.vector\b/.test(text) ? "reads notes' vectors" : null;
    if (use === null) continue;
    fail(hooks.memory
      ? `${where} ${use}, but memory.embedsNotes is not set, so runs load no embedder (and notes carry no vector); set memory.embedsNotes: true`
      : `${where} ${use}, but only a memory hook with embedsNotes: true makes runs load the embedder; add a memory hook with embedsNotes: true or drop the embedding`);
  }
}

/** The manifest record of a method's hooks; null when it has none (zeroshot, iterative). */
export function hooksRecord(hooks: MethodHooks): HooksRecord | null {
  if (!hooks.classify && !hooks.memory && !hooks.step && !hooks.propose && Object.keys(hooks.calls ?? {}).length === 0) return null;
  const most = (m: CallDeclaration["most"]) => (typeof m === "number" ? m : { per_repair: m.per_repair, ...(m.plus ? { plus: m.plus } : {}) });
  const record: HooksRecord = { calls: Object.fromEntries(Object.entries(hooks.calls ?? {}).map(([k, d]) => [k, { most: most(d.most), ...(d.per !== undefined && d.per !== "episode" ? { per: d.per } : {}), ...(d.maxOutputTokens !== undefined ? { max_output_tokens: d.maxOutputTokens } : {}), ...(d.temperature !== undefined ? { temperature: d.temperature } : {}) }])) };
  if (hooks.classify) record.classify = { name: hooks.classify.name, types: [...hooks.classify.types] };
  if (hooks.memory) record.memory = isEntryMemory(hooks.memory) ? { name: hooks.memory.name, args: { ...hooks.memory.args } } : { name: hooks.memory.name, heading: hooks.memory.heading, embeds_notes: hooks.memory.embedsNotes === true };
  if (hooks.step) record.step = { name: hooks.step.name, ...(hooks.step.args ? { args: { ...hooks.step.args } } : {}) };
  if (hooks.propose) record.propose = { name: hooks.propose.name };
  return JSON.parse(canonicalJson(record as unknown as JsonValue)) as HooksRecord;
}

/** The most extra calls (declared kinds) of one episode at K = `k`; with `episode`, only the kinds whose scope allows such an episode. */
export function extraCallBound(hooks: MethodHooks, k: number, episode?: { initiallyAccepted: boolean; finallyAccepted: boolean }): number {
  return Object.values(hooks.calls ?? {}).reduce((n, d) => n + (episode === undefined || scopeAllows(d.per ?? "episode", episode) ? callMost(d, k) : 0), 0);
}

/** The output limit of one call of `kind` declared by `hooks` (or `fallback`, the run's max_output_tokens). */
export function callOutputLimit(hooks: Pick<MethodHooks, "calls">, kind: string, fallback: number): number {
  return hooks.calls?.[kind]?.maxOutputTokens ?? fallback;
}

/**
 * The most generated tokens of the hooks' declared calls in one episode — each kind's `most` calls at
 * its output limit (`fallback` where it declares none) — in any episode, or in one whose shape its scope allows.
 */
export function extraOutputBound(hooks: MethodHooks, k: number, fallback: number, episode?: { initiallyAccepted: boolean; finallyAccepted: boolean }): number {
  return Object.entries(hooks.calls ?? {}).reduce((n, [kind, d]) => n + (episode === undefined || scopeAllows(d.per ?? "episode", episode) ? callMost(d, k) * callOutputLimit(hooks, kind, fallback) : 0), 0);
}

/** Where a finished episode's notes come from (the kit stamps each note with it). */
export interface NoteSource {
  queryId: string;
  dbId: string;
  streamPosition: number;
  episodeId: string;
}

/**
 * The stored notes of one finished episode: each draft checked and stamped with its source. A draft's
 * `supersedes` must name notes of `inMemory` (the ids of the memory the write hook was given).
 */
export function stampNotes(method: string, source: NoteSource, drafts: unknown, inMemory: ReadonlySet<string> = new Set()): Note[] {
  if (!Array.isArray(drafts)) throw new MeritError(`method "${method}": memory.write must return an array of notes or { notes, retire }, got ${drafts === null ? "null" : typeof drafts}`);
  return drafts.map((d, i) => {
    const draft = d as Partial<NoteDraft> | null;
    const bad = (what: string) => new MeritError(`method "${method}": memory.write's note ${i + 1} for query ${source.queryId} ${what}`);
    if (typeof draft !== "object" || draft === null) throw bad("is not an object { kind, text }");
    if (typeof draft.kind !== "string" || !CALL_KIND.test(draft.kind)) throw bad(`has kind ${JSON.stringify(draft.kind)}; use a lower_snake_case label such as "lesson"`);
    if (typeof draft.text !== "string" || draft.text.trim() === "") throw bad("has no text");
    if (draft.key !== undefined && typeof draft.key !== "string") throw bad("has a key that is not a string");
    const polarity = draft.polarity ?? "neutral";
    if (!["positive", "negative", "neutral"].includes(polarity)) throw bad(`has polarity ${JSON.stringify(polarity)}; use positive, negative or neutral`);
    const inexact = draft.data === undefined ? null : jsonInexact(draft.data);
    if (inexact !== null) throw bad(`cannot be stored: ${inexact}`);
    const dataText = draft.data === undefined ? "null" : canonicalJson(draft.data);
    const bytes = Buffer.byteLength(draft.text) + Buffer.byteLength(draft.key ?? "") + Buffer.byteLength(dataText);
    if (bytes > MAX_NOTE_BYTES) throw bad(`is ${bytes} bytes (text, key and data); a note holds at most ${MAX_NOTE_BYTES} bytes (64 KiB): store a shorter note, or several`);
    const supersedes = draft.supersedes ?? [];
    if (!Array.isArray(supersedes) || supersedes.some((id) => typeof id !== "string")) throw bad("has a supersedes that is not an array of note ids");
    const unknown = supersedes.find((id) => !inMemory.has(id));
    if (unknown !== undefined) throw bad(`supersedes ${JSON.stringify(unknown)}, which is not a note of the memory it was given; a note revises only notes in force that this episode may see`);
    return {
      note_id: contentHash([source.episodeId, i, draft.kind, draft.text]),
      kind: draft.kind,
      text: draft.text,
      key: draft.key ?? draft.text,
      polarity,
      data: JSON.parse(dataText) as JsonValue,
      source_query_id: source.queryId,
      source_db_id: source.dbId,
      source_stream_position: source.streamPosition,
      source_episode_id: source.episodeId,
      ...(supersedes.length > 0 ? { supersedes: [...new Set(supersedes)] } : {}),
    };
  });
}

/**
 * A write hook's result as stored: its notes stamped (stampNotes) and the ids of the notes that leave
 * the memory — those its notes supersede, then those it retires, each once, in that order. Every id
 * must be a note of `memory`, the view the hook was given.
 */
export function stampWrite(method: string, source: NoteSource, result: unknown, memory: readonly NoteView[], replaces: readonly string[] = []): { notes: Note[]; retired: string[]; verdict: boolean | null } {
  const inMemory = new Set(memory.filter((n) => !sourceNotes.has(n)).map((n) => n.note_id));
  const fromSource = new Set(memory.filter((n) => sourceNotes.has(n)).map((n) => n.note_id));
  const revised = (ids: unknown) => (Array.isArray(ids) ? ids.find((id) => fromSource.has(id as string)) : undefined);
  for (const d of Array.isArray(result) ? result : typeof result === "object" && result !== null && "notes" in result && Array.isArray((result as { notes: unknown }).notes) ? (result as { notes: unknown[] }).notes : []) {
    const id = revised((d as { supersedes?: unknown } | null)?.supersedes);
    if (id !== undefined) throw new MeritError(`method "${method}": memory.write for query ${source.queryId} supersedes note ${JSON.stringify(id)} of the read-only source memory (config memory_source); a run revises only its own notes: leave out the notes for which isSourceNote(note) (lib/plugin.ts) is true`);
  }
  const retiredSource = revised(typeof result === "object" && result !== null && !Array.isArray(result) ? (result as { retire?: unknown }).retire : undefined);
  if (retiredSource !== undefined) throw new MeritError(`method "${method}": memory.write for query ${source.queryId} retires note ${JSON.stringify(retiredSource)} of the read-only source memory (config memory_source); a run revises only its own notes: leave out the notes for which isSourceNote(note) (lib/plugin.ts) is true`);
  const shaped = typeof result === "object" && result !== null && !Array.isArray(result) && "notes" in result;
  const drafts = shaped ? (result as { notes: unknown }).notes : result;
  const retire = shaped ? ((result as { retire?: unknown }).retire ?? []) : [];
  const notes = stampNotes(method, source, drafts, inMemory);
  if (!Array.isArray(retire) || retire.some((id) => typeof id !== "string")) throw new MeritError(`method "${method}": memory.write's retire for query ${source.queryId} must be an array of note ids`);
  const unknown = (retire as string[]).find((id) => !inMemory.has(id));
  if (unknown !== undefined) throw new MeritError(`method "${method}": memory.write for query ${source.queryId} retires ${JSON.stringify(unknown)}, which is not a note of the memory it was given; a write retires only notes in force that this episode may see`);
  // A note of a kind the memory `replaces` retires the earlier notes of its kind (its own run's, in force).
  const replacedKinds = new Set(notes.map((n) => n.kind).filter((k) => replaces.includes(k)));
  const replaced = memory.filter((n) => replacedKinds.has(n.kind) && inMemory.has(n.note_id)).map((n) => n.note_id);
  const verdict = shaped ? (result as { verdict?: unknown }).verdict : undefined;
  if (verdict !== undefined && typeof verdict !== "boolean") throw new MeritError(`method "${method}": memory.write's verdict for query ${source.queryId} is ${JSON.stringify(verdict) ?? typeof verdict}; give true (the judge took the episode for a success), false, or leave it out`);
  return { notes, retired: [...new Set([...notes.flatMap((n) => n.supersedes ?? []), ...(retire as string[]), ...replaced])], verdict: verdict ?? null };
}

/**
 * The notes a retrieve hook may see at `position` for `queryId` (METHOD.md §4.7 rules 1–2, the same
 * two functions MERIT's entry pools are scanned with, lib/memory/eligibility.ts): written at strictly
 * earlier stream positions and not by the same query. A fresh frozen array of frozen notes: the hook
 * holds no handle on the rest of the memory.
 */
export function eligibleNotes(notes: readonly NoteView[], position: number, queryId: string): readonly NoteView[] {
  // The notes of a NoteMemory are filtered by their columns (note-columns.ts): the same predicate.
  const d = describedNotes(notes);
  if (d !== null) return d.table.eligible(notes, d.slots, position, queryId);
  // A read-only source note (another run's, config memory_source) is eligible at every position; its
  // positions are the other run's.
  return Object.freeze(notes.filter((n) => (sourceNotes.has(n) || writtenBefore(n.source_stream_position, position)) && fromOtherQuery(n.source_query_id, queryId)));
}

/** Notes of a read-only source memory (lib/experiment/memory-source.ts), as handed to hooks. */
const sourceNotes = new WeakSet<object>();

/** Marks `note` as a read-only source memory's: eligible at every position, never revised. */
export function markSourceNote<T extends NoteView>(note: T): T {
  sourceNotes.add(note);
  markSourceSlot(note);
  return note;
}

/** Whether `note` is a read-only source memory's. */
export function isSourceNote(note: NoteView): boolean {
  return sourceNotes.has(note);
}

/** The prompt section of picked notes: the hook's heading, then one block per note with its id. */
export function renderNotes(heading: string, picked: readonly PickedNote[]): string {
  if (picked.length === 0) return "";
  const blocks = picked.map((p, i) => [`[${p.note.kind} ${i + 1}]`, `Note ID: ${p.note.note_id}`, p.note.text.trim()].join("\n"));
  return `${heading}:\n${blocks.join("\n")}`;
}

/** The picked notes of a retrieve hook's result, each once, and its prompt section (renderNotes, or the hook's own text under its heading). */
export function retrievedSection(heading: string, result: RetrieveResult): { picked: PickedNote[]; text: string } | null {
  if (Array.isArray(result)) {
    const picked = onceEach(result);
    return { picked, text: renderNotes(heading, picked) };
  }
  if (typeof result !== "object" || result === null || !Array.isArray(result.picked) || typeof result.text !== "string") return null;
  return { picked: onceEach(result.picked), text: result.text.trim() === "" ? "" : `${heading}:\n${result.text.trim()}` };
}

/** Picked notes with each note once, at its first place (a note picked twice is shown and logged once). */
function onceEach(picked: readonly PickedNote[]): PickedNote[] {
  const seen = new Set<unknown>();
  return picked.filter((p) => {
    const note = typeof p === "object" && p !== null ? p.note : p;
    if (seen.has(note)) return false;
    seen.add(note);
    return true;
  });
}

/** Hooks built by the kit's own factories (Reflexion's `reflect()`), told apart from a plugin's. */
const kitHooks = new WeakSet<object>();

/** Marks `hook` as built by one of the kit's factories. */
export function markKitHook<T extends object>(hook: T): T {
  kitHooks.add(hook);
  return hook;
}

/** Whether `hook` was built by one of the kit's factories. */
export function isKitHook(hook: object): boolean {
  return kitHooks.has(hook);
}

/** Cosine similarity of two L2-normalised vectors (their dot product). */
export function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new MeritError(`cosine: vectors of length ${a.length} and ${b.length}; embed both with the same embedder`);
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/**
 * The `k` notes whose vectors are nearest `query` by cosine, best first; ties keep memory order. Notes
 * without vectors are skipped. A partial selection (the k best kept in order while scanning), so a
 * memory of 100,000 notes is not sorted whole (bench/overhead.ts); the same answer as sorting every
 * score, which it falls back to when a score is NaN or k is not a small positive whole number.
 */
export function topByCosine(memory: readonly NoteView[], query: Float32Array, k: number): PickedNote[] {
  const scored: { note: NoteView; score: number; i: number }[] = [];
  const bySort = () =>
    memory
      .flatMap((note, i) => (note.vector ? [{ note, score: cosine(note.vector, query), i }] : []))
      .sort((a, b) => b.score - a.score || a.i - b.i)
      .slice(0, k)
      .map(({ note, score }) => ({ note, score }));
  if (!Number.isInteger(k) || k <= 0 || k > 64) return bySort();
  for (let i = 0; i < memory.length; i++) {
    const vector = memory[i].vector;
    if (!vector) continue;
    const score = cosine(vector, query);
    if (Number.isNaN(score)) return bySort();
    // scanned in memory order, so an equal score never displaces an earlier note
    if (scored.length === k && score <= scored[k - 1].score) continue;
    let at = scored.length === k ? k - 1 : scored.length;
    while (at > 0 && scored[at - 1].score < score) at -= 1;
    scored.splice(at, 0, { note: memory[i], score, i });
    if (scored.length > k) scored.pop();
  }
  return scored.map(({ note, score }) => ({ note, score }));
}

/** The vocabularies a method's trajectories are checked against: its call kinds and its failure types. */
export interface Vocabulary {
  callKinds: ReadonlySet<string>;
  errorTypes: ReadonlySet<string>;
}

/** The vocabularies of a method's hooks, or of their manifest record (a method without hooks: the kit's kinds and METHOD.md §3's types). */
export function vocabularyOf(hooks: Pick<MethodHooks, "calls" | "classify"> | Pick<HooksRecord, "calls" | "classify"> | undefined): Vocabulary {
  return {
    callKinds: new Set([...BUILTIN_CALL_KINDS, ...Object.keys(hooks?.calls ?? {})]),
    errorTypes: new Set<string>(hooks?.classify ? hooks.classify.types : ERROR_TYPES),
  };
}

/** Refuses a trajectory whose call kinds (besides its feedback regime's, `feedbackKinds`) or failure types are not the method's (`where`: file and line). */
export function checkTrajectoryVocabulary(hooks: Pick<MethodHooks, "calls" | "classify"> | Pick<HooksRecord, "calls" | "classify"> | undefined, t: { call_kinds: readonly string[]; error_types: readonly (string | null)[] }, where: string, feedbackKinds: readonly string[] = []): void {
  const v = vocabularyOf(hooks);
  // "*": the regime is not registered here (a plugin's, not loaded), so its kinds are unknown.
  const kind = feedbackKinds.includes("*") ? undefined : t.call_kinds.find((k) => !v.callKinds.has(k) && !feedbackKinds.includes(k));
  if (kind !== undefined) throw new MeritError(`${where}: call kind "${kind}" is not one its method declares (${[...v.callKinds].join(", ")}); the run was made by another version of the method: start it again in a fresh --out`);
  const type = t.error_types.find((e) => e !== null && !v.errorTypes.has(e));
  if (type !== undefined) throw new MeritError(`${where}: error type "${type}" is not one its method's classifier declares (${[...v.errorTypes].join(", ")}); the run was made by another classifier: start it again in a fresh --out`);
}
