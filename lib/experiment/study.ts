/**
 * Experiment runs, a follow-up study (README "Write a follow-up study"; DESIGN.md §1): one
 * TypeScript file, `studies/NAME/study.ts`, whose default export is `defineStudy({...})` — the
 * datasets, the methods (the paper's and the study's own, registered by its plugin files), the
 * stream seeds, the reference method and the comparisons of interest, how many queries, and the
 * models (`tinyModels()` by default, `realModels()` or `server({...})`). `merit study plan|run`
 * read it; every run it implies is an ordinary experiment config built here (`studyConfig`).
 * @module
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { z } from "zod";
import { datasetAdapter, datasetNames } from "../data/datasets/index.ts";
import { InputFileError, MeritError } from "../errors.ts";
import { canonicalJson, type JsonValue } from "../hash.ts";
import { registrationCaller } from "../registry.ts";
import { DEFAULT_FEEDBACK_NOISE, getFeedback } from "../methods/feedback.ts";
import { getMethod, isMethodName, methodDefinition, registerMethod } from "../methods/index.ts";
import { importErrorText, type PluginSource } from "../plugin-import.ts";
import { parseConfig, SubsetSchema, type ExperimentConfig, type SubsetRule } from "./config.ts";
import { TINY_CHAT, TINY_EMBEDDER } from "./quick-config.ts";
import { ORDER_KINDS, type OrderKind } from "./stream-order.ts";

/** The tiny random test models (test/fixtures/models): real mechanics, meaningless numbers. */
export interface TinyModels {
  kind: "tiny";
}

/** Local GGUFs (`make models`; models/README.md). */
export interface RealModels {
  kind: "real";
  /** Chat GGUF. @default "models/Qwen2.5-7B-Instruct-Q4_K_M.gguf" */
  chat: string;
  /** Embedder GGUF. @default "models/bge-large-en-v1.5-f16.gguf" */
  embedder: string;
  /** GPU use of the llama backend. @default "auto" */
  gpu: "auto" | false | "cuda" | "vulkan" | "metal";
}

/** OpenAI-compatible servers (vLLM, llama.cpp server) for the chat model and, optionally, the embedder. */
export interface ServerModels {
  kind: "server";
  /** Chat servers' base URLs, e.g. ["http://gpu1:8000/v1"]. */
  base_urls: string[];
  /** Served chat model name. @default "Qwen/Qwen2.5-7B-Instruct" */
  model_name: string;
  /** GGUF whose tokenizer builds the prompt ids (config `model.path`, prompt_format tokens). */
  tokenizer: string;
  /** Embedding servers; empty = the local bge GGUF. */
  embedder_urls: string[];
}

/**
 * The simulated engine (docs/METHOD.md "Simulated engine"): a frozen model played by a response model
 * with planted effects, and its hashed-bag embedder; no model file, every report under the SIMULATED
 * ENGINE banner. For trying a study's whole pipeline, and its power, on a world whose effects are known.
 */
export interface SimulatedModels {
  kind: "simulated";
  /** The parameters file (relative to the working folder). @default "configs/simulated-engine.json" */
  parameters: string;
}

export type StudyModels = TinyModels | RealModels | ServerModels | SimulatedModels;

/** The tiny random test models of test/fixtures/models — what a fresh clone can run (the default). */
export function tinyModels(): TinyModels {
  return { kind: "tiny" };
}

/** The simulated engine with the parameters file `parameters` (default configs/simulated-engine.json): planted effects, not measurements. */
export function simulatedModels(opts: Partial<Omit<SimulatedModels, "kind">> = {}): SimulatedModels {
  return { kind: "simulated", parameters: opts.parameters ?? "configs/simulated-engine.json" };
}

/** The real GGUFs of models/ (`make models`), locally through node-llama-cpp. */
export function realModels(opts: Partial<Omit<RealModels, "kind">> = {}): RealModels {
  return { kind: "real", chat: opts.chat ?? "models/Qwen2.5-7B-Instruct-Q4_K_M.gguf", embedder: opts.embedder ?? "models/bge-large-en-v1.5-f16.gguf", gpu: opts.gpu ?? "auto" };
}

/** OpenAI-compatible servers (README "Run on servers"). */
export function server(opts: { base_urls: string[] } & Partial<Omit<ServerModels, "kind" | "base_urls">>): ServerModels {
  return { kind: "server", base_urls: opts.base_urls, model_name: opts.model_name ?? "Qwen/Qwen2.5-7B-Instruct", tokenizer: opts.tokenizer ?? "models/Qwen2.5-7B-Instruct-Q4_K_M.gguf", embedder_urls: opts.embedder_urls ?? [] };
}

const ModelsSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("tiny") }).strict(),
  z.object({ kind: z.literal("simulated"), parameters: z.string().min(1) }).strict(),
  z.object({ kind: z.literal("real"), chat: z.string().min(1), embedder: z.string().min(1), gpu: z.union([z.literal("auto"), z.literal(false), z.enum(["cuda", "vulkan", "metal"])]) }).strict(),
  z.object({ kind: z.literal("server"), base_urls: z.array(z.string().url()).min(1), model_name: z.string().min(1), tokenizer: z.string().min(1), embedder_urls: z.array(z.string().url()) }).strict(),
]);

/** A study name: a folder name and a path segment of runs/studies/ and results/studies/. */
export const STUDY_NAME = /^[a-z0-9][a-z0-9_-]*$/;

/** The bundled real predictions each dataset's initial cache is built from when the study names none. */
export const DEFAULT_PREDICTIONS: Readonly<Record<string, string>> = { spider: "data/predictions/spider_dev__Deepseek-Coder-7B.sql" };

/** Part args an arm changes (JSON values), per role. */
const ArmArgsSchema = z
  .object({
    planner: z.record(z.any()).optional(),
    ranker: z.record(z.any()).optional(),
    writer: z.record(z.any()).optional(),
    /** The method's settings (a peer's factory arguments: top_k, caps, windows; `merit methods` lists them). */
    settings: z.record(z.any()).optional(),
  })
  .strict();

/**
 * An arm: a registered method run under other conditions or with other part args (issue 29 §5) —
 * `{ method: "merit", feedback: "llm_judge" }`, `{ method: "merit", args: { planner: { max_positive: 5 } } }` —
 * or with other settings of a method built from a factory (a peer, issue 37 §1):
 * `{ method: "reasoning_bank", args: { settings: { top_k: 2 } } }`.
 * Its name is a method name of the study (listed in `methods`, compared like any method) and part of
 * every run's identity; its conditions are its runs' config, its args its method's parts.
 */
export const ArmSchema = z
  .object({
    /** The registered method the arm runs (not another arm). */
    method: z.string().min(1),
    /** Feedback regime (lib/methods/feedback.ts): denotation_confirmed/oracle, dbms_only, llm_judge, noisy_oracle, a plugin's. */
    feedback: z.preprocess((v) => (v === "oracle" ? "denotation_confirmed" : v), z.string().regex(/^[a-z][a-z0-9_]{0,39}$/)).optional(),
    /** noisy_oracle's flip probability. */
    feedback_noise: z.number().min(0).max(1).optional(),
    /** K for this arm (the study's otherwise). */
    max_repair_steps: z.number().int().nonnegative().optional(),
    /** Part args that differ from the method's (each must be an arg of that part). */
    args: ArmArgsSchema.optional(),
    /** One line for tables and manifests; default: the method's, with the arm's changes. */
    description: z.string().min(1).optional(),
  })
  .strict();
export type Arm = z.infer<typeof ArmSchema>;

export const StudySchema = z
  .object({
    /** Folder name under studies/, runs/studies/ and results/studies/. */
    name: z.string().regex(STUDY_NAME, "lower-case letters, digits, - and _, starting with a letter or digit"),
    /** Registered dataset names (lib/data/datasets/). */
    datasets: z.array(z.string().min(1)).min(1).default(["spider"]),
    /** Every method the grid runs (the paper's and the study's own), each once. */
    methods: z.array(z.string().min(1)).min(2),
    /** Stream orders (the paper's: 0, 1, 2): seeds of the paper's shuffle. */
    seeds: z.array(z.number().int().nonnegative()).min(1).optional(),
    /**
     * Stream orders, instead of `seeds`: a number is a seed of the paper's shuffle, a name a structured
     * order (METHOD.md §7: by_database, easy_to_hard, hard_to_easy, drift; its seed-0 arrangement),
     * e.g. [0, 1, 2, "by_database"]. Each structured order is run and reported on its own (its runs
     * in RUNS/order-KIND/, its report in OUT/order-KIND/); at least one seed.
     */
    orders: z.array(z.union([z.number().int().nonnegative(), z.enum(ORDER_KINDS).refine((k) => k !== "random", "random is the paper's shuffle: give its seeds as numbers")])).min(1).optional(),
    /**
     * The databases Spider is scored on: `test-suite` (the paper's protocol: a prediction must match on
     * every variant database; `make data-spider`) or `single` (one database per db_id, not the paper's
     * EX). Default: test-suite, except for the tiny test models (single, as `merit demo`). A study
     * whose test-suite databases are absent is refused with this field as the way out.
     */
    databases: z.enum(["test-suite", "single"]).optional(),
    /** The method Table 2 compares with each other method (the paper's reference is merit). */
    reference: z.string().min(1),
    /** Table 2's pairs [a, b], Δ = EX(a) − EX(b); default: [reference, m] for every other method m. */
    comparisons: z.array(z.tuple([z.string().min(1), z.string().min(1)])).min(1).optional(),
    /** Queries per stream (null: the whole dataset). */
    queries: z.number().int().positive().nullable().default(null),
    /** Which queries `queries` keeps (config.ts SubsetSchema). */
    subset: SubsetSchema.optional(),
    /** K, repair generations per initially failed query. */
    max_repair_steps: z.number().int().nonnegative().default(7),
    models: ModelsSchema.default({ kind: "tiny" }),
    /** Plugin files registering the study's methods, parts, datasets (paths relative to the study file). */
    plugins: z.array(z.string().min(1)).default([]),
    /** Per dataset, the predictions file (one SQL per line) the shared initial cache is built from (paths relative to the study file). */
    initial: z.record(z.string().min(1)).default({}),
    /** Named arms: a method plus other conditions or part args (ArmSchema); each arm name must be listed in `methods`. */
    arms: z.record(ArmSchema).default({}),
    /** The study's feedback regime (every run; an arm may set its own): lib/methods/feedback.ts. Default: the oracle's. */
    feedback: z.preprocess((v) => (v === "oracle" ? "denotation_confirmed" : v), z.string().regex(/^[a-z][a-z0-9_]{0,39}$/)).optional(),
    /** noisy_oracle's flip probability for the study's runs. */
    feedback_noise: z.number().min(0).max(1).optional(),
    /** Per dataset, its data folder (METHOD.md §1.1 layout; relative to the study file); default data/<dataset>. */
    data: z.record(z.string().min(1)).default({}),
    /** A folder of prompt templates of the study's own (relative to the study file); default the kit's prompts/. */
    prompts_dir: z.string().min(1).optional(),
    /** The config's retrieval settings for every run (a method's own part args win only where the config is at METHOD.md's value; a conflict is refused). */
    retrieval: z.object({ max_positive: z.number().int().nonnegative().optional(), max_negative: z.number().int().nonnegative().optional(), min_typed_pool: z.number().int().nonnegative().optional(), type_bonus: z.number().nonnegative().optional() }).strict().optional(),
  })
  .strict();

/** A study as its file writes it (defaults optional). */
export type StudyInput = z.input<typeof StudySchema>;
/**
 * A validated study with every default filled in. `dir`: the study file's folder relative to the
 * working folder (set when the file is loaded), against which `data` and `prompts_dir` resolve.
 */
export type Study = Omit<z.infer<typeof StudySchema>, "seeds" | "orders"> & {
  comparisons: [string, string][];
  dir?: string;
  /** Seeds of the paper's shuffle (`seeds`, or the numbers of `orders`; default [0]). */
  seeds: number[];
  /** The structured orders of `orders` (each run at seed 0, reported apart); [] when none. */
  orderKinds: Exclude<OrderKind, "random">[];
};

/** Where the Spider test-suite databases are (configs/spider.json; `make data-spider`). */
export const TEST_SUITE_DATABASES = "data/spider_test_suite/database";

/** The database set a dataset of the study is scored on: null for a dataset with one database per db_id. */
export function studyDatabases(study: Study, dataset: string): "test-suite" | "single" | null {
  if (!datasetNames().includes(dataset) || !datasetAdapter(dataset).testSuiteDatabases) return null;
  return study.databases ?? (study.models.kind === "tiny" ? "single" : "test-suite");
}

/** A stream order of the study: the paper's shuffle over its seeds, or one structured order at seed 0. */
export interface StudyOrder {
  kind: OrderKind;
  seeds: number[];
}

/** The study's stream orders: the paper's shuffle first (its seeds), then each structured order. */
export function studyOrders(study: Study): StudyOrder[] {
  return [{ kind: "random", seeds: study.seeds }, ...study.orderKinds.map((kind): StudyOrder => ({ kind, seeds: [0] }))];
}

/** The words for an order in plans, logs and notes. */
export function orderText(order: StudyOrder): string {
  return order.kind === "random" ? `the paper's shuffle, seed${order.seeds.length === 1 ? "" : "s"} ${order.seeds.join(", ")}` : `${order.kind} (seed ${order.seeds.join(", ")})`;
}

/** Validates a study (shape only; method and dataset names are checked by `checkStudyNames` once its plugins are loaded). */
export function defineStudy(input: StudyInput): Study {
  const parsed = StudySchema.safeParse(input);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    throw new MeritError(`defineStudy: ${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}${parsed.error.issues.length > 1 ? ` (+${parsed.error.issues.length - 1} more)` : ""}; fix the study file (lib/experiment/study.ts lists every field)`);
  }
  const { orders, seeds: givenSeeds, ...rest } = parsed.data;
  if (orders !== undefined && givenSeeds !== undefined) throw new MeritError(`defineStudy: give the stream orders once, as seeds or as orders (orders: [0, 1, 2, "by_database"] holds both)`);
  const seeds = orders === undefined ? (givenSeeds ?? [0]) : orders.filter((o): o is number => typeof o === "number");
  const orderKinds = (orders ?? []).filter((o): o is Exclude<OrderKind, "random"> => typeof o === "string");
  if (seeds.length === 0) throw new MeritError(`defineStudy: orders lists no seed of the paper's shuffle; add one (e.g. orders: [0, ${orderKinds.map((k) => JSON.stringify(k)).join(", ")}]): Tables 1-3 are over the shuffled orders`);
  const kindTwice = orderKinds.find((k, i) => orderKinds.indexOf(k) !== i);
  if (kindTwice !== undefined) throw new MeritError(`defineStudy: orders lists "${kindTwice}" twice; name each order once`);
  const s = { ...rest, seeds, orderKinds };
  const comparisons = s.comparisons ?? s.methods.filter((m) => m !== s.reference).map((m): [string, string] => [s.reference, m]);
  const dup = (xs: readonly (string | number)[]) => xs.find((x, i) => xs.indexOf(x) !== i);
  const twice = dup(s.methods) ?? dup(s.seeds) ?? dup(s.datasets);
  if (twice !== undefined) throw new MeritError(`defineStudy: ${JSON.stringify(twice)} is listed twice; name each method, seed and dataset once`);
  for (const m of [s.reference, ...comparisons.flat()]) {
    if (!s.methods.includes(m)) throw new MeritError(`defineStudy: ${JSON.stringify(m)} is compared but not in methods (${s.methods.join(", ")}); add it to methods`);
  }
  if (s.subset !== undefined && s.queries === null) throw new MeritError(`defineStudy: subset chooses which \`queries\` a stream keeps, but queries is null (every query); set queries: N or drop subset`);
  for (const field of ["initial", "data"] as const) {
    const stray = Object.keys(s[field]).find((d) => !s.datasets.includes(d));
    if (stray !== undefined) throw new MeritError(`defineStudy: ${field} names "${stray}", which is not in datasets (${s.datasets.join(", ")})`);
  }
  const self = comparisons.find(([a, b]) => a === b);
  if (self) throw new MeritError(`defineStudy: the comparison [${self[0]}, ${self[1]}] compares a method with itself`);
  for (const [name, arm] of Object.entries(s.arms)) {
    if (!STUDY_NAME.test(name) || /[.-]/.test(name)) throw new MeritError(`defineStudy: arm name "${name}" must be lower_snake_case (a method name)`);
    if (!s.methods.includes(name)) throw new MeritError(`defineStudy: arm "${name}" is not in methods (${s.methods.join(", ")}); add it to methods to run it`);
    if (arm.method === name || s.arms[arm.method] !== undefined) throw new MeritError(`defineStudy: arm "${name}" runs "${arm.method}", which is ${arm.method === name ? "itself" : "another arm"}; an arm runs a registered method`);
    const changes = Object.keys(arm).filter((k) => k !== "method" && k !== "description");
    if (changes.length === 0) throw new MeritError(`defineStudy: arm "${name}" changes nothing of "${arm.method}" (give feedback, feedback_noise, max_repair_steps or args); list "${arm.method}" in methods instead`);
  }
  return { ...s, comparisons };
}

/** Where a study writes: run directories, the working call cache and initial caches, the report. */
export interface StudyPaths {
  /** runs/studies/NAME (git-ignored). */
  runs: string;
  /** results/studies/NAME. */
  results: string;
}

export function studyPaths(study: Study, overrides: Partial<StudyPaths> = {}): StudyPaths {
  return { runs: overrides.runs ?? join("runs", "studies", study.name), results: overrides.results ?? join("results", "studies", study.name) };
}

/** The grid folder of one dataset: RUNS/<dataset>, each stream in `<method>-s<seed>`. */
export function datasetRunRoot(paths: StudyPaths, dataset: string): string {
  return join(paths.runs, dataset);
}

/** The run root of one dataset under one stream order: RUNS/<dataset> for the paper's shuffle, RUNS/order-<kind>/<dataset> for a structured order (apart, so each report reads one order). */
export function orderRunRoot(paths: StudyPaths, dataset: string, kind: OrderKind): string {
  return kind === "random" ? datasetRunRoot(paths, dataset) : join(paths.runs, `order-${kind}`, dataset);
}

/** The report folder of one stream order: OUT for the paper's shuffle, OUT/order-<kind> for a structured order. */
export function orderResults(paths: StudyPaths, kind: OrderKind): string {
  return kind === "random" ? paths.results : join(paths.results, `order-${kind}`);
}

/** The study's working LLM call cache (one per study, shared by its datasets and methods). */
export function studyCallCache(paths: StudyPaths): string {
  return join(paths.runs, "llm-call-cache.sqlite");
}

/**
 * The predictions file of a dataset's initial cache, or null when none is known (then the model
 * builds it): the study's `initial` entry resolved against the study file's folder (`file`), else the
 * bundled default (a path of the kit, relative to the working folder like a config's paths).
 */
export function initialPredictions(study: Study, dataset: string, file: string): string | null {
  const given = study.initial[dataset];
  return given !== undefined ? resolve(dirname(file), given) : (DEFAULT_PREDICTIONS[dataset] ?? null);
}

/** A path the study file gives (relative to it), as a path relative to the working folder (configs hold such paths). */
export function studyPath(study: Study, given: string): string {
  const path = resolve(study.dir ?? ".", given);
  const rel = relative(process.cwd(), path);
  return rel === "" ? "." : rel.split(sep).join("/");
}

/** The config fields an arm sets (its conditions), for the runs of `method` ({} for a method that is not an arm). */
export function armConditions(study: Study, method: string): { feedback_regime?: string; feedback_noise?: number; max_repair_steps?: number } {
  const arm = study.arms[method];
  if (arm === undefined) return {};
  return {
    ...(arm.feedback !== undefined ? { feedback_regime: arm.feedback } : {}),
    ...(arm.feedback_noise !== undefined ? { feedback_noise: arm.feedback_noise } : {}),
    ...(arm.max_repair_steps !== undefined ? { max_repair_steps: arm.max_repair_steps } : {}),
  };
}

/** The config fields the study's arms vary (what `merit report --conditions` lets differ). */
export function studyConditions(study: Study): ("feedback_regime" | "feedback_noise" | "max_repair_steps")[] {
  const fields = new Set(study.methods.flatMap((m) => Object.keys(armConditions(study, m))));
  return (["feedback_regime", "feedback_noise", "max_repair_steps"] as const).filter((f) => fields.has(f));
}

/** Arms registered in this process, by name: where each came from and its definition (registered twice from one place: once). */
const REGISTERED_ARMS = new Map<string, string>();

/**
 * Registers each arm of the study as a method (after the study's plugins are loaded): the arm's
 * method's definition — parts, hooks — with the arm's part args laid over the method's, under the
 * arm's name. An arg the part does not have, or a name already taken, fails with one line.
 */
export function registerStudyArms(study: Study): void {
  for (const [name, arm] of Object.entries(study.arms)) registerArm(name, arm, `study ${study.name}`, armConditions(study, name));
}

/**
 * Registers one arm as a method named `name`: `arm.method`'s definition with `arm.args` laid over its
 * parts; `conditions` (the config fields its runs set) go into its description. `origin` names where
 * the arm is defined, in errors ("study NAME", "merit grid --arm"). Registering the same arm from the
 * same origin again is a no-op; any other clash with a registered name fails with one line.
 */
export function registerArm(name: string, arm: Arm, origin: string, conditions: Record<string, string | number> = {}): void {
  const key = canonicalJson({ origin, arm } as unknown as JsonValue);
  if (REGISTERED_ARMS.get(name) === key) return;
  if (isMethodName(name)) throw new MeritError(`${origin}: arm "${name}" has the name of a registered method; name the arm otherwise`);
  let def = methodDefinition(arm.method);
  const settings = arm.args?.settings;
  if (settings !== undefined) {
    if (def.withSettings === undefined) throw new MeritError(`${origin}: arm "${name}" gives settings but method "${arm.method}" has none; its part args go under args.planner, args.ranker, args.writer`);
    try {
      def = def.withSettings(settings);
    } catch (error) {
      if (error instanceof MeritError) throw new MeritError(`${origin}: arm "${name}": ${error.message}`);
      throw error;
    }
  }
  const parts = { ...def.parts };
  for (const role of ["planner", "ranker", "writer"] as const) {
    const args = arm.args?.[role];
    if (args === undefined) continue;
    const part = parts[role];
    if (part === undefined) throw new MeritError(`${origin}: arm "${name}" gives ${role} args but method "${arm.method}" has no ${role}`);
    parts[role] = { name: part.name, args: { ...(part.args ?? {}), ...(args as Record<string, JsonValue>) } };
  }
  const changed = [
    ...Object.entries(conditions).map(([k, v]) => `${k} ${v}`),
    ...Object.entries(arm.args ?? {}).flatMap(([role, a]) => Object.entries(a ?? {}).map(([k, v]) => `${role} ${k}=${canonicalJson(v as JsonValue)}`)),
  ];
  try {
    registerMethod({ ...def, name, armOf: arm.method, description: arm.description ?? `${def.description} [arm of ${arm.method}: ${changed.join(", ")}]`, parts });
  } catch (error) {
    if (error instanceof MeritError) throw new MeritError(`${origin}: arm "${name}": ${error.message}`);
    throw error;
  }
  REGISTERED_ARMS.set(name, key);
}

/** The kit's regimes that do not read `feedback_noise` (a plugin's regime may: its noise is a change). */
const NOISELESS_REGIMES = ["denotation_confirmed", "dbms_only", "llm_judge"];

/** What a run of `method` in the study is: its parts with every arg, its feedback regime (and noise, where the regime reads it) and K. */
function runIdentity(study: Study, method: string, conditions: ReturnType<typeof armConditions>): string {
  const regime = conditions.feedback_regime ?? study.feedback ?? "denotation_confirmed";
  const noise = NOISELESS_REGIMES.includes(regime) ? null : (conditions.feedback_noise ?? study.feedback_noise ?? DEFAULT_FEEDBACK_NOISE);
  return canonicalJson({ parts: getMethod(method).parts, regime, noise, k: conditions.max_repair_steps ?? study.max_repair_steps } as unknown as JsonValue);
}

/**
 * The study's arms measure something (after they are registered; `merit study plan` and `run` call
 * it before any compute): each arm's feedback regime exists, each arm differs from the method it runs
 * (a change equal to the method's own value, or a noise its regime does not read, is none), and no
 * two arms are the same run. One line naming the arm and the fix.
 */
export function checkStudyArms(study: Study): void {
  if (study.feedback !== undefined) {
    try {
      getFeedback(study.feedback);
    } catch (error) {
      throw new MeritError(`study ${study.name}: feedback: ${(error as Error).message}`);
    }
  }
  const seen = new Map<string, string>();
  for (const [name, arm] of Object.entries(study.arms)) {
    const conditions = armConditions(study, name);
    const regime = conditions.feedback_regime ?? study.feedback ?? "denotation_confirmed";
    try {
      getFeedback(regime);
    } catch (error) {
      throw new MeritError(`study ${study.name}: arm "${name}": ${(error as Error).message}`);
    }
    if (arm.feedback_noise !== undefined && NOISELESS_REGIMES.includes(regime)) {
      throw new MeritError(`study ${study.name}: arm "${name}" sets feedback_noise, which feedback regime ${regime} does not read (only noisy_oracle and plugins' regimes do); drop it or set feedback: "noisy_oracle"`);
    }
    const identity = runIdentity(study, name, conditions);
    if (identity === runIdentity(study, arm.method, {})) {
      throw new MeritError(`study ${study.name}: arm "${name}" runs exactly what "${arm.method}" runs (each change it gives is already "${arm.method}"'s in this study); change something, or list "${arm.method}" in methods instead`);
    }
    const twin = seen.get(identity);
    if (twin !== undefined) throw new MeritError(`study ${study.name}: arms "${twin}" and "${name}" are the same run (same method, parts, feedback and K); their Δ would be 0 by construction: drop one`);
    seen.set(identity, name);
  }
}

/** The experiment config of one dataset of the study: the kit's defaults, the study's K, subset and models, and the arm's conditions when `method` is an arm. */
export function studyConfig(study: Study, dataset: string, paths: StudyPaths, method?: string, order: OrderKind = "random"): ExperimentConfig {
  const m = study.models;
  const models =
    m.kind === "tiny"
      ? {
          model: { backend: "llama", path: TINY_CHAT, gpu: false },
          embedder: { backend: "llama", path: TINY_EMBEDDER },
          // the random model never stops by itself; shorter outputs keep the smoke run inside minutes (quick-config.ts)
          decoding: { max_output_tokens: 64 },
        }
      : m.kind === "simulated"
        ? { model: { backend: "simulated", simulation: m.parameters }, embedder: { backend: "simulated" } }
        : m.kind === "real"
        ? { model: { backend: "llama", path: m.chat, gpu: m.gpu }, embedder: { backend: "llama", path: m.embedder } }
        : {
            model: { backend: "openai", base_urls: m.base_urls, model_name: m.model_name, path: m.tokenizer },
            embedder: m.embedder_urls.length > 0 ? { backend: "openai", base_urls: m.embedder_urls } : { backend: "llama" },
          };
  return parseConfig(
    {
      dataset,
      data_dir: study.data[dataset] !== undefined ? studyPath(study, study.data[dataset]) : join("data", dataset),
      ...(study.prompts_dir !== undefined ? { prompts_dir: studyPath(study, study.prompts_dir) } : {}),
      ...(study.feedback !== undefined ? { feedback_regime: study.feedback } : {}),
      ...(study.feedback_noise !== undefined ? { feedback_noise: study.feedback_noise } : {}),
      ...(study.retrieval !== undefined ? { retrieval: study.retrieval } : {}),
      ...(studyDatabases(study, dataset) === "test-suite" ? { test_suite_databases: TEST_SUITE_DATABASES } : {}),
      ...(order !== "random" ? { order } : {}),
      initial_cache: join(paths.runs, "initial", `${dataset}.json`),
      call_cache: studyCallCache(paths),
      protocol: "merit",
      max_repair_steps: study.max_repair_steps,
      ...(study.subset ? { subset: study.subset } : {}),
      ...models,
      ...(method === undefined ? {} : armConditions(study, method)),
    },
    `study ${study.name} (${dataset})`,
  );
}

/**
 * Method and dataset names exist (after the study's plugins are loaded): the nearest name otherwise.
 * A method the study runs that a file outside the kit registered without being one of the study's
 * plugins (the study file imported it, say) is refused: its runs could not record that file.
 */
export function checkStudyNames(study: Study): void {
  for (const m of study.methods) {
    getMethod(m);
    const caller = study.arms[m] === undefined ? registrationCaller("method", m) : null;
    if (caller !== null) throw new MeritError(`study ${study.name}: method "${m}" is registered by ${relative(process.cwd(), caller).split(sep).join("/")}, which the study's plugins do not list, so its runs could not record it; add that file to plugins`);
  }
  const known = datasetNames();
  for (const d of study.datasets) if (!known.includes(d)) throw new MeritError(`study ${study.name}: unknown dataset "${d}"; registered: ${known.join(", ")}`);
}

/** The study's plugin files, resolved against the study file's folder; an error names the study file's `plugins` entry. */
export function studyPluginFiles(study: Study, file: string): PluginSource[] {
  return study.plugins.map((p) => ({ file: resolve(dirname(file), p), label: `${file}: plugins entry "${p}"` }));
}

/**
 * Every file the study file names (`plugins`, `initial`; relative to the study file) exists, and so
 * does each bundled default predictions file it relies on: the first missing one fails with one line
 * naming the study field, the path it resolved to, and the fix.
 */
export function checkStudyFiles(study: Study, file: string): void {
  const isFile = (path: string) => existsSync(path) && statSync(path).isFile();
  for (const p of study.plugins) {
    const path = resolve(dirname(file), p);
    if (!isFile(path)) throw new InputFileError(file, `plugins entry "${p}" is not a file (${path})`, "give the plugin's path relative to the study file");
  }
  const isDir = (path: string) => existsSync(path) && statSync(path).isDirectory();
  for (const [dataset, given] of Object.entries(study.data)) {
    const path = resolve(dirname(file), given);
    if (!isDir(path)) throw new InputFileError(file, `data.${dataset} "${given}" is not a folder (${path})`, "give the dataset folder's path relative to the study file");
  }
  if (study.prompts_dir !== undefined && !isDir(resolve(dirname(file), study.prompts_dir))) {
    throw new InputFileError(file, `prompts_dir "${study.prompts_dir}" is not a folder (${resolve(dirname(file), study.prompts_dir)})`, "give the template folder's path relative to the study file (a copy of prompts/)");
  }
  for (const dataset of study.datasets) {
    const path = initialPredictions(study, dataset, file);
    if (path === null || isFile(path)) continue;
    if (study.initial[dataset] !== undefined) throw new InputFileError(file, `initial.${dataset} "${study.initial[dataset]}" is not a file (${path})`, "give the predictions file's path relative to the study file");
    throw new InputFileError(file, `the bundled predictions of ${dataset}, ${path}, are not here`, `run merit from the kit's folder, or set initial: { ${dataset}: "FILE.sql" } (relative to the study file)`);
  }
}

/** Imports a study file and returns its validated default export. */
export async function loadStudyFile(file: string): Promise<Study> {
  const absolute = resolve(file);
  if (!existsSync(absolute)) throw new InputFileError(file, "does not exist", "pass the study.ts written by `merit study new NAME` (studies/NAME/study.ts)");
  let mod: { default?: unknown };
  try {
    mod = (await import(pathToFileURL(absolute).href)) as { default?: unknown };
  } catch (error) {
    // A refusal of the kit's own (defineStudy's check of a field) already names the field and the fix.
    if (error instanceof MeritError) throw new MeritError(`${file}: ${error.message.split("\n")[0]}`);
    throw new InputFileError(file, `failed to load (${importErrorText(error)})`, "fix the study file");
  }
  const study = mod.default as Partial<Study> | undefined;
  if (study === undefined || typeof study !== "object" || !Array.isArray(study.comparisons)) {
    throw new InputFileError(file, "has no `export default defineStudy({...})`", "export the study as the file's default (see studies/template/study.ts)");
  }
  if (Object.keys((study as Study).arms ?? {}).length > 0) await checkArmNamesOnce(absolute, file);
  // `data` and `prompts_dir` resolve against the study file's folder, like `plugins` and `initial`.
  return { ...(study as Study), dir: relative(process.cwd(), dirname(absolute)) || "." };
}

/**
 * An object literal keeps the last of two properties with one name, so two arms named alike reach
 * `defineStudy` as one: the study file's text is read (TypeScript's parser, a dev dependency of the
 * kit; without it the check is skipped) and an `arms` object naming an arm twice is refused.
 */
async function checkArmNamesOnce(absolute: string, file: string): Promise<void> {
  let ts: typeof import("typescript");
  try {
    ts = (await import("typescript")).default;
  } catch {
    return;
  }
  const source = ts.createSourceFile(absolute, readFileSync(absolute, "utf8"), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const visit = (node: import("typescript").Node): void => {
    if (ts.isPropertyAssignment(node) && node.name.getText(source).replace(/^["']|["']$/g, "") === "arms" && ts.isObjectLiteralExpression(node.initializer)) {
      const lines = new Map<string, number>();
      for (const p of node.initializer.properties) {
        if (p.name === undefined) continue;
        const name = ts.isStringLiteral(p.name) || ts.isIdentifier(p.name) || ts.isNumericLiteral(p.name) ? p.name.text : p.name.getText(source);
        const line = source.getLineAndCharacterOfPosition(p.getStart(source)).line + 1;
        const first = lines.get(name);
        if (first !== undefined) throw new InputFileError(file, `arms names "${name}" twice (lines ${first} and ${line}); the second would silently replace the first`, "give each arm its own name (and list it in methods)");
        lines.set(name, line);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}

/** The subset rule as a sentence: which `queries` a stream keeps. */
export function subsetText(study: Study): string {
  if (study.queries === null) return "every query of the dataset";
  const rule: SubsetRule | undefined = study.subset;
  if (rule?.rule === "initially_failed") {
    const correct = Math.min(rule.initially_correct, study.queries);
    return `${study.queries} queries: up to ${study.queries - correct} initially failed + ${correct} initially correct (subset rule initially_failed)`;
  }
  return `the first ${study.queries} queries of the seed-0 stream`;
}
