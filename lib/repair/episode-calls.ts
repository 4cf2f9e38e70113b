/**
 * Repair stage, the model calls of one episode (METHOD.md §6.5, §12.1): every generation goes through
 * {@link EpisodeCalls.generate} — its prompt logged for the causal audit, its tokens accounted in call
 * order, a server's deterministic refusal recorded as a failed call with no text — and the hooks (and
 * a judging feedback regime) reach the model only through {@link EpisodeCalls.model}: their declared
 * kinds, at most the declared count per episode, each at its declared output limit, their
 * embeddings counted. A kind the kit generates as text the episode shows again (repair, reflection)
 * is not flagged as truncated: its cut shows as output_tokens = max_output_tokens, as METHOD.md §6.4 says.
 * @module
 */
import { MeritError } from "../errors.ts";
import { GenerationRefusedError } from "../llm/endpoint-pool.ts";
import type { ChatBackend, Embedder, GenerateResult, Sampling } from "../llm/types.ts";
import { BUILTIN_CALL_KINDS, callMost, scopeAllows, type MethodHooks, type SamplingModel } from "../methods/hooks.ts";
import type { FeedbackRegime } from "../methods/feedback.ts";
import { promptHash } from "../prompts.ts";
import { EpisodeSampler } from "./proposal.ts";
import type { CallKind } from "./trajectory.ts";

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

/** A prompt sent in this episode (logged for the causal audit). */
export interface PromptRecord {
  kind: CallKind | string;
  hash: string;
  text: string;
}

/** What the call accounting of one episode needs to know. */
export interface EpisodeCallsOptions {
  method: string;
  queryId: string;
  hooks: MethodHooks;
  regime: Pick<FeedbackRegime, "call">;
  backend: ChatBackend;
  /** The run's embedder, counting the tokens of what it embeds (undefined: the run has none). */
  embedder: Embedder | undefined;
  maxRepairSteps: number;
  /** The run's max_output_tokens (repairs, and declared kinds that declare no limit). */
  maxOutputTokens: number;
  /** The run's stream seed and the episode's step now (attempts so far): a sampled call's seed derives from them. */
  streamSeed: number;
  step: () => number;
}

/** The calls, prompts and hook model of one episode. */
export class EpisodeCalls {
  readonly calls: CallRecord[] = [];
  readonly prompts: PromptRecord[] = [];
  /** Texts the hooks embedded (billed as embedding calls). */
  hookEmbeddings = 0;
  private readonly made = new Map<string, number>();
  private readonly declared: Set<string>;
  /** The model as the method's hooks and a judging regime see it (`sample`: a declared sampled kind, lib/repair/proposal.ts). */
  readonly model: SamplingModel;
  private readonly o: EpisodeCallsOptions;

  constructor(o: EpisodeCallsOptions) {
    this.o = o;
    this.declared = new Set([...Object.keys(o.hooks.calls ?? {}), ...(o.regime.call ? [o.regime.call.kind] : [])]);
    const sampler = new EpisodeSampler(o.method, o.hooks, o.streamSeed, o.queryId);
    const call = async (kind: string, prompt: string, sampling?: Sampling) => {
      this.count(kind);
      if (typeof prompt !== "string" || prompt === "") throw new MeritError(`method "${o.method}": a hook's "${kind}" call has an empty prompt`);
      if (!sampling) sampler.checkGreedy(kind);
      const result = await this.generate(kind, prompt, this.limitOf(kind), sampling);
      return { text: result.text, truncated: this.calls[this.calls.length - 1].outputTruncated };
    };
    const reply = (kind: string, prompt: string) => call(kind, prompt);
    this.model = {
      reply,
      // a declared sampled kind: its temperature, a seed of (stream seed, query, step = attempts so far, kind, index)
      sample: (kind, prompt, options) => call(kind, prompt, this.declared.has(kind) ? sampler.next(kind, o.step(), options) : undefined),
      generate: async (kind, prompt) => (await reply(kind, prompt)).text,
      embed: async (texts) => {
        if (!o.embedder) throw new MeritError(`method "${o.method}": a hook asked for embeddings but the run has no embedder; set memory.embedsNotes: true in the method's hooks so runs load it`);
        this.hookEmbeddings += texts.length;
        return o.embedder.embed(texts);
      },
    };
  }

  /** Accounts the cached initial SQL's call (attempt 0, never regenerated): the first call of every episode. */
  initial(initial: { prompt_tokens: number | null; output_tokens: number | null; prompt_hash: string | null }): void {
    this.calls.push({ kind: "initial_cache", promptTokens: initial.prompt_tokens ?? 0, outputTokens: initial.output_tokens ?? 0, truncatedPromptTokens: 0, cached: true, promptHash: initial.prompt_hash, failure: null, outputTruncated: false });
  }

  /** One generation (greedy, or `sampling`'s draw) under `kind`, at most `limit` tokens (default: the run's max_output_tokens), accounted and logged. */
  async generate(kind: string, prompt: string, limit?: number, sampling?: Sampling): Promise<GenerateResult> {
    const hash = promptHash(prompt);
    this.prompts.push({ kind, hash, text: prompt });
    let result: GenerateResult;
    let failure: string | null = null;
    try {
      result = await this.o.backend.generate({ prompt, maxOutputTokens: limit ?? this.o.maxOutputTokens, ...(sampling ? { sampling } : {}) });
    } catch (error) {
      // A server's deterministic refusal is a failed generation with no text (so no SQL: the attempt
      // scores as an execution error), recorded with the server's message; the episode goes on.
      if (!(error instanceof GenerationRefusedError)) throw error;
      failure = error.reason;
      result = { text: "", promptTokens: error.promptTokens, outputTokens: 0, truncatedPromptTokens: error.truncatedPromptTokens, cached: false };
    }
    const flagged = limit !== undefined && !BUILTIN_CALL_KINDS.includes(kind);
    this.calls.push({ kind, promptTokens: result.promptTokens, outputTokens: result.outputTokens, truncatedPromptTokens: result.truncatedPromptTokens, cached: result.cached, promptHash: hash, failure, outputTruncated: flagged && failure === null && result.outputTokens >= limit });
    return result;
  }

  /** Refuses every declared kind called in an episode its scope (`per`) excludes, which the plan relies on. */
  checkScopes(shape: { initiallyAccepted: boolean; finallyAccepted: boolean }): void {
    for (const [kind, decl] of Object.entries(this.o.hooks.calls ?? {})) {
      if ((this.made.get(kind) ?? 0) > 0 && !scopeAllows(decl.per ?? "episode", shape)) {
        throw new MeritError(`method "${this.o.method}": its hooks made a "${kind}" call in the episode of query ${this.o.queryId}, which its scope per: "${decl.per}" excludes (initially ${shape.initiallyAccepted ? "accepted" : "not accepted"}, finally ${shape.finallyAccepted ? "accepted" : "not accepted"}); widen hooks.calls.${kind}.per`);
      }
    }
  }

  /** Counts one call of `kind`; refuses an undeclared kind or one call more than declared. */
  private count(kind: string): void {
    const { method, queryId, hooks, regime, maxRepairSteps } = this.o;
    if (!this.declared.has(kind)) throw new MeritError(`method "${method}": a hook called the model with kind "${kind}", which it does not declare; add it to the method's hooks.calls (declared: ${[...this.declared].join(", ") || "none"})`);
    const most = (regime.call?.kind === kind ? regime.call.perAttempt * (maxRepairSteps + 1) : 0) + (hooks.calls?.[kind] ? callMost(hooks.calls[kind], maxRepairSteps) : 0) || undefined;
    const n = (this.made.get(kind) ?? 0) + 1;
    if (most !== undefined && n > most) throw new MeritError(`method "${method}": its hooks made ${n} "${kind}" calls in the episode of query ${queryId} but declare at most ${most}; raise hooks.calls.${kind}.most (merit grid --plan counts it)`);
    this.made.set(kind, n);
  }

  /** A declared kind's output limit: the hook's declaration, else the regime's, else the run's max_output_tokens. */
  private limitOf(kind: string): number {
    const { hooks, regime, maxOutputTokens } = this.o;
    return hooks.calls?.[kind]?.maxOutputTokens ?? (regime.call?.kind === kind ? regime.call.maxOutputTokens : undefined) ?? maxOutputTokens;
  }
}
