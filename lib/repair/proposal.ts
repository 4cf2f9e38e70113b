/**
 * How a repair candidate is produced (METHOD.md §12; issue 36 §6): a method's `propose` hook
 * (lib/methods/hooks.ts) and the sampled calls it draws. At each repair step the episode loop makes
 * its greedy repair call as always; a method with a propose hook is then asked for the SQL that is
 * scored, given the rendered repair prompt and the greedy repair's SQL, with three tools:
 *
 * - `model`, the hooks' model, whose `sample` draws a generation of a declared sampled kind (one that
 *   declares `temperature`) with a seed derived here from the run's stream seed, the query, the
 *   repair step, the kind and the sample's index ({@link sampleSeed}) — so a replay or a resumed run
 *   asks the backend (and the call cache, which keys temperature and seed) exactly the same calls;
 * - `execute`, read-only execution of a candidate on the example's database through the run's
 *   executor under its SQL deadline (lib/oracle/oracle.ts `Oracle.execute`): rows or an error, never
 *   the gold or a verdict; each execution is counted in the attempt's `db_executions`;
 * - `extractSql`, the kit's response → SQL (METHOD.md §2.7).
 *
 * A method without a propose hook scores the greedy repair's SQL, byte for byte as before.
 * @module
 */
import type { Example } from "../data/types.ts";
import { MeritError } from "../errors.ts";
import { contentHash } from "../hash.ts";
import type { Sampling } from "../llm/types.ts";
import { callHook, deepFreeze, jsonRows, type HookSite } from "../methods/hook-guard.ts";
import { MAX_EXECUTION_ROWS, type ExecutionView, type MethodHooks, type SamplingModel, type ProposeHook, type ProposeRequest, type ProposeTools } from "../methods/hooks.ts";
import { resultRows, type ExecResult } from "../oracle/executor.ts";
import { extractSql, singleStatement } from "../oracle/extract-sql.ts";

/**
 * The most bytes (UTF-8) of the SQL a propose hook returns (as a note's bound, lib/methods/hooks.ts
 * MAX_NOTE_BYTES). A model's repair is bounded by its output tokens; a hook's SQL is not, and the
 * run's edit distance by step (METHOD.md §8) is quadratic in the tokens of consecutive attempts, so a
 * hook returning megabytes would stall the run's end for hours.
 */
export const MAX_PROPOSED_SQL_BYTES = 64 * 1024;

/** Reads a candidate's execution for a propose hook (EpisodeServices.execute; a run: its oracle's `execute`). */
export type ExecuteSql = (example: Example, sql: string) => Promise<ExecResult>;

/**
 * The seed of one sample: a 31-bit integer of (stream seed, query, repair step, kind, index), the
 * same in every run of that stream and method, different for every sample of a step.
 */
export function sampleSeed(streamSeed: number, queryId: string, step: number, kind: string, index: number): number {
  return Number.parseInt(contentHash(["sample", streamSeed, queryId, step, kind, index]).slice(0, 8), 16) & 0x7fffffff;
}

/**
 * The sampling of each `model.sample` call of one episode: checks that the kind declares a temperature
 * and numbers the samples of each kind at each step (the default index).
 */
export class EpisodeSampler {
  readonly #drawn = new Map<string, number>();
  private readonly method: string;
  private readonly hooks: Pick<MethodHooks, "calls">;
  private readonly streamSeed: number;
  private readonly queryId: string;

  constructor(method: string, hooks: Pick<MethodHooks, "calls">, streamSeed: number, queryId: string) {
    this.method = method;
    this.hooks = hooks;
    this.streamSeed = streamSeed;
    this.queryId = queryId;
  }

  /** The temperature and seed of a sample of `kind` at repair step `step` (the attempts made so far). */
  next(kind: string, step: number, options?: { index?: number }): Sampling {
    const temperature = this.hooks.calls?.[kind]?.temperature;
    if (temperature === undefined) throw new MeritError(`method "${this.method}": a hook called model.sample with kind "${kind}", which declares no temperature; declare hooks.calls.${kind}.temperature (e.g. 0.7) for a sampled kind, or call model.reply for a greedy one`);
    const key = `${step}\u0000${kind}`;
    const drawn = this.#drawn.get(key) ?? 0;
    const index = options?.index ?? drawn;
    if (!Number.isInteger(index) || index < 0) throw new MeritError(`method "${this.method}": model.sample's index for kind "${kind}" is ${JSON.stringify(index)}; give a non-negative integer (the sample's number at this step) or leave it out`);
    this.#drawn.set(key, drawn + 1);
    return { temperature, seed: sampleSeed(this.streamSeed, this.queryId, step, kind, index) };
  }

  /** Refuses a greedy call (`reply`, `generate`) of a sampled kind: its calls are `sample` draws. */
  checkGreedy(kind: string): void {
    if (this.hooks.calls?.[kind]?.temperature !== undefined) throw new MeritError(`method "${this.method}": a hook called model.reply with kind "${kind}", which is sampled (it declares temperature ${this.hooks.calls[kind].temperature}); call model.sample for it`);
  }
}

/** A candidate's execution as a propose hook sees it: rows (JSON-safe, at most MAX_EXECUTION_ROWS) or the error. */
export function executionView(result: ExecResult): ExecutionView {
  if (!result.ok) return { executed: false, rows: [], truncated: false, error: result.timedOut ? "TIMEOUT" : result.error };
  const all = resultRows(result);
  return { executed: true, rows: jsonRows(all.slice(0, MAX_EXECUTION_ROWS)), truncated: all.length > MAX_EXECUTION_ROWS, error: null };
}

/** What one propose call needs from its episode. */
export interface ProposeInput {
  hook: ProposeHook;
  site: HookSite;
  /** The hooks' model of the episode (accounted, declared kinds only). */
  model: SamplingModel;
  deadlineS: number;
  example: Example;
  request: ProposeRequest;
  /** The run's read-only execution; absent where the caller gives none (then `execute` refuses in one line). */
  execute: ExecuteSql | undefined;
}

/** The SQL the hook proposes (its single statement, "" for none) and the executions it made. */
export async function proposeRepair(input: ProposeInput): Promise<{ sql: string; executions: number }> {
  const { hook, site } = input;
  let executions = 0;
  const execute = async (sql: string): Promise<ExecutionView> => {
    if (typeof sql !== "string") throw new MeritError(`method "${site.method}": propose's execute was given ${sql === null ? "null" : typeof sql}; give it the SQL text`);
    if (!input.execute) throw new MeritError(`method "${site.method}": its propose hook executes candidates, but this caller of the episode gives no read-only executor (EpisodeServices.execute); a run gives its oracle's`);
    executions += 1;
    return deepFreeze(executionView(await input.execute(input.example, sql)));
  };
  // One object, so the hook guard pauses the hook's clock in model calls and executions alike.
  const kit = { ...bind(input.model), execute, extractSql };
  const sql = await callHook(site, kit as unknown as SamplingModel, input.deadlineS, (guarded) => {
    const g = guarded as unknown as SamplingModel & Pick<ProposeTools, "execute" | "extractSql">;
    const tools: ProposeTools = Object.freeze({ model: Object.freeze({ reply: g.reply, generate: g.generate, embed: g.embed, sample: g.sample }), execute: g.execute, extractSql: g.extractSql });
    return hook.propose(deepFreeze(input.request), tools);
  });
  if (typeof sql !== "string") throw new MeritError(`method "${site.method}": propose "${hook.name}" returned ${JSON.stringify(sql) ?? typeof sql} for query ${site.queryId}; it must return the SQL to score (a string, "" for none)`);
  const bytes = Buffer.byteLength(sql, "utf8");
  if (bytes > MAX_PROPOSED_SQL_BYTES) throw new MeritError(`method "${site.method}": propose "${hook.name}" returned ${bytes} bytes of SQL for query ${site.queryId}; a proposed SQL holds at most ${MAX_PROPOSED_SQL_BYTES} bytes (64 KiB; the run's metrics compare consecutive attempts token by token): return one statement of that size at most`);
  return { sql: singleStatement(sql), executions };
}

/** The model's methods bound to it, as own properties. */
function bind(model: SamplingModel): SamplingModel {
  return { reply: model.reply.bind(model), generate: model.generate.bind(model), embed: model.embed.bind(model), sample: model.sample.bind(model) };
}
