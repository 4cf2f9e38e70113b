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
 *   `merit audit` checks what the notes say (no gold SQL) exactly as it checks prompts.
 * - `step`: after a failed attempt that another repair follows, a text for the rest of this episode's
 *   prompts (with the local reflections; Reflexion's `reflect` step is the paper's own).
 * - `calls`: the extra LLM call kinds the hooks make (`distill`, `judge`, `curate`, …) with the most
 *   calls of each per episode. Hooks call the model through {@link HookModel}: the call cache, the
 *   slot pool and the accounting (tokens, `call_kinds`) are the same as for repairs; a kind not
 *   declared, or one more call than declared, stops the run with one line. `merit grid --plan` counts
 *   the declared calls.
 *
 * A method without hooks is exactly the paper's: the defaults are today's behaviour, byte for byte.
 * @module
 */
import { ERROR_TYPES } from "../classify.ts";
import { MeritError } from "../errors.ts";
import { canonicalJson, contentHash, type JsonValue } from "../hash.ts";

/** Call kinds every method may make: the shared initial cache, Reflexion's reflection, the repair. */
export const BUILTIN_CALL_KINDS: readonly string[] = ["initial_cache", "reflection", "repair"];

/** A call kind or a failure-type label spelled as written to disk. */
const CALL_KIND = /^[a-z][a-z0-9_]{0,39}$/;

/** The model as a hook sees it; every call is accounted to the current episode. */
export interface HookModel {
  /** One greedy generation under a declared call kind; the response text ("" when a server refused it). */
  generate(kind: string, prompt: string): Promise<string>;
  /** L2-normalised vectors of `texts` (the run's embedder and embedding cache); each text counts as one embedding call. */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

/** One attempt as a hook reads it: what the agent saw, never the gold. */
export interface AttemptView {
  sql: string;
  /** The status the agent was shown (under `dbms_only` a correct attempt shows DENOTATION_MISMATCH). */
  status: string;
  dbError: string | null;
  /** Whether the SQL executed. */
  executed: boolean;
  /** The failure type of this attempt (null when it was accepted as correct). */
  errorType: string | null;
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
  /** Anything else the hook wants back at retrieval (JSON). */
  data?: JsonValue;
}

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
}

/** A note as a retrieve hook sees it: with its key's vector when the hook embeds notes. */
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
   * After the episode is final: the notes to store ([] for none). `memory` is the eligible view at
   * this episode (the same notes `retrieve` is given), for a memory that updates its earlier state.
   */
  write(episode: EpisodeView, model: HookModel, memory: readonly NoteView[]): NoteDraft[] | Promise<NoteDraft[]>;
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
}

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
  /** What the episode's steps added so far (Reflexion's reflections and this hook's notes), in order. */
  notes: readonly string[];
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
  afterFailure(state: StepState, model: HookModel): string | null | Promise<string | null>;
}

/** A method's hooks (all optional; absent = the paper's behaviour). */
export interface MethodHooks {
  classify?: ClassifyHook;
  memory?: MemoryHook;
  step?: StepHook;
  /** Extra call kinds the hooks make, with the most calls of each per episode. */
  calls?: Record<string, CallDeclaration>;
}

/** The manifest's record of a method's hooks (functions are identified by the plugin file's sha256). */
export interface HooksRecord {
  classify?: { name: string; types: string[] };
  step?: { name: string };
  memory?: { name: string; heading: string; embeds_notes: boolean };
  /** `per` only when it is not `episode` (so records of methods declaring none keep their bytes). */
  calls: Record<string, { most: number | PerRepairBound; per?: CallScope }>;
}

/** Checks a method's hooks when it is registered; one line naming the method and the fix. */
export function checkHooks(method: string, hooks: MethodHooks): void {
  const fail = (what: string) => {
    throw new MeritError(`method "${method}": ${what}`);
  };
  for (const [kind, decl] of Object.entries(hooks.calls ?? {})) {
    if (!CALL_KIND.test(kind)) fail(`call kind "${kind}" must be lower_snake_case (a-z, 0-9, _; at most 40 characters)`);
    if (BUILTIN_CALL_KINDS.includes(kind)) fail(`call kind "${kind}" is the kit's own; declare a kind of your own (e.g. "distill", "judge")`);
    const most = decl?.most as unknown;
    const whole = (x: unknown, min: number) => typeof x === "number" && Number.isInteger(x) && x >= min;
    const perRepair = typeof most === "object" && most !== null && !Array.isArray(most) && Object.keys(most).every((key) => key === "per_repair" || key === "plus") && whole((most as PerRepairBound).per_repair, 1) && ((most as PerRepairBound).plus === undefined || whole((most as PerRepairBound).plus, 0));
    if (!whole(most, 1) && !perRepair) fail(`calls.${kind}.most must be a positive integer (the most calls of that kind per episode) or { per_repair: n, plus?: m } (n per repair step, n·K + m in all)`);
    if (decl.per !== undefined && !(CALL_SCOPES as readonly string[]).includes(decl.per)) fail(`calls.${kind}.per must be one of ${CALL_SCOPES.join(", ")}`);
  }
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
  if (hooks.memory) {
    const m = hooks.memory;
    if (typeof m.name !== "string" || m.name === "") fail("memory.name must be a non-empty string");
    if (typeof m.heading !== "string" || m.heading.trim() === "" || m.heading.includes("\n")) fail("memory.heading must be one non-empty line");
    if (typeof m.write !== "function" || typeof m.retrieve !== "function") fail("memory.write and memory.retrieve must both be functions");
  }
}

/** The manifest record of a method's hooks; null when it has none (the paper's methods). */
export function hooksRecord(hooks: MethodHooks): HooksRecord | null {
  if (!hooks.classify && !hooks.memory && !hooks.step && Object.keys(hooks.calls ?? {}).length === 0) return null;
  const most = (m: CallDeclaration["most"]) => (typeof m === "number" ? m : { per_repair: m.per_repair, ...(m.plus ? { plus: m.plus } : {}) });
  const record: HooksRecord = { calls: Object.fromEntries(Object.entries(hooks.calls ?? {}).map(([k, d]) => [k, { most: most(d.most), ...(d.per !== undefined && d.per !== "episode" ? { per: d.per } : {}) }])) };
  if (hooks.classify) record.classify = { name: hooks.classify.name, types: [...hooks.classify.types] };
  if (hooks.memory) record.memory = { name: hooks.memory.name, heading: hooks.memory.heading, embeds_notes: hooks.memory.embedsNotes === true };
  if (hooks.step) record.step = { name: hooks.step.name };
  return JSON.parse(canonicalJson(record as unknown as JsonValue)) as HooksRecord;
}

/** The most extra calls (declared kinds) of one episode at K = `k`; with `episode`, only the kinds whose scope allows such an episode. */
export function extraCallBound(hooks: MethodHooks, k: number, episode?: { initiallyAccepted: boolean; finallyAccepted: boolean }): number {
  return Object.values(hooks.calls ?? {}).reduce((n, d) => n + (episode === undefined || scopeAllows(d.per ?? "episode", episode) ? callMost(d, k) : 0), 0);
}

/** The stored notes of one finished episode: each draft checked and stamped with its source. */
export function stampNotes(method: string, source: { queryId: string; dbId: string; streamPosition: number; episodeId: string }, drafts: unknown): Note[] {
  if (!Array.isArray(drafts)) throw new MeritError(`method "${method}": memory.write must return an array of notes, got ${typeof drafts}`);
  return drafts.map((d, i) => {
    const draft = d as Partial<NoteDraft> | null;
    const bad = (what: string) => new MeritError(`method "${method}": memory.write's note ${i + 1} for query ${source.queryId} ${what}`);
    if (typeof draft !== "object" || draft === null) throw bad("is not an object { kind, text }");
    if (typeof draft.kind !== "string" || !CALL_KIND.test(draft.kind)) throw bad(`has kind ${JSON.stringify(draft.kind)}; use a lower_snake_case label such as "lesson"`);
    if (typeof draft.text !== "string" || draft.text.trim() === "") throw bad("has no text");
    if (draft.key !== undefined && typeof draft.key !== "string") throw bad("has a key that is not a string");
    const polarity = draft.polarity ?? "neutral";
    if (!["positive", "negative", "neutral"].includes(polarity)) throw bad(`has polarity ${JSON.stringify(polarity)}; use positive, negative or neutral`);
    const data = (draft.data === undefined ? null : JSON.parse(canonicalJson(draft.data))) as JsonValue;
    return {
      note_id: contentHash([source.episodeId, i, draft.kind, draft.text]),
      kind: draft.kind,
      text: draft.text,
      key: draft.key ?? draft.text,
      polarity,
      data,
      source_query_id: source.queryId,
      source_db_id: source.dbId,
      source_stream_position: source.streamPosition,
      source_episode_id: source.episodeId,
    };
  });
}

/**
 * The notes a retrieve hook may see at `position` for `queryId` (METHOD.md §4.7 rules 1–2): written
 * at strictly earlier stream positions and not by the same query. A fresh frozen array of frozen
 * notes: the hook holds no handle on the rest of the memory.
 */
export function eligibleNotes(notes: readonly NoteView[], position: number, queryId: string): readonly NoteView[] {
  return Object.freeze(notes.filter((n) => n.source_stream_position < position && n.source_query_id !== queryId));
}

/** The prompt section of picked notes: the hook's heading, then one block per note with its id. */
export function renderNotes(heading: string, picked: readonly PickedNote[]): string {
  if (picked.length === 0) return "";
  const blocks = picked.map((p, i) => [`[${p.note.kind} ${i + 1}]`, `Note ID: ${p.note.note_id}`, p.note.text.trim()].join("\n"));
  return `${heading}:\n${blocks.join("\n")}`;
}

/** The picked notes of a retrieve hook's result, and its prompt section (renderNotes, or the hook's own text under its heading). */
export function retrievedSection(heading: string, result: RetrieveResult): { picked: PickedNote[]; text: string } | null {
  if (Array.isArray(result)) return { picked: result, text: renderNotes(heading, result) };
  if (typeof result !== "object" || result === null || !Array.isArray(result.picked) || typeof result.text !== "string") return null;
  return { picked: result.picked, text: result.text.trim() === "" ? "" : `${heading}:\n${result.text.trim()}` };
}

/** Cosine similarity of two L2-normalised vectors (their dot product). */
export function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new MeritError(`cosine: vectors of length ${a.length} and ${b.length}; embed both with the same embedder`);
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** The `k` notes whose vectors are nearest `query` by cosine, best first; ties keep memory order. Notes without vectors are skipped. */
export function topByCosine(memory: readonly NoteView[], query: Float32Array, k: number): PickedNote[] {
  return memory
    .flatMap((note, i) => (note.vector ? [{ note, score: cosine(note.vector, query), i }] : []))
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, k)
    .map(({ note, score }) => ({ note, score }));
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
