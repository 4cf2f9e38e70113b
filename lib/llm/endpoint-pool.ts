/**
 * HTTP transport for OpenAI-compatible servers (METHOD.md §6.4; issue 16 §2, §5): several base URLs
 * with least-busy sharding, bounded concurrency per URL, a timeout per attempt (AbortController).
 * - Transient problems are retried with exponential backoff: 408, 429, 503, timeouts, network errors
 *   (connection refused or reset: a server that died), and a 5xx met for the first time.
 * - A server that failed at the network level is set aside for `downMs` and the retry goes to another
 *   URL at once (no backoff while a healthy URL is left), so a grid survives a killed server and the
 *   call it had in flight is made exactly once more, elsewhere.
 * - Deterministic refusals fail at once with HttpStatusError (status, body excerpt, URL): any other
 *   4xx, and a 5xx other than 503 whose status and body repeat for the same request (a server-side
 *   bug that no retry fixes, e.g. llama-server's chat-output parser). Backends turn them into a
 *   recorded failed generation (GenerationRefusedError) instead of ending the run.
 * Backoff has no jitter: lib/ uses no randomness.
 * Every retried transient failure is counted, by kind ({@link TransientRetries}), for the pool and for
 * the call it delayed (`post` returns the call's count): an execution fact for the run's manifest and
 * the report, never part of a cache key or an output (issue 23 §2).
 * @module
 */
import { MeritError } from "../errors.ts";

export interface EndpointPoolOptions {
  /** Server roots such as `http://127.0.0.1:8080` (a trailing `/v1` is accepted and ignored). */
  baseUrls: readonly string[];
  /** Sent as `Authorization: Bearer …` when set. */
  apiKey?: string;
  /** In-flight requests per URL. @default 4 */
  maxConcurrencyPerUrl?: number;
  /** Per-attempt timeout in ms. @default 300000 */
  timeoutMs?: number;
  /** Retries after the first attempt. @default 5 */
  maxRetries?: number;
  /** First backoff in ms, doubled per retry, capped at 60 s; a larger Retry-After wins. @default 1000 */
  backoffMs?: number;
  /** How long a URL that failed at the network level (refused, reset, timed out) is set aside. @default 30000 */
  downMs?: number;
  /** Injected for tests. */
  fetchImpl?: typeof fetch;
}

/** What made an attempt fail transiently: refused/reset/closed connection, the per-attempt timeout, or an HTTP status (408, 429, 503, a first 5xx). */
export type TransientKind = "network" | "timeout" | "status";

/** Retried transient failures by kind, and the requests given up on after the last retry. */
export interface TransientRetries {
  network: number;
  timeout: number;
  status: number;
  /** Requests that failed every attempt (RetriesExhaustedError): never answered, never cached. */
  gaveUp: number;
}

/** One answered request: the parsed JSON and how many transient failures were retried before it. */
export interface PostResult {
  answer: unknown;
  retries: number;
}

/** A deterministic HTTP refusal: a 4xx other than 408/429, or a 5xx that repeated for the same request. */
export class HttpStatusError extends MeritError {
  readonly url: string;
  readonly status: number;
  readonly bodyExcerpt: string;
  readonly repeated: boolean;
  constructor(url: string, status: number, bodyExcerpt: string, repeated = false) {
    super(`${url} answered HTTP ${status}${repeated ? " twice for the same request" : ""}: ${bodyExcerpt}; check the model name, request parameters and API key for this server`);
    this.name = "HttpStatusError";
    this.url = url;
    this.status = status;
    this.bodyExcerpt = bodyExcerpt;
    this.repeated = repeated;
  }
}

/**
 * A generation the server refused deterministically (HttpStatusError underneath): the episode records
 * it as a failed generation with the server's message (no text, 0 output tokens) and goes on.
 * `promptTokens` is what the kit sent (0 when the server templates, i.e. the chat fallback).
 */
export class GenerationRefusedError extends HttpStatusError {
  readonly promptTokens: number;
  readonly truncatedPromptTokens: number;
  constructor(refusal: HttpStatusError, promptTokens: number, truncatedPromptTokens: number) {
    super(refusal.url, refusal.status, refusal.bodyExcerpt, refusal.repeated);
    this.name = "GenerationRefusedError";
    this.promptTokens = promptTokens;
    this.truncatedPromptTokens = truncatedPromptTokens;
  }

  /** The line recorded in the trajectory. */
  get reason(): string {
    return `HTTP ${this.status}${this.repeated ? " (repeated)" : ""}: ${this.bodyExcerpt}`;
  }
}

/** Every attempt failed with a retryable problem. */
export class RetriesExhaustedError extends MeritError {
  readonly attempts: number;
  readonly lastProblem: string;
  constructor(attempts: number, lastProblem: string) {
    super(`request failed after ${attempts} attempt(s); last: ${lastProblem}; check that the servers are up, or raise maxRetries/timeoutMs`);
    this.name = "RetriesExhaustedError";
    this.attempts = attempts;
    this.lastProblem = lastProblem;
  }
}

class RetryableProblem extends Error {
  readonly kind: TransientKind;
  readonly retryAfterMs: number;
  /** The server is unreachable (set it aside). */
  readonly down: boolean;
  /** `status body` of a 5xx, to recognise one that repeats. */
  readonly signature: string | null;
  readonly refusal: HttpStatusError | null;
  constructor(kind: TransientKind, message: string, retryAfterMs = 0, down = false, signature: string | null = null, refusal: HttpStatusError | null = null) {
    super(message);
    this.kind = kind;
    this.retryAfterMs = retryAfterMs;
    this.down = down;
    this.signature = signature;
    this.refusal = refusal;
  }
}

interface Endpoint {
  base: string;
  inFlight: number;
  served: number;
  /** Date.now() before which the URL is set aside (0 = up). */
  downUntil: number;
}

/** Sends JSON POSTs to the least busy of several servers, with retries. */
export class EndpointPool {
  readonly #endpoints: Endpoint[];
  readonly #waiting: Array<() => void> = [];
  readonly #limit: number;
  readonly #timeoutMs: number;
  readonly #maxRetries: number;
  readonly #backoffMs: number;
  readonly #downMs: number;
  readonly #apiKey?: string;
  readonly #fetch: typeof fetch;
  readonly #retries: TransientRetries = { network: 0, timeout: 0, status: 0, gaveUp: 0 };

  constructor(options: EndpointPoolOptions) {
    if (options.baseUrls.length === 0) throw new MeritError("at least one base URL is required, e.g. http://127.0.0.1:8080");
    this.#endpoints = options.baseUrls.map((url) => ({ base: url.replace(/\/+$/, "").replace(/\/v1$/, ""), inFlight: 0, served: 0, downUntil: 0 }));
    this.#limit = options.maxConcurrencyPerUrl ?? 4;
    this.#timeoutMs = options.timeoutMs ?? 300_000;
    this.#maxRetries = options.maxRetries ?? 5;
    this.#backoffMs = options.backoffMs ?? 1000;
    this.#downMs = options.downMs ?? 30_000;
    this.#apiKey = options.apiKey;
    this.#fetch = options.fetchImpl ?? fetch;
  }

  /** Requests answered (any status) per base URL, in the order given. */
  served(): Array<{ base: string; served: number }> {
    return this.#endpoints.map(({ base, served }) => ({ base, served }));
  }

  /** Transient failures retried since this pool was created, by kind (a copy). */
  transientRetries(): TransientRetries {
    return { ...this.#retries };
  }

  /** POSTs `body` to `path` (e.g. `/completion`) and resolves to the parsed JSON answer. */
  async postJson(path: string, body: unknown): Promise<unknown> {
    return (await this.post(path, body)).answer;
  }

  /** Like {@link postJson}, with the number of transient failures retried for this request. */
  async post(path: string, body: unknown): Promise<PostResult> {
    const payload = JSON.stringify(body);
    let lastProblem = "";
    let lastSignature: string | null = null;
    for (let attempt = 0; attempt <= this.#maxRetries; attempt++) {
      let problem: RetryableProblem;
      const endpoint = await this.#acquire();
      try {
        return { answer: await this.#attempt(endpoint, path, payload), retries: attempt };
      } catch (error) {
        if (!(error instanceof RetryableProblem)) throw error;
        problem = error;
      } finally {
        endpoint.inFlight--;
        this.#waiting.shift()?.();
      }
      lastProblem = problem.message;
      if (problem.refusal && problem.signature !== null && problem.signature === lastSignature) {
        throw new HttpStatusError(problem.refusal.url, problem.refusal.status, problem.refusal.bodyExcerpt, true);
      }
      lastSignature = problem.signature;
      if (problem.down) endpoint.downUntil = Date.now() + this.#downMs;
      if (attempt === this.#maxRetries) break;
      this.#retries[problem.kind]++;
      // A healthy URL is left: fail over at once; otherwise back off.
      if (problem.down && this.#endpoints.some((e) => e.downUntil <= Date.now())) continue;
      const delay = Math.max(Math.min(this.#backoffMs * 2 ** attempt, 60_000), problem.retryAfterMs);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
    this.#retries.gaveUp++;
    throw new RetriesExhaustedError(this.#maxRetries + 1, lastProblem);
  }

  /**
   * The endpoint with the fewest in-flight requests below the limit (first listed on ties), among the
   * URLs that are up; when every URL is set aside, the one set aside longest ago (a restarted server
   * comes back, and is up again once it answers; one still dead is set aside anew and the next is
   * tried, so a dead URL is not asked again and again while another may have come back).
   */
  async #acquire(): Promise<Endpoint> {
    for (;;) {
      const now = Date.now();
      const up = this.#endpoints.filter((e) => e.downUntil <= now);
      const earliest = Math.min(...this.#endpoints.map((e) => e.downUntil));
      let best: Endpoint | undefined;
      for (const e of up.length > 0 ? up : this.#endpoints.filter((d) => d.downUntil === earliest)) if (e.inFlight < this.#limit && (!best || e.inFlight < best.inFlight)) best = e;
      if (best) {
        best.inFlight++;
        return best;
      }
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
  }

  async #attempt(endpoint: Endpoint, path: string, payload: string): Promise<unknown> {
    const url = endpoint.base + path;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.#timeoutMs);
    let response: Response;
    let text: string;
    try {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (this.#apiKey) headers.authorization = `Bearer ${this.#apiKey}`;
      response = await this.#fetch(url, { method: "POST", headers, body: payload, signal: controller.signal });
      text = await response.text();
    } catch (error) {
      if (controller.signal.aborted) throw new RetryableProblem("timeout", `${url} timed out after ${this.#timeoutMs} ms`, 0, true);
      const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : "";
      throw new RetryableProblem("network", `${url}: network error ${error instanceof Error ? error.message : String(error)}${cause}`, 0, true);
    } finally {
      clearTimeout(timer);
    }
    endpoint.served++;
    endpoint.downUntil = 0; // it answered: up again
    const excerpt = text.replace(/\s+/g, " ").slice(0, 300);
    if (response.status === 408 || response.status === 429 || response.status >= 500) {
      const retryAfter = Number(response.headers.get("retry-after"));
      // 503 (loading, overloaded) is always transient; another 5xx that repeats is a refusal.
      const repeatable = response.status >= 500 && response.status !== 503;
      throw new RetryableProblem(
        "status",
        `${url} answered HTTP ${response.status}: ${excerpt}`,
        Number.isFinite(retryAfter) ? Math.min(retryAfter, 60) * 1000 : 0,
        false,
        repeatable ? `${response.status} ${excerpt}` : null,
        repeatable ? new HttpStatusError(url, response.status, excerpt) : null,
      );
    }
    if (!response.ok) throw new HttpStatusError(url, response.status, excerpt);
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      throw new MeritError(`${url} answered HTTP ${response.status} with a body that is not JSON: ${excerpt}; is this an OpenAI-compatible server?`, { cause: error });
    }
  }
}
