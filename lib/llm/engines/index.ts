/**
 * The inference-engine registry (engine-request.ts): one line per engine. Config `model.engine`
 * and the openai backends read it; a study's engine is one plugin file that calls `registerEngine`
 * (README "How to add an inference engine").
 * @module
 */
import { MeritError } from "../../errors.ts";
import { Registry } from "../../registry.ts";
import type { DecodingParams, EngineRequest, InferenceEngine } from "../engine-request.ts";
import { llamaCpp } from "./llama-cpp.ts";
import { vllm } from "./vllm.ts";

/** Every inference engine, by its config name. */
export const ENGINES = new Registry<InferenceEngine>("inference engine");
ENGINES.register("llama.cpp", llamaCpp);
ENGINES.register("vllm", vllm);

/** The engine registered as `name` (a plugin may build on a bundled one's request fields). */
export function getEngine(name: string): InferenceEngine {
  return ENGINES.get(name);
}

/** Registers an inference engine under its config name (`model.engine`), once; plugin files call this. */
export function registerEngine(name: string, engine: InferenceEngine): InferenceEngine {
  return ENGINES.register(name, engine);
}

/** The request form of engine `name` for these decoding parameters. */
export function engineRequest(name: string, p: DecodingParams): EngineRequest {
  if (!(p.repetitionPenalty > 0)) throw new MeritError(`repetition penalty must be > 0, got ${p.repetitionPenalty}; use 1 to disable it`);
  return ENGINES.get(name).completion(p);
}
