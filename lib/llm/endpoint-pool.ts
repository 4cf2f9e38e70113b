/**
 * HTTP transport for OpenAI-compatible servers (METHOD.md §6.4): several base URLs with least-busy
 * sharding, bounded concurrency per URL, a timeout per attempt (AbortController), retries with
 * exponential backoff on 429, 5xx, timeouts and network errors, and an immediate, specific error on
 * any other 4xx (status, body excerpt, URL). Backoff has no jitter: lib/ uses no randomness.
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
  /** Injected for tests. */
  fetchImpl?: typeof fetch;
}

/** A non-retryable HTTP answer (4xx other than 429). */
export class HttpStatusError extends MeritError {
  constructor(readonly url: string, readonly status: number, readonly bodyExcerpt: string) {
    super(`${url} answered HTTP ${status}: ${bodyExcerpt}; check the model name, request parameters and API key for this server`);
    this.name = "HttpStatusError";
  }
}

/** Every attempt failed with a retryable problem. */
export class RetriesExhaustedError extends MeritError {
  constructor(readonly attempts: number, readonly lastProblem: string) {
    super(`request failed after ${attempts} attempt(s); last: ${lastProblem}; check that the servers are up, or raise maxRetries/timeoutMs`);
    this.name = "RetriesExhaustedError";
  }
}

class RetryableProblem extends Error {
  constructor(message: string, readonly retryAfterMs = 0) {
    super(message);
  }
}

interface Endpoint {
  base: string;
  inFlight: number;
  served: number;
}

/** Sends JSON POSTs to the least busy of several servers, with retries. */
export class EndpointPool {
  readonly #endpoints: Endpoint[];
  readonly #waiting: Array<() => void> = [];
  readonly #limit: number;
  readonly #timeoutMs: number;
  readonly #maxRetries: number;
  readonly #backoffMs: number;
  readonly #apiKey?: string;
  readonly #fetch: typeof fetch;

  constructor(options: EndpointPoolOptions) {
    if (options.baseUrls.length === 0) throw new MeritError("at least one base URL is required, e.g. http://127.0.0.1:8080");
    this.#endpoints = options.baseUrls.map((url) => ({ base: url.replace(/\/+$/, "").replace(/\/v1$/, ""), inFlight: 0, served: 0 }));
    this.#limit = options.maxConcurrencyPerUrl ?? 4;
    this.#timeoutMs = options.timeoutMs ?? 300_000;
    this.#maxRetries = options.maxRetries ?? 5;
    this.#backoffMs = options.backoffMs ?? 1000;
    this.#apiKey = options.apiKey;
    this.#fetch = options.fetchImpl ?? fetch;
  }

  /** Requests answered (any status) per base URL, in the order given. */
  served(): Array<{ base: string; served: number }> {
    return this.#endpoints.map(({ base, served }) => ({ base, served }));
  }

  /** POSTs `body` to `path` (e.g. `/v1/chat/completions`) and resolves to the parsed JSON answer. */
  async postJson(path: string, body: unknown): Promise<unknown> {
    const payload = JSON.stringify(body);
    let lastProblem = "";
    for (let attempt = 0; attempt <= this.#maxRetries; attempt++) {
      let retryAfterMs: number;
      const endpoint = await this.#acquire();
      try {
        return await this.#attempt(endpoint, path, payload);
      } catch (error) {
        if (!(error instanceof RetryableProblem)) throw error;
        lastProblem = error.message;
        retryAfterMs = error.retryAfterMs;
      } finally {
        endpoint.inFlight--;
        this.#waiting.shift()?.();
      }
      if (attempt === this.#maxRetries) break;
      const delay = Math.max(Math.min(this.#backoffMs * 2 ** attempt, 60_000), retryAfterMs);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
    throw new RetriesExhaustedError(this.#maxRetries + 1, lastProblem);
  }

  /** The endpoint with the fewest in-flight requests below the limit (first listed on ties). */
  async #acquire(): Promise<Endpoint> {
    for (;;) {
      let best: Endpoint | undefined;
      for (const e of this.#endpoints) if (e.inFlight < this.#limit && (!best || e.inFlight < best.inFlight)) best = e;
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
      if (controller.signal.aborted) throw new RetryableProblem(`${url} timed out after ${this.#timeoutMs} ms`);
      const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : "";
      throw new RetryableProblem(`${url}: network error ${error instanceof Error ? error.message : String(error)}${cause}`);
    } finally {
      clearTimeout(timer);
    }
    endpoint.served++;
    const excerpt = text.replace(/\s+/g, " ").slice(0, 300);
    if (response.status === 429 || response.status >= 500) {
      const retryAfter = Number(response.headers.get("retry-after"));
      throw new RetryableProblem(`${url} answered HTTP ${response.status}: ${excerpt}`, Number.isFinite(retryAfter) ? Math.min(retryAfter, 60) * 1000 : 0);
    }
    if (!response.ok) throw new HttpStatusError(url, response.status, excerpt);
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      throw new MeritError(`${url} answered HTTP ${response.status} with a body that is not JSON: ${excerpt}; is this an OpenAI-compatible server?`, { cause: error });
    }
  }
}
