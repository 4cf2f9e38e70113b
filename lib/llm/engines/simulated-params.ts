/**
 * The simulated engine's parameters (METHOD.md "Simulated engine"): a JSON file — configs/simulated-engine.json
 * by default, config `model.simulation` or `merit run --engine simulated --simulation FILE` for another —
 * read strictly (unknown keys fail), every field defaulted here with its reason. Its bytes' sha256 is the
 * engine's model hash in the call cache and the run manifests, as a GGUF's is.
 *
 * Effects are on the log-odds scale: a repair's probability of being correct is
 * logistic(logit(base[type]) + difficulty(query) + Σ effects present in the prompt).
 * @module
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { InputFileError, parseJsonText } from "../../errors.ts";
import { sha256Hex } from "../../hash.ts";

/** The parameters file `model.simulation` falls back to. */
export const DEFAULT_SIMULATION_FILE = "configs/simulated-engine.json";

/** Failure types a simulated wrong answer can be written to produce (the classifier's, METHOD.md §3). */
export const SIMULATED_WRONG_TYPES = ["Schema Linking", "Syntax", "Aggregation", "Result Mismatch"] as const;
export type SimulatedWrongType = (typeof SIMULATED_WRONG_TYPES)[number];

const probability = z.number().min(0).max(1);
const effect = z.number().min(-20).max(20);

/** Base repair probability per failure type of the last attempt (the classifier's types; anything else uses `Unknown`). */
const BaseSchema = z
  .object({
    "Schema Linking": probability.default(0.4),
    Syntax: probability.default(0.45),
    Aggregation: probability.default(0.3),
    "Filter/Value": probability.default(0.25),
    Execution: probability.default(0.3),
    "Result Mismatch": probability.default(0.15),
    Unknown: probability.default(0.2),
  })
  .strict();

/** The planted effects, each added to the log-odds when the prompt holds what it names (0 = no effect). */
const EffectsSchema = z
  .object({
    /** A confirmed successful precedent that shares the current failure type or database. */
    relevant_precedent: effect.default(1.5),
    /** A confirmed successful precedent that shares neither (it points the wrong way). */
    misleading_precedent: effect.default(-0.2),
    /** An observed failed direction (a negative precedent). */
    negative_precedent: effect.default(0.2),
    /** A local reflection of this episode (Reflexion). */
    reflection: effect.default(0.3),
    /** A lesson: a distilled item, a cheatsheet, an insight list or an induced workflow. */
    lesson: effect.default(0.5),
  })
  .strict();

export const SimulatedParamsSchema = z
  .object({
    $comment: z.union([z.string(), z.array(z.string())]).optional(),
    /** Seed of every draw: a response is a function of (seed, prompt). */
    seed: z.number().int().nonnegative().default(0),
    /** `merit initial` on the simulated engine: the chance an initial prompt is answered correctly (before difficulty). */
    initial_correct: probability.default(0.6),
    repair: z
      .object({
        base: BaseSchema.default({}),
        /** Standard deviation of each query's difficulty on the log-odds scale (drawn once per (seed, database, question)). */
        difficulty_sd: z.number().min(0).max(10).default(1),
        effects: EffectsSchema.default({}),
        /** Weights of the failure type a wrong answer is written to produce (normalised; at least one > 0). */
        wrong_types: z
          .object(Object.fromEntries(SIMULATED_WRONG_TYPES.map((t) => [t, z.number().min(0).default(t === "Result Mismatch" ? 0.5 : t === "Schema Linking" ? 0.25 : 0.125)])) as Record<SimulatedWrongType, z.ZodDefault<z.ZodNumber>>)
          .strict()
          .default({})
          .refine((w) => Object.values(w).some((x) => x > 0), "at least one wrong type needs a weight > 0"),
      })
      .strict()
      .default({}),
    judge: z
      .object({
        /** P(verdict success | the judged SQL is correct). */
        sensitivity: probability.default(0.85),
        /** P(verdict failure | the judged SQL is wrong). */
        specificity: probability.default(0.8),
      })
      .strict()
      .default({}),
    /** Distill, curate, synthesize, induce and critique calls: well formed, truncated (cut at the output limit) or malformed (no tags). */
    hooks: z
      .object({
        well_formed: probability.default(0.85),
        truncated: probability.default(0.1),
      })
      .strict()
      .default({})
      .refine((h) => h.well_formed + h.truncated <= 1 + 1e-12, "well_formed + truncated must be at most 1 (the rest is malformed)"),
  })
  .strict();

export type SimulatedParams = z.infer<typeof SimulatedParamsSchema>;

/** The parsed parameters and the sha256 of the file's bytes (the engine's model hash). */
export interface LoadedSimulatedParams {
  file: string;
  sha256: string;
  params: SimulatedParams;
}

/** Every default (what an empty `{}` file means). */
export function defaultSimulatedParams(): SimulatedParams {
  return SimulatedParamsSchema.parse({});
}

/** Parses a parameters object; the error names the file, the bad field and the fix. */
export function parseSimulatedParams(value: unknown, file = "<simulated-engine parameters>"): SimulatedParams {
  const parsed = SimulatedParamsSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InputFileError(file, `invalid simulated-engine parameters — ${issue.path.length ? issue.path.join(".") : "(root)"}: ${issue.message}`, `fix the field (lib/llm/engines/simulated-params.ts lists every key and its default; ${DEFAULT_SIMULATION_FILE} is an example)`);
  }
  return parsed.data;
}

/** Reads and checks a parameters file. */
export function loadSimulatedParams(file: string = DEFAULT_SIMULATION_FILE): LoadedSimulatedParams {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw new InputFileError(file, "the simulated engine's parameters file cannot be read", `pass an existing file as config model.simulation (default ${DEFAULT_SIMULATION_FILE})`, error);
  }
  const value = parseJsonText(bytes.toString("utf8"), file, "malformed JSON", "fix the JSON syntax");
  return { file, sha256: sha256Hex(bytes), params: parseSimulatedParams(value, file) };
}
