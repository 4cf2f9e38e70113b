/**
 * Experiment runs, replaying one memoryless episode from the call cache for the grid's plan
 * (grid-plan.ts): the episode loop itself run with a backend that answers only from the cache, so
 * the plan counts what the run will ask — as far as the cache answers, then the first call it does not
 * hold (the key every episode reaching it shares).
 * @module
 */
import type { ChatBackend, GenerateRequest } from "../llm/types.ts";
import type { MethodSpec } from "../methods/index.ts";
import { runEpisode, type EpisodeResult } from "../repair/episode.ts";
import { episodeSpecOf } from "./run.ts";
import type { PlanInputs } from "./grid-plan.ts";

/** Thrown by the replay backend at the first call the cache does not hold. */
export class NotCached extends Error {
  readonly request: GenerateRequest;
  constructor(request: GenerateRequest) {
    super("not in the call cache");
    this.request = request;
  }
}

/** How a memoryless (or empty-memory) episode replays from the call cache. */
export type Replay =
  | { kind: "terminal" }
  | { kind: "replayed"; hits: number; result: EpisodeResult }
  | { kind: "stopped"; hits: number; key: string };

/** What tells two methods' classify hooks apart in the replay memo: the method that registered it. */
export function registrationKey(method: MethodSpec): string {
  return `${method.canonicalName}\0${method.hooks.classify?.name ?? ""}`;
}

/** Runs one memoryless episode with a backend that answers only from the cache. */
export async function replayEpisode(spec: ReturnType<typeof episodeSpecOf>, input: PlanInputs, keyOf: (r: GenerateRequest) => string): Promise<Replay> {
  let hits = 0;
  const backend: ChatBackend = {
    identity: input.identity ?? { kind: "plan", model: "", modelHash: "", params: {} },
    async generate(request) {
      const found = input.lookup?.(request) ?? null;
      if (found === null) throw new NotCached(request);
      hits += 1;
      return found;
    },
    async close() {},
  };
  try {
    const result = await runEpisode(spec, { backend, score: input.score });
    return result.calls.length === 1 ? { kind: "terminal" } : { kind: "replayed", hits, result };
  } catch (error) {
    if (error instanceof NotCached) return { kind: "stopped", hits, key: keyOf(error.request) };
    throw error;
  }
}

